package smbcheck

// FAKE PEER. fakeWindows stands in for a Windows 10/11 PC that has reached its
// 20-inbound-session limit and answers STATUS_REQUEST_NOT_ACCEPTED. No lab
// peer can produce that status (Samba's "max connections" answers
// STATUS_INSUFFICIENT_RESOURCES instead), so this minimal SMB2 responder on
// 127.0.0.1 speaks just enough: the multi-protocol negotiate, an SMB 2.1
// negotiate, an NTLM CHALLENGE carrying a Windows 11 23H2 target info, and
// then the status under test for the AUTHENTICATE leg. Everything else the
// check does is tested against real Samba peers in lab_test.go.

import (
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

type fakeWindows struct {
	ln     net.Listener
	status ntstatus.Status // answer to the AUTHENTICATE leg
	// vanish, when set, hangs up instead of answering the AUTHENTICATE: a
	// server that goes away in the middle of a logon.
	vanish bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  int
}

func startFakeWindows(t *testing.T, status ntstatus.Status) *fakeWindows {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeWindows{ln: ln, status: status}
	f.wg.Add(1)
	go f.serve()
	t.Cleanup(func() { ln.Close(); f.wg.Wait() })
	return f
}

func (f *fakeWindows) port() int { return f.ln.Addr().(*net.TCPAddr).Port }

func (f *fakeWindows) serve() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns++
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			f.session(c)
		}()
	}
}

func (f *fakeWindows) session(c net.Conn) {
	for range 16 {
		req, err := smbwire.ReadFrame(c)
		if err != nil {
			return
		}
		switch {
		case len(req) > 4 && string(req[:4]) == "\xffSMB":
			smbwire.WriteFrame(c, fakeNegotiateResponse(0, 0x02ff))
		case len(req) >= 64 && string(req[:4]) == "\xfeSMB":
			cmd := binary.LittleEndian.Uint16(req[12:])
			msgID := binary.LittleEndian.Uint64(req[24:])
			switch cmd {
			case 0:
				smbwire.WriteFrame(c, fakeNegotiateResponse(msgID, 0x0210))
			case 1:
				if len(req) > 64+24 && containsNTLMType(req, 1) {
					smbwire.WriteFrame(c, fakeSessionSetupResponse(msgID, ntstatus.MoreProcessingRequired, spnegoResp(windowsChallenge())))
				} else if f.vanish {
					return
				} else {
					smbwire.WriteFrame(c, fakeErrorResponse(msgID, 1, f.status))
				}
			default:
				smbwire.WriteFrame(c, fakeErrorResponse(msgID, cmd, ntstatus.NotSupported))
			}
		default:
			return
		}
	}
}

func containsNTLMType(b []byte, typ uint32) bool {
	for i := 0; i+12 <= len(b); i++ {
		if string(b[i:i+8]) == "NTLMSSP\x00" {
			return binary.LittleEndian.Uint32(b[i+8:]) == typ
		}
	}
	return false
}

func fakeHeader(cmd uint16, msgID uint64, status ntstatus.Status) []byte {
	h := make([]byte, 64)
	copy(h, "\xfeSMB")
	binary.LittleEndian.PutUint16(h[4:], 64)
	binary.LittleEndian.PutUint32(h[8:], uint32(status))
	binary.LittleEndian.PutUint16(h[12:], cmd)
	binary.LittleEndian.PutUint16(h[14:], 32) // credits granted
	binary.LittleEndian.PutUint32(h[16:], 1)  // response flag
	binary.LittleEndian.PutUint64(h[24:], msgID)
	if cmd == 1 {
		binary.LittleEndian.PutUint64(h[40:], 0x1234) // session id
	}
	return h
}

func fakeNegotiateResponse(msgID uint64, dialect uint16) []byte {
	b := fakeHeader(0, msgID, ntstatus.Success)
	body := make([]byte, 64)
	binary.LittleEndian.PutUint16(body[0:], 65)
	binary.LittleEndian.PutUint16(body[2:], 0x01) // signing enabled, not required
	binary.LittleEndian.PutUint16(body[4:], dialect)
	copy(body[8:24], "fake-windows-guid")
	binary.LittleEndian.PutUint32(body[24:], 0) // capabilities
	binary.LittleEndian.PutUint32(body[28:], 1<<16)
	binary.LittleEndian.PutUint32(body[32:], 1<<16)
	binary.LittleEndian.PutUint32(body[36:], 1<<16)
	binary.LittleEndian.PutUint16(body[56:], 128) // security buffer offset
	binary.LittleEndian.PutUint16(body[58:], 0)
	return append(b, body...)
}

func fakeSessionSetupResponse(msgID uint64, status ntstatus.Status, blob []byte) []byte {
	b := fakeHeader(1, msgID, status)
	body := make([]byte, 8)
	binary.LittleEndian.PutUint16(body[0:], 9)
	binary.LittleEndian.PutUint16(body[4:], 64+8)
	binary.LittleEndian.PutUint16(body[6:], uint16(len(blob)))
	return append(append(b, body...), blob...)
}

func fakeErrorResponse(msgID uint64, cmd uint16, status ntstatus.Status) []byte {
	b := fakeHeader(cmd, msgID, status)
	body := make([]byte, 9)
	binary.LittleEndian.PutUint16(body[0:], 9)
	return append(b, body...)
}

// spnegoResp is a server's SPNEGO NegTokenResp carrying token.
func spnegoResp(token []byte) []byte {
	oidNTLMSSP := []byte{0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a}
	derTLV := func(tag byte, content []byte) []byte { // short and one-byte long lengths suffice here
		if len(content) < 0x80 {
			return append([]byte{tag, byte(len(content))}, content...)
		}
		return append([]byte{tag, 0x81, byte(len(content))}, content...)
	}
	negState := derTLV(0xa0, []byte{0x0a, 0x01, 0x01}) // accept-incomplete
	mech := derTLV(0xa1, oidNTLMSSP)
	tok := derTLV(0xa2, derTLV(0x04, token))
	return derTLV(0xa1, derTLV(0x30, append(append(negState, mech...), tok...)))
}

// windowsChallenge is an NTLM CHALLENGE as a Windows 11 23H2 workgroup PC
// named SCANPC sends it.
func windowsChallenge() []byte {
	var ti []byte
	av := func(id uint16, v []byte) {
		ti = binary.LittleEndian.AppendUint16(ti, id)
		ti = binary.LittleEndian.AppendUint16(ti, uint16(len(v)))
		ti = append(ti, v...)
	}
	av(2, ntlm.EncodeUTF16("OFFICE"))
	av(1, ntlm.EncodeUTF16("SCANPC"))
	av(4, ntlm.EncodeUTF16("office.example"))
	av(3, ntlm.EncodeUTF16("scanpc.office.example"))
	av(5, ntlm.EncodeUTF16("office.example"))
	ts := make([]byte, 8)
	binary.LittleEndian.PutUint64(ts, uint64(time.Now().UnixNano()/100+116444736000000000))
	av(7, ts)
	av(0, nil)
	target := ntlm.EncodeUTF16("OFFICE")
	m := []byte("NTLMSSP\x00")
	m = binary.LittleEndian.AppendUint32(m, 2)
	m = binary.LittleEndian.AppendUint16(m, uint16(len(target)))
	m = binary.LittleEndian.AppendUint16(m, uint16(len(target)))
	m = binary.LittleEndian.AppendUint32(m, 56)
	m = binary.LittleEndian.AppendUint32(m, 0xA2888205|0x00010000 /* the probe's NEGOTIATE flags without key exchange; target type domain */)
	m = append(m, 1, 2, 3, 4, 5, 6, 7, 8) // server challenge
	m = append(m, make([]byte, 8)...)
	m = binary.LittleEndian.AppendUint16(m, uint16(len(ti)))
	m = binary.LittleEndian.AppendUint16(m, uint16(len(ti)))
	m = binary.LittleEndian.AppendUint32(m, uint32(56+len(target)))
	m = append(m, 10, 0)
	m = binary.LittleEndian.AppendUint16(m, 22631)
	m = append(m, 0, 0, 0, 15)
	m = append(m, target...)
	return append(m, ti...)
}

// FAKE PEER. bannerPeer is a service that greets first in its own protocol
// (an SSH or FTP server on the port stored for the destination); the lab's
// non-SMB ports (DNS, LDAP, Kerberos on the DC) all hang up instead, which
// lab_test.go covers.
func TestNotSMBPortBanner(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"))
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			c.Read(make([]byte, 512))
			c.Close()
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	port := ln.Addr().(*net.TCPAddr).Port
	tg := Target{Host: "127.0.0.1", Port: port, Share: "scans", User: "alice"}
	r := Run(t.Context(), tg, Options{MaxFailures: DefaultMaxFailures, StepTimeout: 2 * time.Second})
	if r.Verdict.Cause != CauseNotSMBPort {
		t.Fatalf("verdict %s: %s", r.Verdict.Cause, r.Verdict.Summary)
	}
	if !strings.Contains(r.Verdict.Summary, "another protocol") || !strings.Contains(r.Verdict.Fix, "445 (or 139)") {
		t.Errorf("verdict %+v", r.Verdict)
	}
}
