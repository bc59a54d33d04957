package smbwire

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbfake"
)

func TestSnifferAnyChunking(t *testing.T) {
	stream := append(framed(smbfake.NegotiateResponse(1, 0x0210)), framed(smbfake.SessionSetupResponse(2, ntstatus.MoreProcessingRequired, make([]byte, 300)))...)
	stream = append(stream, 0x85, 0, 0, 0) // keep-alive
	stream = append(stream, framed(smbfake.ErrorResponse(3, 1, ntstatus.AccountLockedOut))...)
	for chunk := 1; chunk <= 80; chunk += 7 {
		c := &Sniffer{}
		for i := 0; i < len(stream); i += chunk {
			c.feed(stream[i:min(i+chunk, len(stream))])
		}
		if c.Seen().Failure != ntstatus.AccountLockedOut {
			t.Fatalf("chunk %d: saw %v", chunk, c.Seen().Failure)
		}
	}
}

func framed(m []byte) []byte {
	return append([]byte{0, byte(len(m) >> 16), byte(len(m) >> 8), byte(len(m))}, m...)
}

// FuzzNegotiateParsers feeds hostile server answers to every parser of the
// negotiate probe and to the sniffer: none may panic or read out of bounds.
func FuzzNegotiateParsers(f *testing.F) {
	f.Add(smbfake.NegotiateResponse(0, 0x02ff))
	f.Add(smbfake.NegotiateResponse(1, 0x0311))
	f.Add(smbfake.SessionSetupResponse(2, ntstatus.MoreProcessingRequired, smbfake.SPNEGOResp(smbfake.WindowsChallenge())))
	f.Add(smbfake.WindowsChallenge())
	smb1 := SMB1Header(0x72)
	smb1 = append(smb1, 17)
	smb1 = append(smb1, make([]byte, 34+2)...)
	f.Add(smb1)
	f.Add([]byte("\xffSMB\x72"))
	f.Add([]byte("NTLMSSP\x00\x02\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseSMB1Negotiate(b)
		ParseSMB2Negotiate(b)
		ParseSMB2SessionSetup(b)
		ParseSMB1SessionSetup(b)
		ntlm.ParseIdentity(b)
		ReadFrame(bytes.NewReader(append([]byte{0, 0, byte(len(b) >> 8), byte(len(b))}, b...)))
		s := &Sniffer{}
		s.feed(b)
	})
}

// recordConn is a net.Conn that keeps what is written to it.
type recordConn struct {
	net.Conn
	wrote [][]byte
}

func (c *recordConn) Write(p []byte) (int, error) {
	c.wrote = append(c.wrote, append([]byte{}, p...))
	return len(p), nil
}

// TestSnifferHoldsAuthenticate: the hold is asked once, with what the
// server told, before the first AUTHENTICATE; when it refuses, nothing of
// that message reaches the connection. Other messages pass unasked.
func TestSnifferHoldsAuthenticate(t *testing.T) {
	refuse := errors.New("budget spent")
	var asked []Seen
	rc := &recordConn{}
	s := NewSniffer(rc, nil, func(seen Seen) error { asked = append(asked, seen); return refuse })
	s.feed(framed(smbfake.NegotiateResponse(1, 0x0311)))
	s.feed(framed(smbfake.SessionSetupResponse(2, ntstatus.MoreProcessingRequired, smbfake.SPNEGOResp(smbfake.WindowsChallenge()))))
	if _, err := s.Write([]byte("negotiate NTLMSSP\x00\x01\x00\x00\x00")); err != nil || len(asked) != 0 {
		t.Fatalf("a NEGOTIATE was held: %v, %d asks", err, len(asked))
	}
	auth := []byte("session setup NTLMSSP\x00\x03\x00\x00\x00 response")
	if n, err := s.Write(auth); n != 0 || !errors.Is(err, refuse) {
		t.Fatalf("refused AUTHENTICATE: wrote %d, %v", n, err)
	}
	if len(rc.wrote) != 1 || len(asked) != 1 {
		t.Fatalf("%d writes reached the connection, %d asks", len(rc.wrote), len(asked))
	}
	seen := asked[0]
	if !seen.Negotiated || DialectName(seen.Negotiate.Dialect) != "3.1.1" || seen.Identity == nil || seen.Identity.AV[1] != "SCANPC" {
		t.Fatalf("the hold saw %+v", seen)
	}
	if _, err := s.Write(auth); err != nil || len(asked) != 1 || len(rc.wrote) != 2 {
		t.Fatalf("a second AUTHENTICATE: %v, %d asks, %d writes", err, len(asked), len(rc.wrote))
	}
}
