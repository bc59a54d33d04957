package smb1

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	iofs "io/fs"
	"net"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbfake"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// smb1Answer builds an SMB1 server message.
func smb1Answer(cmd byte, status ntstatus.Status, words, data []byte) []byte {
	b := smbwire.SMB1Header(cmd)
	b[9] |= 0x80 // reply
	binary.LittleEndian.PutUint32(b[5:], uint32(status))
	b = append(b, byte(len(words)/2))
	b = append(b, words...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

func smb1Seeds() [][]byte {
	neg := make([]byte, 34)
	binary.LittleEndian.PutUint32(neg[7:], 16644)
	binary.LittleEndian.PutUint32(neg[19:], capExtendedSecurity)
	blob := smbfake.SPNEGOResp(smbfake.WindowsChallenge())
	ss := []byte{0xff, 0, 0, 0, 0, 0}
	ss = binary.LittleEndian.AppendUint16(ss, uint16(len(blob)))
	create := make([]byte, 68)
	create[5] = 7
	read := make([]byte, 24)
	binary.LittleEndian.PutUint16(read[10:], 4)
	binary.LittleEndian.PutUint16(read[12:], 59)
	return [][]byte{
		smb1Answer(cmdNegotiate, 0, neg, make([]byte, 16)),
		smb1Answer(cmdSessionSetup, ntstatus.MoreProcessingRequired, ss, blob),
		smb1Answer(cmdNTCreate, 0, create, nil),
		smb1Answer(cmdReadAndX, 0, read, []byte{0, 1, 2, 3, 4}),
		smb1Answer(cmdWriteAndX, 0, []byte{0xff, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, nil),
		smb1Answer(cmdTreeConnect, ntstatus.BadNetworkName, nil, nil),
	}
}

// FuzzSMB1Replay answers every request of the SMB1 replay with the same
// hostile message (addressed to that request): no operation may panic,
// read out of bounds or loop.
func FuzzSMB1Replay(f *testing.F) {
	for _, s := range smb1Seeds() {
		f.Add(s)
	}
	f.Add([]byte("\xffSMB"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseNegotiateResponse(b)
		ntlm.ParseChallenge(b)
		cli, srv := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer srv.Close()
			for range 16 {
				req, err := smbwire.ReadFrame(srv)
				if err != nil {
					return
				}
				resp := append([]byte{}, b...)
				if len(resp) >= 32 && len(req) >= 32 {
					resp[4] = req[4]
					copy(resp[30:32], req[30:32])
				}
				if smbwire.WriteFrame(srv, resp) != nil {
					return
				}
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c := &Conn{conn: cli, tid: 0xffff, timeout: time.Second, maxBuf: 4096}
		c.Negotiate(ctx)
		c.neg.ExtendedSec = true
		c.SessionSetup(ctx, ntlm.Credentials{User: "u", Password: "p", Workstation: "w"}, nil)
		c.SessionSetup(ctx, ntlm.Credentials{User: "u", Password: "p", Workstation: "w", NTLMv1: true}, nil)
		c.TreeConnect(ctx, "h", "s")
		fs := c.WithContext(ctx)
		fs.Stat(`a\b`)
		if f, err := fs.OpenFile("x", 0x42, 0); err == nil {
			f.Write(make([]byte, 5000))
			f.ReadAt(make([]byte, 100), 0)
			f.FreeBytes()
			f.Seek(0, io.SeekStart)
			f.Read(make([]byte, 300))
			f.Sync()
			f.Close()
		}
		if f, err := fs.Create("c", true); err == nil {
			fs.RemoveOpen("c")
			f.Close()
		}
		fs.Rename("x", "y")
		fs.ReadDir("d")
		var list []iofs.FileInfo
		appendDirEntries(&list, b)
		fs.Remove("x")
		c.Logoff()
		<-done
	})
}

func TestSMB1Seeds(t *testing.T) {
	s := smb1Seeds()
	n, err := parseNegotiateResponse(s[0])
	if err != nil || !n.ExtendedSec || n.MaxBuffer != 16644 || n.DialectIndex != 0 {
		t.Fatalf("negotiate %+v %v", n, err)
	}
	w, d, err := parse(s[1], cmdSessionSetup)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := sessionSetupBlob(w, d)
	if err != nil || !bytes.Contains(blob, []byte("NTLMSSP")) {
		t.Fatalf("blob %v", err)
	}
	if _, err := ntlm.ParseChallenge(blob); err != nil {
		t.Fatal(err)
	}
	w, _, _ = parse(s[3], cmdReadAndX)
	if got, err := readAndXData(s[3], w); err != nil || len(got) != 4 {
		t.Fatalf("read data %v %v", got, err)
	}
}
