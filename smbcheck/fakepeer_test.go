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
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"

	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbfake"
	"github.com/scanwarden/scanwarden/internal/smbwire"
	"github.com/scanwarden/scanwarden/smbclient"
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
			smbwire.WriteFrame(c, smbfake.NegotiateResponse(0, 0x02ff))
		case len(req) >= 64 && string(req[:4]) == "\xfeSMB":
			cmd := binary.LittleEndian.Uint16(req[12:])
			msgID := binary.LittleEndian.Uint64(req[24:])
			switch cmd {
			case 0:
				smbwire.WriteFrame(c, smbfake.NegotiateResponse(msgID, 0x0210))
			case 1:
				if len(req) > 64+24 && containsNTLMType(req, 1) {
					smbwire.WriteFrame(c, smbfake.SessionSetupResponse(msgID, ntstatus.MoreProcessingRequired, smbfake.SPNEGOResp(smbfake.WindowsChallenge())))
				} else if f.vanish {
					return
				} else {
					smbwire.WriteFrame(c, smbfake.ErrorResponse(msgID, 1, f.status))
				}
			default:
				smbwire.WriteFrame(c, smbfake.ErrorResponse(msgID, cmd, ntstatus.NotSupported))
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
	tg := scanwarden.Target{Host: "127.0.0.1", Port: port, Share: "scans", User: "alice"}
	r := Run(t.Context(), tg, Options{MaxFailures: DefaultMaxFailures, StepTimeout: 2 * time.Second})
	if r.Verdict.Cause != scanwarden.CauseNotSMBPort {
		t.Fatalf("verdict %s: %s", r.Verdict.Cause, r.Verdict.Summary)
	}
	if !strings.Contains(r.Verdict.Summary, "another protocol") || !strings.Contains(r.Verdict.Fix, "445 (or 139)") {
		t.Errorf("verdict %+v", r.Verdict)
	}
}

// TestFakeLogonRestrictions provokes two statuses only Windows sends (FAKE
// peer): STATUS_ACCOUNT_RESTRICTION (a Protected Users member over NTLM)
// and STATUS_LOGON_TYPE_NOT_GRANTED ("Deny access to this computer from
// the network"). Neither is a bad password: each has its own cause, the
// fix names the policy, and no failed-logon budget is spent — a second
// check with a budget of one replays again.
func TestFakeLogonRestrictions(t *testing.T) {
	for _, tc := range []struct {
		status ntstatus.Status
		cause  scanwarden.Cause
		fix    string
	}{
		{ntstatus.AccountRestriction, scanwarden.CauseAccountRestricted, "Protected Users"},
		{ntstatus.LogonTypeNotGranted, scanwarden.CauseLogonTypeNotGranted, "Deny access to this computer from the network"},
	} {
		t.Run(string(tc.cause), func(t *testing.T) {
			f := startFakeWindows(t, tc.status)
			led := &smbclient.MemoryLedger{}
			for i := range 2 {
				rep := Run(context.Background(), scanwarden.Target{Host: "127.0.0.1", Port: f.port(), Share: "scans", User: "scan", Password: scanwarden.NewSecret("pw")},
					Options{MaxFailures: 1, Ledger: led, StepTimeout: 5 * time.Second})
				if rep.Verdict.Cause != tc.cause {
					t.Fatalf("check %d: verdict %s, want %s; steps %s", i+1, rep.Verdict.Cause, tc.cause, stepsString(rep))
				}
				if s := rep.Step(StepSession); s == nil || s.Evidence["not_replayed"] != nil {
					t.Fatalf("check %d: the logon was not replayed: %s", i+1, stepsString(rep))
				}
				if !strings.Contains(rep.Verdict.Fix, tc.fix) || rep.Verdict.KyoceraCode != "1102" {
					t.Errorf("verdict %+v", rep.Verdict)
				}
			}
		})
	}
}
