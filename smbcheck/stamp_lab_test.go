package smbcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/smbwire"
	"github.com/scanwarden/scanwarden/smbconn"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabCanaryDeleteOnClose: the stamped canary CREATE is accepted —
// signed again where the session signs — by every dialect and signing
// setting the lab's servers speak, and the server deletes the file when
// the connection drops without a close (what a kill -9 of the check does),
// and when the handle closes.
func TestLabCanaryDeleteOnClose(t *testing.T) {
	lab := testlab.Require(t)
	cases := []struct {
		name, ip, share, user, domain string
		dialect                       uint16
		sign                          bool
	}{
		{"dc 3.1.1", lab.DCIP, "scans", "alice", lab.Domain, 0, false},
		{"dc 3.1.1 signed", lab.DCIP, "scans", "alice", lab.Domain, 0, true},
		{"dc 3.0.2 signed", lab.DCIP, "scans", "alice", lab.Domain, 0x0302, true},
		{"dc 3.0 signed", lab.DCIP, "scans", "alice", lab.Domain, 0x0300, true},
		{"dc 2.1 signed", lab.DCIP, "scans", "alice", lab.Domain, 0x0210, true},
		{"dc 2.0.2 signed", lab.DCIP, "scans", "alice", lab.Domain, 0x0202, true},
		{"signsrv 3.1.1 (signing mandatory)", lab.SignIP, "scans", "scanuser", "", 0, false},
		{"signsrv 2.1 (signing mandatory)", lab.SignIP, "scans", "scanuser", "", 0x0210, false},
		{"smb2srv 3.1.1", lab.SMB2IP, "scans", "scanuser", "", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			watch := labSession(t, lab, tc.ip, tc.user)
			if tc.domain == "" {
				watch = labSessionAs(t, tc.ip, tc.user, "", lab.Password)
			}
			wsh, err := watch.Mount(`\\` + tc.ip + `\` + tc.share)
			if err != nil {
				t.Fatal(err)
			}
			defer wsh.Umount()
			for _, end := range []string{"close", "drop"} {
				conn, err := smbconn.DialTCP(ctx, tc.ip, 445)
				if err != nil {
					t.Fatal(err)
				}
				ntlm := &smb2.NTLMInitiator{User: tc.user, Password: lab.Password, Domain: tc.domain}
				stamp := smbwire.NewStamper(ntlm.SessionKey)
				sc := smbwire.NewSniffer(conn, stamp, nil)
				d := &smb2.Dialer{Negotiator: smb2.Negotiator{SpecifiedDialect: tc.dialect, RequireMessageSigning: tc.sign}, Initiator: ntlm}
				s, err := d.DialConn(ctx, sc, tc.ip)
				sc.Stop()
				if err != nil {
					conn.Close()
					t.Fatalf("logon: %v", err)
				}
				sh, err := s.WithContext(ctx).Mount(`\\` + tc.ip + `\` + tc.share)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("scanwarden-check-stamp-%s-%d.tmp", end, time.Now().UnixNano())
				f, doomed, err := smbconn.NewShare(sh, stamp).CreateTest(ctx, name)
				if err != nil || !doomed {
					t.Fatalf("%s: create: doomed %v, %v", end, doomed, err)
				}
				if _, err := f.Write(canaryPayload(name)); err != nil {
					t.Fatalf("%s: write through the stamped handle: %v", end, err)
				}
				if _, err := wsh.Stat(name); err != nil {
					t.Fatalf("%s: the canary is not visible while open: %v", end, err)
				}
				if end == "close" {
					if err := f.Close(); err != nil {
						t.Fatal(err)
					}
					s.Logoff()
				}
				conn.Close()
				gone := false
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !gone; time.Sleep(10 * time.Millisecond) {
					_, err := wsh.Stat(name)
					gone = errors.Is(err, os.ErrNotExist)
				}
				if !gone {
					wsh.Remove(name)
					t.Fatalf("%s: the canary outlived its handle", end)
				}
			}
		})
	}
}

func labSessionAs(t *testing.T, ip, user, domain, password string) *smb2.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := (&smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: user, Password: password, Domain: domain}}).Dial(ctx, ip+":445")
	if err != nil {
		t.Fatalf("session as %s on %s: %v", user, ip, err)
	}
	t.Cleanup(func() { s.Logoff() })
	return s
}

// TestLabCanaryEncryptedShare: on a share that requires encryption the
// canary cannot be stamped; it is created plainly, deleted after the close,
// and the check is ok with nothing left behind.
func TestLabCanaryEncryptedShare(t *testing.T) {
	lab := testlab.Require(t)
	r := Run(context.Background(), labTarget(t, lab, "//"+lab.SMB2IP+"/sealed", "scanuser", ""), Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second})
	w := r.Step(StepWrite)
	if r.Verdict.Cause != scanwarden.CauseOK || w == nil || w.Evidence["delete_on_close"] != false || r.Canary != "" {
		t.Fatalf("verdict %s, write %+v, canary %q:%s", r.Verdict.Cause, w, r.Canary, stepsString(r))
	}
	watch := labSessionAs(t, lab.SMB2IP, "scanuser", "", lab.Password)
	sh, err := watch.Mount(`\\` + lab.SMB2IP + `\sealed`)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Umount()
	if _, err := sh.Stat(fmt.Sprint(w.Evidence["canary"])); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("canary %v still there: %v", w.Evidence["canary"], err)
	}
}
