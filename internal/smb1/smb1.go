// Package smb1 is just enough of SMB1 (NT LM 0.12) [MS-CIFS, MS-SMB] to
// replay what an SMB1-only MFP does with a scan destination: negotiate, an
// NTLM logon through SESSION_SETUP_ANDX with extended security (signed
// afterwards when the server requires it), tree connect, opening each
// folder, creating, writing, reading back, renaming, listing, closing and
// deleting a file, logging off. The SMB library smbcheck uses speaks no
// SMB1, and driving smbclient would hide the exact NT status, the moment
// before the AUTHENTICATE and the NTLM workstation behind a text interface.
//
// It knows messages, not causes: a server's refusal comes back as its
// ntstatus.Status (wrapped with the operation); what that means for a scan
// destination is smbcheck's business. Every length and offset a server
// sends is checked against the message; a server frame is at most
// smbwire.MaxFrame bytes.
package smb1

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// Dialect is the one SMB1 dialect offered, as an SMB1-only MFP offers it.
const Dialect = "NT LM 0.12"

// SMB1 commands used by the replay.
const (
	cmdClose          = 0x04
	cmdFlush          = 0x05
	cmdDelete         = 0x06
	cmdRename         = 0x07
	cmdTrans2         = 0x32
	cmdTreeDisconnect = 0x71
	cmdNegotiate      = 0x72
	cmdSessionSetup   = 0x73
	cmdLogoff         = 0x74
	cmdTreeConnect    = 0x75
	cmdReadAndX       = 0x2e
	cmdWriteAndX      = 0x2f
	cmdNTCreate       = 0xa2
)

// Conn is one SMB1 connection with at most one session and one tree.
// It is not safe for concurrent use.
type Conn struct {
	conn    net.Conn
	uid     uint16
	tid     uint16
	mid     uint16
	maxBuf  int  // the server's MaxBufferSize
	guest   bool // the session was logged on as guest
	neg     NegotiateResponse
	id      *ntlm.Identity // what the server told in its CHALLENGE
	timeout time.Duration  // per request when ctx has no deadline
	// signKey is set once the session signs (the server requires it):
	// every request then carries a MAC with sequence number seq.
	signKey []byte
	seq     uint32
}

// NegotiateResponse is the part of the server's NEGOTIATE answer the
// replay uses.
type NegotiateResponse struct {
	Status       uint32
	DialectIndex int // -1: no dialect accepted
	SecurityMode byte
	MaxBuffer    uint32
	Capabilities uint32
	ExtendedSec  bool
	Challenge    []byte // non-extended security only
	Blob         []byte // extended security: the SPNEGO init token (may be empty)
}

const capExtendedSecurity = 0x80000000

// parseNegotiateResponse decodes an NT LM 0.12 NEGOTIATE response.
func parseNegotiateResponse(b []byte) (NegotiateResponse, error) {
	var n NegotiateResponse
	words, data, err := parse(b, cmdNegotiate)
	if err != nil {
		return n, fmt.Errorf("SMB1 negotiate response: %w", err)
	}
	n.Status = binary.LittleEndian.Uint32(b[5:])
	n.DialectIndex = -1
	if len(words) < 2 {
		return n, nil
	}
	if idx := binary.LittleEndian.Uint16(words); idx != 0xffff {
		n.DialectIndex = int(idx)
	}
	if n.DialectIndex < 0 {
		return n, nil
	}
	if len(words) < 34 {
		return n, fmt.Errorf("SMB1 negotiate response: %d parameter bytes, want 34 for NT LM 0.12", len(words))
	}
	n.SecurityMode = words[2]
	n.MaxBuffer = binary.LittleEndian.Uint32(words[7:])
	n.Capabilities = binary.LittleEndian.Uint32(words[19:])
	n.ExtendedSec = n.Capabilities&capExtendedSecurity != 0
	chLen := int(words[33])
	if n.ExtendedSec {
		if len(data) < 16 {
			return n, errors.New("SMB1 negotiate response: no server GUID")
		}
		n.Blob = data[16:]
	} else {
		if chLen > len(data) {
			return n, fmt.Errorf("SMB1 negotiate response: challenge of %d bytes overruns %d", chLen, len(data))
		}
		n.Challenge = data[:chLen]
	}
	return n, nil
}

// parse checks an SMB1 response's header and command and returns its
// parameter words and data bytes.
func parse(b []byte, cmd byte) (words, data []byte, err error) {
	if len(b) < 35 || string(b[:4]) != "\xffSMB" {
		return nil, nil, fmt.Errorf("%d bytes, not an SMB1 message", len(b))
	}
	if b[4] != cmd {
		return nil, nil, fmt.Errorf("command 0x%02x, want 0x%02x", b[4], cmd)
	}
	wc := int(b[32])
	if 33+2*wc+2 > len(b) {
		return nil, nil, fmt.Errorf("word count %d overruns the %d-byte message", wc, len(b))
	}
	words = b[33 : 33+2*wc]
	bc := int(binary.LittleEndian.Uint16(b[33+2*wc:]))
	start := 33 + 2*wc + 2
	if start+bc > len(b) {
		return nil, nil, fmt.Errorf("byte count %d overruns the %d-byte message", bc, len(b))
	}
	return words, b[start : start+bc], nil
}

func statusOf(b []byte) ntstatus.Status { return ntstatus.Status(binary.LittleEndian.Uint32(b[5:])) }

// request builds a request of cmd with parameter words and data bytes.
// Data that must be 2-aligned from the header start (Unicode strings) is
// given with align set; the pad byte is added here.
func (c *Conn) request(cmd byte, words []byte, data []byte, align bool) []byte {
	h := smbwire.SMB1Header(cmd)
	binary.LittleEndian.PutUint16(h[24:], c.tid)
	binary.LittleEndian.PutUint16(h[28:], c.uid)
	c.mid++
	binary.LittleEndian.PutUint16(h[30:], c.mid)
	b := append(h, byte(len(words)/2))
	b = append(b, words...)
	if align && (len(b)+2)%2 == 1 {
		data = append([]byte{0}, data...)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(data)))
	b = append(b, data...)
	if c.signKey != nil {
		sign(b, c.signKey, c.seq)
		c.seq += 2 // the answer takes the next number
	}
	return b
}

// sign puts the MAC of an SMB1 message in its security signature
// field: the first 8 bytes of MD5(key, message with the sequence number in
// that field) [MS-SMB 3.1.4.1].
func sign(b, key []byte, seq uint32) {
	binary.LittleEndian.PutUint16(b[10:], binary.LittleEndian.Uint16(b[10:])|0x0004)
	clear(b[14:22])
	binary.LittleEndian.PutUint32(b[14:], seq)
	h := md5.New()
	h.Write(key)
	h.Write(b)
	copy(b[14:22], h.Sum(nil)[:8])
}

// roundTrip sends msg and reads the answer to it, within ctx.
func (c *Conn) roundTrip(ctx context.Context, msg []byte) ([]byte, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(c.timeout)
	}
	c.conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := smbwire.WriteFrame(c.conn, msg); err != nil {
		return nil, err
	}
	mid := binary.LittleEndian.Uint16(msg[30:])
	for range 16 {
		resp, err := smbwire.ReadFrame(c.conn)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %w", err, ctx.Err())
			}
			return nil, err
		}
		if len(resp) < 32 || string(resp[:4]) != "\xffSMB" {
			return nil, fmt.Errorf("answer is not SMB1 (% x)", resp[:min(len(resp), 8)])
		}
		if binary.LittleEndian.Uint16(resp[30:]) != mid || resp[4] != msg[4] {
			continue // an oplock break or a late answer: not ours
		}
		return resp, nil
	}
	return nil, errors.New("no answer to the request among 16 server messages")
}

// call sends a request and returns its words and data when the status is
// success (or MORE_PROCESSING_REQUIRED); otherwise the status as error.
func (c *Conn) call(ctx context.Context, cmd byte, words, data []byte, align bool) (resp, rw, rd []byte, err error) {
	resp, err = c.roundTrip(ctx, c.request(cmd, words, data, align))
	if err != nil {
		return nil, nil, nil, err
	}
	st := statusOf(resp)
	if st != ntstatus.Success && st != ntstatus.MoreProcessingRequired {
		return resp, nil, nil, st
	}
	rw, rd, err = parse(resp, cmd)
	if err != nil {
		return resp, nil, nil, fmt.Errorf("SMB1 answer to 0x%02x: %w", cmd, err)
	}
	return resp, rw, rd, nil
}

// NewConn is an SMB1 client over conn, already connected (and for TCP 139
// with its NetBIOS session set up). timeout bounds each request whose
// context has no deadline.
func NewConn(conn net.Conn, timeout time.Duration) *Conn {
	return &Conn{conn: conn, tid: 0xffff, timeout: timeout}
}

// Negotiate offers NT LM 0.12 alone, as an SMB1-only MFP does; a server
// that refuses it gives an error wrapping smbwire.ErrNoSMB1.
func (c *Conn) Negotiate(ctx context.Context) error {
	resp, err := c.roundTrip(ctx, smbwire.SMB1NegotiateRequest([]string{Dialect}))
	if err != nil {
		if smbwire.IsPeerClose(err) {
			return fmt.Errorf("SMB1 negotiate: server hung up: %w", smbwire.ErrNoSMB1)
		}
		return fmt.Errorf("SMB1 negotiate: %w", err)
	}
	n, err := parseNegotiateResponse(resp)
	if err != nil {
		return err
	}
	if n.Status != 0 || n.DialectIndex != 0 {
		return fmt.Errorf("SMB1 negotiate: status 0x%08X, dialect index %d: %w", n.Status, n.DialectIndex, smbwire.ErrNoSMB1)
	}
	c.neg = n
	c.maxBuf = int(n.MaxBuffer)
	return nil
}

// Negotiated is the server's NEGOTIATE answer (zero before Negotiate
// succeeded).
func (c *Conn) Negotiated() NegotiateResponse { return c.neg }

// SigningEnabled reports whether the server offers SMB1 signing.
func (n NegotiateResponse) SigningEnabled() bool {
	return n.SecurityMode&smbwire.SMB1SigningEnabled != 0
}

// SigningRequired reports whether the server requires SMB1 signing.
func (n NegotiateResponse) SigningRequired() bool {
	return n.SecurityMode&smbwire.SMB1SigningRequired != 0
}

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

// Access masks, dispositions and options of NT_CREATE_ANDX.
const (
	accessReadAttributes = 0x00000080
	accessDelete         = 0x00010000
	genericWrite         = 0x40000000
	genericRead          = 0x80000000
	dispositionOpen      = 1
	dispositionCreate    = 2
	optionNonDirectory   = 0x00000040
	optionDeleteOnClose  = 0x00001000
)

// handle is an open file or folder.
type handle struct {
	fid   uint16
	dir   bool
	size  int64
	mtime time.Time
}

func (c *Conn) ntCreate(ctx context.Context, path string, access, disposition, options uint32) (handle, error) {
	name := ntlm.EncodeUTF16(path)
	w := []byte{0xff, 0, 0, 0, 0}
	w = binary.LittleEndian.AppendUint16(w, uint16(len(name)))
	w = binary.LittleEndian.AppendUint32(w, 0) // flags: no oplock
	w = binary.LittleEndian.AppendUint32(w, 0) // root FID
	w = binary.LittleEndian.AppendUint32(w, access)
	w = binary.LittleEndian.AppendUint64(w, 0)    // allocation size
	w = binary.LittleEndian.AppendUint32(w, 0x80) // FILE_ATTRIBUTE_NORMAL
	w = binary.LittleEndian.AppendUint32(w, 7)    // share read, write, delete
	w = binary.LittleEndian.AppendUint32(w, disposition)
	w = binary.LittleEndian.AppendUint32(w, options)
	w = binary.LittleEndian.AppendUint32(w, 2) // impersonation
	w = append(w, 0)                           // security flags
	_, rw, _, err := c.call(ctx, cmdNTCreate, w, append(name, 0, 0), true)
	if err != nil {
		return handle{}, err
	}
	if len(rw) < 68 {
		return handle{}, fmt.Errorf("SMB1 create response: %d parameter bytes", len(rw))
	}
	o := handle{fid: binary.LittleEndian.Uint16(rw[5:]), dir: rw[67] != 0,
		size: int64(binary.LittleEndian.Uint64(rw[55:]))}
	if ft := binary.LittleEndian.Uint64(rw[27:]); ft > 116444736000000000 {
		o.mtime = time.Unix(0, int64(ft-116444736000000000)*100)
	}
	return o, nil
}

func (c *Conn) close(ctx context.Context, fid uint16) error {
	w := binary.LittleEndian.AppendUint16(nil, fid)
	w = binary.LittleEndian.AppendUint32(w, 0xffffffff)
	_, _, _, err := c.call(ctx, cmdClose, w, nil, false)
	return err
}

// ioChunk is the largest read or write the replay sends in one request.
func (c *Conn) ioChunk() int {
	n := c.maxBuf - 128
	if n > 60<<10 {
		n = 60 << 10
	}
	if n < 512 {
		n = 512
	}
	return n
}

func (c *Conn) write(ctx context.Context, fid uint16, off int64, p []byte) (int, error) {
	done := 0
	for done < len(p) {
		chunk := p[done:min(len(p), done+c.ioChunk())]
		w := []byte{0xff, 0, 0, 0}
		w = binary.LittleEndian.AppendUint16(w, fid)
		w = binary.LittleEndian.AppendUint32(w, uint32(off+int64(done)))
		w = binary.LittleEndian.AppendUint32(w, 0) // timeout
		w = binary.LittleEndian.AppendUint16(w, 0) // write mode
		w = binary.LittleEndian.AppendUint16(w, 0) // remaining
		w = binary.LittleEndian.AppendUint16(w, uint16(len(chunk)>>16))
		w = binary.LittleEndian.AppendUint16(w, uint16(len(chunk)))
		w = binary.LittleEndian.AppendUint16(w, 64) // data offset: 32+1+28+2+1 pad
		w = binary.LittleEndian.AppendUint32(w, uint32((off+int64(done))>>32))
		_, rw, _, err := c.call(ctx, cmdWriteAndX, w, append([]byte{0}, chunk...), false)
		if err != nil {
			return done, err
		}
		if len(rw) < 10 {
			return done, fmt.Errorf("SMB1 write response: %d parameter bytes", len(rw))
		}
		n := int(binary.LittleEndian.Uint16(rw[4:])) | int(binary.LittleEndian.Uint16(rw[8:]))<<16
		if n <= 0 || n > len(chunk) {
			return done, fmt.Errorf("SMB1 write: server took %d of %d bytes", n, len(chunk))
		}
		done += n
	}
	return done, nil
}

func (c *Conn) read(ctx context.Context, fid uint16, off int64, p []byte) (int, error) {
	done := 0
	for done < len(p) {
		want := min(len(p)-done, c.ioChunk())
		w := []byte{0xff, 0, 0, 0}
		w = binary.LittleEndian.AppendUint16(w, fid)
		w = binary.LittleEndian.AppendUint32(w, uint32(off+int64(done)))
		w = binary.LittleEndian.AppendUint16(w, uint16(want))
		w = binary.LittleEndian.AppendUint16(w, 0)
		w = binary.LittleEndian.AppendUint32(w, 0)
		w = binary.LittleEndian.AppendUint16(w, 0)
		w = binary.LittleEndian.AppendUint32(w, uint32((off+int64(done))>>32))
		resp, rw, _, err := c.call(ctx, cmdReadAndX, w, nil, false)
		if err != nil {
			return done, err
		}
		data, err := readAndXData(resp, rw)
		if err != nil {
			return done, err
		}
		if len(data) > want {
			return done, fmt.Errorf("SMB1 read: server sent %d bytes for %d", len(data), want)
		}
		copy(p[done:], data)
		done += len(data)
		if len(data) == 0 {
			return done, io.EOF
		}
	}
	return done, nil
}

// readAndXData finds the data of a READ_ANDX answer in the whole message.
func readAndXData(resp, words []byte) ([]byte, error) {
	if len(words) < 14 {
		return nil, fmt.Errorf("SMB1 read response: %d parameter bytes", len(words))
	}
	n := int(binary.LittleEndian.Uint16(words[10:]))
	if len(words) >= 16 {
		n |= int(binary.LittleEndian.Uint16(words[14:])) << 16
	}
	off := int(binary.LittleEndian.Uint16(words[12:]))
	if n == 0 {
		return nil, nil
	}
	if off < 32 || off > len(resp) || n > len(resp)-off {
		return nil, fmt.Errorf("SMB1 read response: data %d+%d outside the %d-byte message", off, n, len(resp))
	}
	return resp[off : off+n], nil
}

func (c *Conn) delete(ctx context.Context, path string) error {
	w := binary.LittleEndian.AppendUint16(nil, 0x0006) // hidden and system files too
	// 32 + 1 + 2 + 2 + 1 buffer format = 38: the name is aligned.
	d := append([]byte{0x04}, smbwire.UTF16Z(path)...)
	_, _, _, err := c.call(ctx, cmdDelete, w, d, false)
	return err
}

// freeBytes asks TRANS2_QUERY_FS_INFORMATION (SMB_QUERY_FS_SIZE_INFO).
// setDeletePending marks the open file fid for deletion when its last
// handle closes (TRANS2_SET_FILE_INFORMATION, SMB_SET_FILE_DISPOSITION_INFO).
func (c *Conn) setDeletePending(ctx context.Context, fid uint16) error {
	params := binary.LittleEndian.AppendUint16(nil, fid)
	params = binary.LittleEndian.AppendUint16(params, 0x0102)
	params = binary.LittleEndian.AppendUint16(params, 0)
	_, _, err := c.trans2(ctx, 0x0008, params, []byte{1}, 0)
	return err
}

func (c *Conn) freeBytes(ctx context.Context) (free, total uint64, err error) {
	_, d, err := c.trans2(ctx, 0x0003, binary.LittleEndian.AppendUint16(nil, 0x0103), nil, 64) // TRANS2_QUERY_FS_INFORMATION
	if err != nil {
		return 0, 0, err
	}
	if len(d) < 24 {
		return 0, 0, fmt.Errorf("SMB1 file system size: %d bytes", len(d))
	}
	all := binary.LittleEndian.Uint64(d[0:])
	avail := binary.LittleEndian.Uint64(d[8:])
	spu := uint64(binary.LittleEndian.Uint32(d[16:]))
	bps := uint64(binary.LittleEndian.Uint32(d[20:]))
	return avail * spu * bps, all * spu * bps, nil
}

// trans2 sends a TRANS2 request of sub-command sub with params and data
// and returns the answer's parameters and data (one answer message).
func (c *Conn) trans2(ctx context.Context, sub uint16, params, data []byte, maxData int) (rparams, rdata []byte, err error) {
	// 32 + 1 + 30 words + 2 count = 65, +3 (pad, empty Unicode name) = 68.
	const paramOff = 68
	dataOff := paramOff + len(params)
	pad := 0
	if len(data) > 0 {
		pad = (4 - dataOff%4) % 4 // data on a 4-byte boundary, as Windows clients send it
		dataOff += pad
	}
	w := binary.LittleEndian.AppendUint16(nil, uint16(len(params))) // total parameter count
	w = binary.LittleEndian.AppendUint16(w, uint16(len(data)))      // total data count
	w = binary.LittleEndian.AppendUint16(w, 16)                     // max parameter count
	w = binary.LittleEndian.AppendUint16(w, uint16(maxData))        // max data count
	w = append(w, 0, 0)                                             // max setup count, reserved
	w = binary.LittleEndian.AppendUint16(w, 0)                      // flags
	w = binary.LittleEndian.AppendUint32(w, 0)                      // timeout
	w = binary.LittleEndian.AppendUint16(w, 0)                      // reserved
	w = binary.LittleEndian.AppendUint16(w, uint16(len(params)))    // parameter count
	w = binary.LittleEndian.AppendUint16(w, paramOff)
	w = binary.LittleEndian.AppendUint16(w, uint16(len(data))) // data count
	w = binary.LittleEndian.AppendUint16(w, uint16(dataOff))
	w = append(w, 1, 0) // setup count, reserved
	w = binary.LittleEndian.AppendUint16(w, sub)
	d := append(append(append([]byte{0, 0, 0}, params...), make([]byte, pad)...), data...)
	resp, rw, _, err := c.call(ctx, cmdTrans2, w, d, false)
	if err != nil {
		return nil, nil, err
	}
	if len(rw) < 20 {
		return nil, nil, fmt.Errorf("SMB1 trans2 response: %d parameter bytes", len(rw))
	}
	field := func(count, offset int, what string) ([]byte, error) {
		n := int(binary.LittleEndian.Uint16(rw[count:]))
		off := int(binary.LittleEndian.Uint16(rw[offset:]))
		if n == 0 {
			return nil, nil
		}
		if off < 32 || off > len(resp) || n > len(resp)-off {
			return nil, fmt.Errorf("SMB1 trans2 response: %s %d+%d outside the %d-byte message", what, off, n, len(resp))
		}
		return resp[off : off+n], nil
	}
	if total := binary.LittleEndian.Uint16(rw[2:]); int(total) != int(binary.LittleEndian.Uint16(rw[12:])) {
		return nil, nil, fmt.Errorf("SMB1 trans2 response: %d of %d data bytes (answers in parts are not read)", binary.LittleEndian.Uint16(rw[12:]), total)
	}
	if rparams, err = field(6, 8, "parameters"); err != nil {
		return nil, nil, err
	}
	if rdata, err = field(12, 14, "data"); err != nil {
		return nil, nil, err
	}
	return rparams, rdata, nil
}

// listDir lists folder p (TRANS2_FIND_FIRST2 / FIND_NEXT2 with
// SMB_FIND_FILE_DIRECTORY_INFO), without "." and "..".
func (c *Conn) listDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	pattern := `*`
	if p != "" {
		pattern = p + `\*`
	}
	maxData := min(max(c.maxBuf-256, 1024), 60<<10)
	params := binary.LittleEndian.AppendUint16(nil, 0x0016) // hidden, system, directories
	params = binary.LittleEndian.AppendUint16(params, 512)  // search count
	params = binary.LittleEndian.AppendUint16(params, 0x0002)
	params = binary.LittleEndian.AppendUint16(params, 0x0101) // SMB_FIND_FILE_DIRECTORY_INFO
	params = binary.LittleEndian.AppendUint32(params, 0)
	params = append(params, smbwire.UTF16Z(pattern)...)
	rp, rd, err := c.trans2(ctx, 0x0001, params, nil, maxData)
	if err != nil {
		return nil, err
	}
	if len(rp) < 10 {
		return nil, fmt.Errorf("SMB1 find: %d parameter bytes", len(rp))
	}
	sid := binary.LittleEndian.Uint16(rp)
	end := binary.LittleEndian.Uint16(rp[4:]) != 0
	var out []fs.FileInfo
	last, err := appendDirEntries(&out, rd)
	if err != nil {
		return nil, err
	}
	for i := 0; !end; i++ {
		if i >= 1000 || len(out) > 100000 {
			return nil, errors.New("SMB1 find: the listing does not end")
		}
		params = binary.LittleEndian.AppendUint16(nil, sid)
		params = binary.LittleEndian.AppendUint16(params, 512)
		params = binary.LittleEndian.AppendUint16(params, 0x0101)
		params = binary.LittleEndian.AppendUint32(params, 0)
		params = binary.LittleEndian.AppendUint16(params, 0x000a) // continue from last, close at end
		params = append(params, smbwire.UTF16Z(last)...)
		rp, rd, err = c.trans2(ctx, 0x0002, params, nil, maxData)
		if err != nil {
			return nil, err
		}
		if len(rp) < 8 {
			return nil, fmt.Errorf("SMB1 find next: %d parameter bytes", len(rp))
		}
		end = binary.LittleEndian.Uint16(rp[2:]) != 0
		n := len(out)
		if last, err = appendDirEntries(&out, rd); err != nil {
			return nil, err
		}
		if len(out) == n && !end {
			return nil, errors.New("SMB1 find next: no entries and no end")
		}
	}
	return out, nil
}

// appendDirEntries decodes SMB_FIND_FILE_DIRECTORY_INFO entries and
// returns the last name.
func appendDirEntries(out *[]fs.FileInfo, d []byte) (string, error) {
	last := ""
	for len(d) > 0 {
		if len(d) < 64 {
			return last, fmt.Errorf("SMB1 find: entry of %d bytes", len(d))
		}
		next := int(binary.LittleEndian.Uint32(d))
		n := int(binary.LittleEndian.Uint32(d[60:]))
		if n > len(d)-64 || (next != 0 && (next < 64+n || next > len(d))) {
			return last, fmt.Errorf("SMB1 find: entry name %d bytes, next at %d, in %d bytes", n, next, len(d))
		}
		name := strings.TrimRight(ntlm.DecodeUTF16(d[64:64+n]), "\x00")
		last = name
		if name != "." && name != ".." {
			o := handle{dir: binary.LittleEndian.Uint32(d[56:])&0x10 != 0, size: int64(binary.LittleEndian.Uint64(d[40:]))}
			if ft := binary.LittleEndian.Uint64(d[24:]); ft > 116444736000000000 {
				o.mtime = time.Unix(0, int64(ft-116444736000000000)*100)
			}
			*out = append(*out, fileInfo{name: name, o: o})
		}
		if next == 0 {
			break
		}
		d = d[next:]
	}
	return last, nil
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

// --- the share as files ---------------------------------------------------

// FS is the connected tree of a session under one context, as files; its
// errors are *os.PathError (*os.LinkError for Rename) around the server's
// ntstatus.Status.
type FS struct {
	c   *Conn
	ctx context.Context
}

// WithContext is the connected tree under ctx.
func (c *Conn) WithContext(ctx context.Context) FS { return FS{c: c, ctx: ctx} }

type fileInfo struct {
	name string
	o    handle
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.o.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.o.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i fileInfo) ModTime() time.Time { return i.o.mtime }
func (i fileInfo) IsDir() bool        { return i.o.dir }
func (i fileInfo) Sys() any           { return nil }

// Stat opens name for its attributes (a file or a folder) and closes it.
func (s FS) Stat(name string) (fs.FileInfo, error) {
	o, err := s.c.ntCreate(s.ctx, name, accessReadAttributes, dispositionOpen, 0)
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	s.c.close(s.ctx, o.fid)
	base := name
	if i := strings.LastIndex(name, `\`); i >= 0 {
		base = name[i+1:]
	}
	return fileInfo{name: base, o: o}, nil
}

// OpenFile opens file name (never a folder) to read, or with os.O_WRONLY or
// os.O_RDWR to read, write and delete; os.O_CREATE|os.O_EXCL creates it.
func (s FS) OpenFile(name string, flag int, _ os.FileMode) (*File, error) {
	access := uint32(genericRead)
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		access |= genericWrite | accessDelete
	}
	disp := uint32(dispositionOpen)
	if flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0 {
		disp = dispositionCreate
	}
	o, err := s.c.ntCreate(s.ctx, name, access, disp, optionNonDirectory)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return &File{fs: s, o: o, name: name}, nil
}

// Create creates file name, which must not exist, to read and write
// (sharing read, write and delete). With deleteOnClose it asks DELETE
// access and FILE_DELETE_ON_CLOSE too: the server then removes the file
// when its handle closes or the connection drops.
func (s FS) Create(name string, deleteOnClose bool) (*File, error) {
	access, options := uint32(genericRead|genericWrite), uint32(optionNonDirectory)
	if deleteOnClose {
		access |= accessDelete
		options |= optionDeleteOnClose
	}
	o, err := s.c.ntCreate(s.ctx, name, access, dispositionCreate, options)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return &File{fs: s, o: o, name: name}, nil
}

// RemoveOpen deletes a file whose handle is open (SMB1's DELETE would
// meet that handle's sharing): a second open with DELETE access that sets
// the delete disposition, which the server refuses when the account may
// not delete or the file is read-only.
func (s FS) RemoveOpen(name string) error {
	o, err := s.c.ntCreate(s.ctx, name, accessDelete, dispositionOpen, optionNonDirectory)
	if err == nil {
		err = s.c.setDeletePending(s.ctx, o.fid)
		s.c.close(s.ctx, o.fid)
	}
	if err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// Remove deletes file name (SMB_COM_DELETE).
func (s FS) Remove(name string) error {
	if err := s.c.delete(s.ctx, name); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// Rename sends SMB_COM_RENAME, which refuses an existing target
// (STATUS_OBJECT_NAME_COLLISION, seen as os.ErrExist).
func (s FS) Rename(from, to string) error {
	w := binary.LittleEndian.AppendUint16(nil, 0x0006)
	// 32 + 1 + 2 + 2 + 1 buffer format = 38: the old name is aligned; the
	// new name after its buffer format byte needs a pad byte.
	d := append([]byte{0x04}, smbwire.UTF16Z(from)...)
	d = append(d, 0x04, 0)
	d = append(d, smbwire.UTF16Z(to)...)
	if _, _, _, err := s.c.call(s.ctx, cmdRename, w, d, false); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// ReadDir lists folder p ("" for the share's root), without "." and "..";
// its error is the server's status as it is.
func (s FS) ReadDir(p string) ([]fs.FileInfo, error) { return s.c.listDir(s.ctx, p) }

// File is an open file of an FS; its operations run under the FS's
// context.
type File struct {
	fs   FS
	o    handle
	name string
	off  int64
}

// Write writes p at the file offset (WRITE_ANDX, in chunks the server
// takes) and advances it.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.fs.c.write(f.fs.ctx, f.o.fid, f.off, p)
	f.off += int64(n)
	if err != nil {
		return n, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return n, nil
}

// ReadAt reads len(p) bytes at off (READ_ANDX); io.EOF at the end.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.fs.c.read(f.fs.ctx, f.o.fid, off, p)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, &os.PathError{Op: "read", Path: f.name, Err: err}
	}
	return n, err
}

// Close closes the handle (SMB_COM_CLOSE).
func (f *File) Close() error {
	if err := f.fs.c.close(f.fs.ctx, f.o.fid); err != nil {
		return &os.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// FreeBytes asks the free and the total bytes of the file's share.
func (f *File) FreeBytes() (free, total uint64, err error) {
	return f.fs.c.freeBytes(f.fs.ctx)
}

// Read reads at the file offset and advances it.
func (f *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := f.fs.c.read(f.fs.ctx, f.o.fid, f.off, p)
	f.off += int64(n)
	if errors.Is(err, io.EOF) {
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	if err != nil {
		return n, &os.PathError{Op: "read", Path: f.name, Err: err}
	}
	return n, nil
}

// Seek sets the file offset; io.SeekEnd asks the server for the size.
func (f *File) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += f.off
	case io.SeekEnd:
		fi, err := f.Stat()
		if err != nil {
			return f.off, err
		}
		off += fi.Size()
	default:
		return f.off, fmt.Errorf("seek: whence %d", whence)
	}
	if off < 0 {
		return f.off, errors.New("seek: negative offset")
	}
	f.off = off
	return off, nil
}

// Sync sends SMB_COM_FLUSH.
func (f *File) Sync() error {
	_, _, _, err := f.fs.c.call(f.fs.ctx, cmdFlush, binary.LittleEndian.AppendUint16(nil, f.o.fid), nil, false)
	if err != nil {
		return &os.PathError{Op: "sync", Path: f.name, Err: err}
	}
	return nil
}

// Stat opens the file's name again for its attributes.
func (f *File) Stat() (fs.FileInfo, error) { return f.fs.Stat(f.name) }
