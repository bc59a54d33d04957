package smb1

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// Identity is what the server told about itself in its NTLM CHALLENGE,
// once SessionSetup got that far; ok is false before.
func (c *Conn) Identity() (id ntlm.Identity, ok bool) {
	if c.id == nil {
		return ntlm.Identity{}, false
	}
	return *c.id, true
}

// Guest reports whether the server logged the session on as guest.
func (c *Conn) Guest() bool { return c.guest }

// SessionSetup logs on with NTLM inside SESSION_SETUP_ANDX (extended
// security). hold, when not nil, is called right before the AUTHENTICATE
// — the only message that can fail a logon — leaves, when Identity already
// tells what the server said; an error from it is returned as it is, and
// the AUTHENTICATE is not sent. A refused logon gives an error wrapping the
// server's ntstatus.Status.
func (c *Conn) SessionSetup(ctx context.Context, cr ntlm.Credentials, hold func() error) error {
	if !c.neg.ExtendedSec {
		return fmt.Errorf("SMB1 session setup: the server does not offer extended security (NTLMSSP): %w", errSMB1NoExtSec)
	}
	init := ntlm.SPNEGOInit(ntlm.NegotiateSMB1())
	resp, rw, rd, err := c.call(ctx, cmdSessionSetup, sessionSetupWords(len(init)), sessionSetupData(init), false)
	if err != nil {
		return fmt.Errorf("SMB1 session setup (NTLM negotiate): %w", err)
	}
	blob, err := sessionSetupBlob(rw, rd)
	if err != nil {
		return err
	}
	ch, err := ntlm.ParseChallenge(blob)
	if err != nil {
		return err
	}
	if full, err := ntlm.ParseIdentity(blob); err == nil {
		c.id = &full
	}
	c.uid = binary.LittleEndian.Uint16(resp[28:])
	if hold != nil {
		if err := hold(); err != nil {
			return err
		}
	}
	var cc [8]byte
	rand.Read(cc[:])
	auth, sessionKey := ntlm.Authenticate(ch, cr, cc, time.Now())
	tok := ntlm.SPNEGOResp(auth)
	resp, rw, _, err = c.call(ctx, cmdSessionSetup, sessionSetupWords(len(tok)), sessionSetupData(tok), false)
	if err != nil {
		return err
	}
	if statusOf(resp) != ntstatus.Success {
		return fmt.Errorf("SMB1 session setup: %w", statusOf(resp))
	}
	if len(rw) >= 6 {
		c.guest = binary.LittleEndian.Uint16(rw[4:])&0x0001 != 0
	}
	if c.neg.SigningRequired() && sessionKey != nil && !c.guest {
		// The final session setup request was number 0 and its answer
		// 1: the next request is number 2.
		c.signKey, c.seq = sessionKey, 2
	}
	return nil
}

var errSMB1NoExtSec = errors.New("no extended security")

func sessionSetupWords(blobLen int) []byte {
	b := []byte{0xff, 0, 0, 0}                     // no AndX
	b = binary.LittleEndian.AppendUint16(b, 16644) // MaxBufferSize
	b = binary.LittleEndian.AppendUint16(b, 2)     // MaxMpxCount
	b = binary.LittleEndian.AppendUint16(b, 1)     // VcNumber
	b = binary.LittleEndian.AppendUint32(b, 0)     // SessionKey
	b = binary.LittleEndian.AppendUint16(b, uint16(blobLen))
	b = binary.LittleEndian.AppendUint32(b, 0)
	return binary.LittleEndian.AppendUint32(b, 0x800000d4) // extended security, NT status, Unicode, large files, NT SMBs
}

func sessionSetupData(blob []byte) []byte {
	d := append([]byte{}, blob...)
	// 32 header + 1 + 24 words + 2 count = 59: the strings after the blob
	// are aligned to 2 from the header start.
	if (59+len(d))%2 == 1 {
		d = append(d, 0)
	}
	d = append(d, smbwire.UTF16Z("Unix")...)
	return append(d, smbwire.UTF16Z("scanwarden")...)
}

// sessionSetupBlob takes the security blob out of a session setup answer.
func sessionSetupBlob(words, data []byte) ([]byte, error) {
	if len(words) < 8 {
		return nil, fmt.Errorf("SMB1 session setup response: %d parameter bytes", len(words))
	}
	n := int(binary.LittleEndian.Uint16(words[6:]))
	if n > len(data) {
		return nil, fmt.Errorf("SMB1 session setup response: security blob of %d bytes overruns %d", n, len(data))
	}
	return data[:n], nil
}

// TreeConnect connects \\host\share.
func (c *Conn) TreeConnect(ctx context.Context, host, share string) error {
	w := []byte{0xff, 0, 0, 0}
	w = binary.LittleEndian.AppendUint16(w, 0) // flags
	w = binary.LittleEndian.AppendUint16(w, 1) // password length
	// 32 + 1 + 8 + 2 + 1 password byte = 44: the path is aligned.
	d := []byte{0}
	d = append(d, smbwire.UTF16Z(`\\`+strings.ToUpper(host)+`\`+share)...)
	d = append(d, "?????\x00"...)
	resp, _, _, err := c.call(ctx, cmdTreeConnect, w, d, false)
	if err != nil {
		return err
	}
	c.tid = binary.LittleEndian.Uint16(resp[24:])
	return nil
}

// Logoff disconnects the tree and logs off (bounded), then closes.
func (c *Conn) Logoff() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if c.tid != 0 && c.tid != 0xffff {
		c.call(ctx, cmdTreeDisconnect, nil, nil, false)
	}
	if c.uid != 0 {
		c.call(ctx, cmdLogoff, []byte{0xff, 0, 0, 0}, nil, false)
	}
	c.conn.Close()
}
