package smbcheck

// Dial with the destination's auth against the lab's NTLM-refusing server
// (dc2, `ntlm auth = disabled`, its own KDC): what the receiver's forwarder
// delivers through.

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/errorcode"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
)

// TestLabDialKerberos: auth kerberos connects to and writes on the server
// that refuses NTLM; auth ntlm is refused there as ntlm-blocked (nothing
// counted); a wrong password over Kerberos is bad-credentials, counted in
// the ledger once, and not sent again.
func TestLabDialKerberos(t *testing.T) {
	lab := requireDC2(t)
	dest := "//" + lab.DC2Host + "/scans"
	dial := func(t *testing.T, user, pw string, auth scanwarden.Auth, led smbclient.Ledger) (*smbclient.Session, error) {
		t.Helper()
		tg := labTarget(t, lab, dest, user, pw)
		tg.Auth = auth
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		t.Cleanup(cancel)
		return smbclient.Dial(ctx, tg, smbclient.DialOptions{Ledger: led, MaxFailures: 2, Timeout: 5 * time.Second, Resolver: dc2Resolver(lab)})
	}
	t.Run("auth kerberos writes", func(t *testing.T) {
		led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
		s, err := dial(t, lab.Domain2+`\kim`, "", scanwarden.AuthKerberos, led)
		if err != nil {
			t.Fatalf("Dial over Kerberos: %v", err)
		}
		defer s.Close()
		ctx := context.Background()
		name := "dial-krb-" + strconv.FormatInt(time.Now().UnixNano(), 36) + ".pdf"
		body := []byte("%PDF-1.4 delivered over Kerberos\n")
		f, err := s.Create(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(body); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		defer s.Remove(ctx, name)
		// What the server stored, read on its disk and back over the session.
		if got, err := os.ReadFile(filepath.Join(lab.Dir, "dc2/shares/scans", name)); err != nil || string(got) != string(body) {
			t.Fatalf("the server's copy: %q, %v", got, err)
		}
		r, err := s.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(got) != string(body) {
			t.Fatalf("read back %q, %v", got, err)
		}
		// One logon sent (the probe sends no AUTHENTICATE), resolved a success.
		if led.sent != 1 || !slices.Equal(led.got, []smbclient.OutcomeKind{smbclient.Succeeded}) {
			t.Errorf("ledger: %d sent, outcomes %v; want 1, [succeeded]", led.sent, led.got)
		}
	})
	t.Run("auth ntlm is ntlm-blocked", func(t *testing.T) {
		led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
		s, err := dial(t, lab.Domain2+`\kim`, "", scanwarden.AuthNTLM, led)
		if err == nil {
			s.Close()
			t.Fatal("NTLM logged on to the server that refuses it")
		}
		var e *smbclient.Error
		if !errors.As(err, &e) || e.Cause != scanwarden.CauseNTLMBlocked || e.Status != ntstatus.NTLMBlocked || e.LogonFailed() {
			t.Fatalf("err %v (%+v), want ntlm-blocked, not a logon failure", err, e)
		}
		if !slices.Equal(led.got, []smbclient.OutcomeKind{smbclient.Cancelled}) {
			t.Errorf("ledger outcomes %v, want [cancelled]", led.got)
		}
	})
	t.Run("auth auto logs on over Kerberos", func(t *testing.T) {
		led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
		s, err := dial(t, lab.Domain2+`\kim`, "", scanwarden.AuthAuto, led)
		if err != nil {
			t.Fatalf("auto: %v", err)
		}
		s.Close()
		if !slices.Equal(led.got, []smbclient.OutcomeKind{smbclient.Succeeded}) {
			t.Errorf("ledger outcomes %v, want [succeeded] (Kerberos only)", led.got)
		}
	})
	t.Run("auth auto falls back to NTLM where Kerberos cannot judge", func(t *testing.T) {
		// dc1 by address: no ticket for cifs/ADDRESS (the check's
		// kerberos-needs-name, a fallback), so NTLM logs on.
		tg := labTarget(t, lab, "//"+lab.DCIP+"/scans", lab.Domain+`\alice`, "")
		tg.Auth = scanwarden.AuthAuto
		led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
		s, err := smbclient.Dial(context.Background(), tg, smbclient.DialOptions{Ledger: led, MaxFailures: 2, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("auto on dc1's address: %v", err)
		}
		s.Close()
		if led.sent != 2 || !slices.Equal(led.got, []smbclient.OutcomeKind{smbclient.Succeeded, smbclient.Succeeded}) {
			t.Errorf("ledger: %d sent, outcomes %v; want the Kerberos password try and the NTLM logon, both succeeded", led.sent, led.got)
		}
	})
	t.Run("auth auto, wrong password: no NTLM after the KDC judged it", func(t *testing.T) {
		before := badPwdCount(t, lab, "kwrong")
		led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
		_, err := dial(t, "kwrong@"+lab.DNSDomain2, "Wrong.Auto-"+strconv.FormatInt(time.Now().UnixNano(), 36), scanwarden.AuthAuto, led)
		var e *smbclient.Error
		if !errors.As(err, &e) || e.Cause != scanwarden.CauseBadCredentials || e.Status == ntstatus.NTLMBlocked {
			t.Fatalf("err %v, want bad-credentials from the KDC", err)
		}
		if led.sent != 1 || !slices.Equal(led.got, []smbclient.OutcomeKind{smbclient.Failed}) {
			t.Fatalf("ledger: %d sent, outcomes %v; want the Kerberos try only", led.sent, led.got)
		}
		if n := badPwdCount(t, lab, "kwrong") - before; n != 1 {
			t.Errorf("kwrong's badPwdCount rose by %d, want 1", n)
		}
	})
	t.Run("no budget, no Kerberos try", func(t *testing.T) {
		led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
		tg := labTarget(t, lab, dest, lab.Domain2+`\kim`, "")
		tg.Auth = scanwarden.AuthKerberos
		_, err := smbclient.Dial(context.Background(), tg, smbclient.DialOptions{Ledger: led, MaxFailures: 0, Timeout: 5 * time.Second, Resolver: dc2Resolver(lab)})
		var e *smbclient.Error
		if !errors.As(err, &e) || e.Refusal == nil || led.sent != 0 {
			t.Fatalf("MaxFailures 0: %v, %d sent; want kept back, nothing sent", err, led.sent)
		}
	})
	t.Run("wrong password over Kerberos", func(t *testing.T) {
		before := badPwdCount(t, lab, "kwrong")
		led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
		pw := "Wrong.Pass-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		_, err := dial(t, "kwrong@"+lab.DNSDomain2, pw, scanwarden.AuthKerberos, led)
		var e *smbclient.Error
		if !errors.As(err, &e) || e.Cause != scanwarden.CauseBadCredentials || e.KDCError != errorcode.KDC_ERR_PREAUTH_FAILED || !e.LogonFailed() {
			t.Fatalf("err %v (%+v), want bad-credentials from KDC_ERR_PREAUTH_FAILED", err, e)
		}
		if strings.Contains(err.Error(), pw) {
			t.Fatal("the password is in the error")
		}
		if led.sent != 1 || !slices.Equal(led.got, []smbclient.OutcomeKind{smbclient.Failed}) {
			t.Fatalf("ledger: %d sent, outcomes %v; want 1, [failed]", led.sent, led.got)
		}
		// The same refused password is not sent again.
		_, err = dial(t, "kwrong@"+lab.DNSDomain2, pw, scanwarden.AuthKerberos, led)
		if !errors.As(err, &e) || e.Refusal == nil || !e.LogonFailed() {
			t.Fatalf("second try: %v, want kept back by the ledger", err)
		}
		if led.sent != 1 {
			t.Fatalf("second try sent a logon (%d sent)", led.sent)
		}
		if n := badPwdCount(t, lab, "kwrong") - before; n != 1 {
			t.Errorf("kwrong's badPwdCount rose by %d, want 1", n)
		}
	})
}
