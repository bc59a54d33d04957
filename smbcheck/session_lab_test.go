package smbcheck

// The exported dialer against the lab's real Samba peers.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

func dialLab(t *testing.T, lab *testlab.Lab, dest, user, pw, ws string, o smbclient.DialOptions) (*smbclient.Session, error) {
	t.Helper()
	tg := labTarget(t, lab, dest, user, pw)
	tg.Workstation = ws
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return smbclient.Dial(ctx, tg, o)
}

// TestLabDialForward streams a file to a temporary name, renames it, reads
// it back and verifies it, as the receiver's forwarder does, on the DC's
// share and on a standalone server.
func TestLabDialForward(t *testing.T) {
	lab := testlab.Require(t)
	for _, tc := range []struct{ name, dest, user string }{
		{"dc", "//" + lab.DCHost + "/scans", lab.Domain + `\alice`},
		{"standalone", "//" + lab.SMB2IP + "/scans", "scanuser"},
		{"signing-mandatory", "//" + lab.SignIP + "/scans", "scanuser"},
		{"encrypted", "//" + lab.SMB2IP + "/sealed", "scanuser"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			led := &countingLedger{Ledger: &smbclient.MemoryLedger{}}
			s, err := dialLab(t, lab, tc.dest, tc.user, "", "MFP01", smbclient.DialOptions{Ledger: led, MaxFailures: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if led.sent != 1 {
				t.Errorf("ledger let %d logons through, want 1", led.sent)
			}
			if s.Guest() || s.Dialect() == "" {
				t.Errorf("guest %v, dialect %q", s.Guest(), s.Dialect())
			}
			ctx := context.Background()
			var rnd [4]byte
			rand.Read(rnd[:])
			tmp := "dialtest-" + string(rune('a'+rnd[0]%26)) + time.Now().Format("150405.000000") + ".part"
			final := tmp[:len(tmp)-len(".part")] + ".pdf"
			// 1 MiB + 1, through a small buffer: more than one SMB write.
			data := make([]byte, 1<<20+1)
			rand.Read(data)
			f, err := s.Create(ctx, tmp)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Remove(ctx, tmp)
			defer s.Remove(ctx, final)
			if _, err := io.CopyBuffer(struct{ io.Writer }{f}, bytes.NewReader(data), make([]byte, 64<<10)); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create(ctx, tmp); !errors.Is(err, os.ErrExist) {
				t.Errorf("Create over an existing file: %v, want os.ErrExist", err)
			}
			if err := s.Rename(ctx, tmp, final); err != nil {
				t.Fatal(err)
			}
			fi, err := s.Stat(ctx, final)
			if err != nil || fi.Size() != int64(len(data)) {
				t.Fatalf("stat %s: %v, size %v", final, err, fi)
			}
			r, err := s.Open(ctx, final)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			if _, err := io.Copy(h, r); err != nil {
				t.Fatal(err)
			}
			r.Close()
			if want := sha256.Sum256(data); !bytes.Equal(h.Sum(nil), want[:]) {
				t.Fatal("read back differs")
			}
			// A rename onto an existing name is refused by the server (the
			// rename is stamped not to replace; no lookup before it), and
			// the file under that name is untouched.
			// An encrypted session cannot be stamped: the name is looked up
			// first there.
			if s.Dialect() == "NT LM 0.12" || s.StampsRenames() == (tc.name == "encrypted") {
				t.Fatalf("stamp ready %v on %s (dialect %s)", s.StampsRenames(), tc.name, s.Dialect())
			}
			g, err := s.Create(ctx, tmp)
			if err != nil {
				t.Fatal(err)
			}
			g.Write([]byte("other"))
			g.Close()
			if err := s.Rename(ctx, tmp, final); !errors.Is(err, os.ErrExist) {
				t.Errorf("rename onto an existing file: %v, want os.ErrExist", err)
			}
			if fi, err := s.Stat(ctx, final); err != nil || fi.Size() != int64(len(data)) {
				t.Errorf("%s after the refused rename: %v, size %v (replaced?)", final, err, fi)
			}
			list, err := s.ReadDir(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, e := range list {
				if e.Name() == tmp || e.Name() == final {
					seen++
				}
			}
			if seen != 2 {
				t.Errorf("ReadDir shows %d of the 2 files", seen)
			}
			for _, n := range []string{tmp, final} {
				if err := s.Remove(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Stat(ctx, final); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("stat after remove: %v", err)
			}
			if _, err := s.Stat(ctx, "../x"); err == nil {
				t.Error("a name with .. was accepted")
			}
		})
	}
}

// TestLabDialCauses: each refusal Dial can meet carries its cause.
func TestLabDialCauses(t *testing.T) {
	lab := testlab.Require(t)
	smb2 := "//" + lab.SMB2IP + "/scans"
	for _, tc := range []struct {
		name, dest, user, pw, ws string
		o                        smbclient.DialOptions
		op                       string
		want                     scanwarden.Cause
	}{
		{"wrong password", smb2, "scanuser", wrongPassword, "", smbclient.DialOptions{MaxFailures: 1}, "logon", scanwarden.CauseBadCredentials},
		{"workstation", "//" + lab.DCHost + "/scans", lab.Domain + `\ivan`, "", "SCANWARDEN", smbclient.DialOptions{MaxFailures: 1}, "logon", scanwarden.CauseWorkstationRestricted},
		{"no share", smb2 + "x", "scanuser", "", "", smbclient.DialOptions{MaxFailures: 1}, "tree connect", scanwarden.CauseShareNotFound},
		{"no folder", smb2 + "/no/such", "scanuser", "", "", smbclient.DialOptions{MaxFailures: 1}, "folder", scanwarden.CausePathNotFound},
		{"refused share", "//" + lab.DCHost + "/restricted", lab.Domain + `\alice`, "", "", smbclient.DialOptions{MaxFailures: 1}, "tree connect", scanwarden.CauseShareAccessDenied},
		{"nothing listens", "//" + lab.GhostIP + "/scans", "scanuser", "", "", smbclient.DialOptions{MaxFailures: 1}, "connect", scanwarden.CauseHostUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := dialLab(t, lab, tc.dest, tc.user, tc.pw, tc.ws, tc.o)
			if err == nil {
				s.Close()
				t.Fatal("dial succeeded")
			}
			var e *smbclient.Error
			if !errors.As(err, &e) || e.Op != tc.op || e.Cause != tc.want {
				t.Fatalf("error %v (%#v), want op %q cause %s", err, e, tc.op, tc.want)
			}
		})
	}
	t.Run("ivan from MFP01", func(t *testing.T) {
		s, err := dialLab(t, lab, "//"+lab.DCHost+"/scans", lab.Domain+`\ivan`, "", "mfp01", smbclient.DialOptions{MaxFailures: 1})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
}

// TestLabDialLedger: the gate is the check's: budget 0 sends nothing, a
// failed form is not sent twice, the failure is shared with Run.
func TestLabDialLedger(t *testing.T) {
	lab := testlab.Require(t)
	dest := "//" + lab.SMB2IP + "/scans"
	led := &countingLedger{Ledger: &smbclient.MemoryLedger{}}
	_, err := dialLab(t, lab, dest, "scanuser", "", "", smbclient.DialOptions{Ledger: led, MaxFailures: 0})
	var e *smbclient.Error
	if !errors.As(err, &e) || e.Refusal == nil || led.sent != 0 {
		t.Fatalf("budget 0: %v, %d sent", err, led.sent)
	}
	_, err = dialLab(t, lab, dest, "scanuser", wrongPassword, "", smbclient.DialOptions{Ledger: led, MaxFailures: 2})
	if !errors.As(err, &e) || e.Cause != scanwarden.CauseBadCredentials || led.sent != 1 {
		t.Fatalf("wrong password: %v, %d sent", err, led.sent)
	}
	_, err = dialLab(t, lab, dest, "scanuser", wrongPassword, "", smbclient.DialOptions{Ledger: led, MaxFailures: 2})
	if !errors.As(err, &e) || e.Refusal == nil || e.Cause != scanwarden.CauseBadCredentials || led.sent != 1 {
		t.Fatalf("same wrong password again: %v, %d sent", err, led.sent)
	}
	// A check sees the dialer's failure in the shared ledger.
	tg := labTarget(t, lab, dest, "scanuser", wrongPassword)
	r := Run(context.Background(), tg, Options{Ledger: led, MaxFailures: 2, StepTimeout: 5 * time.Second})
	if r.Verdict.Cause != scanwarden.CauseBadCredentials || !r.Verdict.FromLedger || led.sent != 1 {
		t.Fatalf("check after the dialer: %s from ledger %v, %d sent%s", r.Verdict.Cause, r.Verdict.FromLedger, led.sent, stepsString(r))
	}
	s, err := smbclient.Dial(context.Background(), scanwarden.Target{Host: lab.SMB2IP, Share: "scans", User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}, smbclient.DialOptions{Ledger: led, MaxFailures: 2})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestLabDialSMB1: an SMB1-only destination is written through the same
// Session, over SMB1 (rename refuses an existing target on the server).
func TestLabDialSMB1(t *testing.T) {
	lab := testlab.Require(t)
	led := &countingLedger{Ledger: &smbclient.MemoryLedger{}}
	s, err := dialLab(t, lab, "//"+lab.SMB1IP+"/scans", "scanuser", "", "MFP01", smbclient.DialOptions{Ledger: led, MaxFailures: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Dialect() != "NT LM 0.12" || led.sent != 1 {
		t.Fatalf("dialect %q, %d logons", s.Dialect(), led.sent)
	}
	ctx := context.Background()
	tmp := "dial1-" + time.Now().Format("150405.000000") + ".part"
	final := tmp + ".pdf"
	defer s.Remove(ctx, tmp)
	defer s.Remove(ctx, final)
	data := make([]byte, 200<<10+3)
	rand.Read(data)
	f, err := s.Create(ctx, tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyBuffer(struct{ io.Writer }{f}, bytes.NewReader(data), make([]byte, 32<<10)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(data)) {
		t.Fatalf("stat of the open file: %v %v", fi, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, tmp); !errors.Is(err, os.ErrExist) {
		t.Errorf("Create over an existing file: %v, want os.ErrExist", err)
	}
	if err := s.Rename(ctx, tmp, final); err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(ctx, final)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{r}, make([]byte, 48<<10)); err != nil {
		t.Fatal(err)
	}
	if off, err := r.Seek(0, io.SeekEnd); err != nil || off != int64(len(data)) {
		t.Errorf("seek to the end: %d %v", off, err)
	}
	r.Close()
	if want := sha256.Sum256(data); !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatal("read back differs")
	}
	g, err := s.Create(ctx, tmp)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if err := s.Rename(ctx, tmp, final); !errors.Is(err, os.ErrExist) {
		t.Errorf("rename onto an existing file: %v, want os.ErrExist", err)
	}
	list, err := s.ReadDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int64{}
	for _, e := range list {
		sizes[e.Name()] = e.Size()
	}
	if sizes[final] != int64(len(data)) || sizes[tmp] != 0 || len(list) < 2 {
		t.Errorf("ReadDir over SMB1: %d entries, %s %d bytes, %s %d bytes", len(list), final, sizes[final], tmp, sizes[tmp])
	}
	if _, ok := sizes["."]; ok {
		t.Error(`ReadDir lists "."`)
	}
	for _, n := range []string{tmp, final} {
		if err := s.Remove(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Stat(ctx, final); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat after remove: %v", err)
	}
	// A server that requires SMB1 signing (as a Windows DC does).
	ss, err := dialLab(t, lab, "//"+lab.SMB1IP+":1445/scans", "scanuser", "", "MFP01", smbclient.DialOptions{MaxFailures: 1})
	if err != nil {
		t.Fatal(err)
	}
	sf, err := ss.Create(ctx, tmp)
	if err == nil {
		_, err = sf.Write(data[:5000])
		sf.Close()
	}
	if err == nil {
		err = ss.Remove(ctx, tmp)
	}
	ss.Close()
	if err != nil {
		t.Fatalf("signed SMB1 session: %v", err)
	}
	// Causes over SMB1 as over SMB2.
	for _, tc := range []struct {
		dest, pw, op string
		want         scanwarden.Cause
	}{
		{"//" + lab.SMB1IP + "/scans", wrongPassword, "logon", scanwarden.CauseBadCredentials},
		{"//" + lab.SMB1IP + "/nosuchshare", "", "tree connect", scanwarden.CauseShareNotFound},
		{"//" + lab.SMB1IP + "/scans/no/such", "", "folder", scanwarden.CausePathNotFound},
	} {
		_, err := dialLab(t, lab, tc.dest, "scanuser", tc.pw, "", smbclient.DialOptions{MaxFailures: 1})
		var e *smbclient.Error
		if !errors.As(err, &e) || e.Op != tc.op || e.Cause != tc.want {
			t.Errorf("%s: %v, want %s at %s", tc.dest, err, tc.want, tc.op)
		}
	}
}

// TestLabDialSMB1ListMany: a listing longer than one answer (512 entries)
// continues with FIND_NEXT2.
func TestLabDialSMB1ListMany(t *testing.T) {
	lab := testlab.Require(t)
	s, err := dialLab(t, lab, "//"+lab.SMB1IP+"/scans", "scanuser", "", "", smbclient.DialOptions{MaxFailures: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	prefix := "many-" + time.Now().Format("150405.000000") + "-"
	const n = 600
	var names []string
	defer func() {
		for _, name := range names {
			s.Remove(ctx, name)
		}
	}()
	for i := range n {
		name := prefix + strings.Repeat("x", i%40) + "-" + strconv.Itoa(i)
		f, err := s.Create(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		f.Close()
	}
	list, err := s.ReadDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range list {
		if strings.HasPrefix(e.Name(), prefix) {
			seen[e.Name()] = true
		}
	}
	if len(seen) != n {
		t.Fatalf("ReadDir over SMB1 lists %d of the %d files", len(seen), n)
	}
}
