package smbwire

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbfake"
)

// TestProbeWindows: the probe's multi-protocol NEGOTIATE, SMB2 NEGOTIATE
// and anonymous NTLM NEGOTIATE against the FAKE Windows 11 answers (the
// lab's Samba peers cover the rest in smbcheck's lab tests): it reports the
// dialect and the CHALLENGE's names, and sends no AUTHENTICATE.
func TestProbeWindows(t *testing.T) {
	cli, srv := net.Pipe()
	defer cli.Close()
	answers := [][]byte{
		smbfake.NegotiateResponse(0, DialectWildcard),
		smbfake.NegotiateResponse(1, 0x0210),
		smbfake.SessionSetupResponse(2, ntstatus.MoreProcessingRequired, smbfake.SPNEGOResp(smbfake.WindowsChallenge())),
	}
	got := make(chan []string, 1)
	go func() {
		defer srv.Close()
		var seen []string
		defer func() { got <- seen }()
		for _, a := range answers {
			req, err := ReadFrame(srv)
			if err != nil || len(req) < 5 {
				return
			}
			seen = append(seen, string(req[:4]))
			if WriteFrame(srv, a) != nil {
				return
			}
		}
		if req, err := ReadFrame(srv); err == nil {
			seen = append(seen, "more: "+string(req[:min(len(req), 4)]))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, err := Probe(ctx, cli, 445, "scanpc", false)
	if err != nil {
		t.Fatal(err)
	}
	if !a.SMB2 || a.SMB1 != nil || a.Negotiate == nil || DialectName(a.Negotiate.Dialect) != "2.1" || !a.Negotiate.SigningEnabled() || a.Negotiate.SigningRequired() {
		t.Fatalf("answer %+v", a)
	}
	if a.Identity == nil || a.Identity.AV[1] != "SCANPC" || a.Identity.AV[4] != "office.example" || a.Identity.Build != 22631 {
		t.Fatalf("identity %+v", a.Identity)
	}
	cli.Close()
	if s := <-got; len(s) != 3 || s[0] != "\xffSMB" || s[1] != "\xfeSMB" || s[2] != "\xfeSMB" {
		t.Fatalf("the server saw %q", s)
	}
}
