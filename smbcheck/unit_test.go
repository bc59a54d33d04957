package smbcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
)

func TestCandidateForms(t *testing.T) {
	typedOf := func(fs []smbclient.Form) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Typed)
		}
		return out
	}
	tests := []struct {
		name  string
		typed string
		h     formHints
		want  []string
	}{
		{"bare on a domain server", "john.doe", formHints{NetBIOSDomain: "KYOLAB", DNSDomain: "kyolab.test", ServerName: "DC1"},
			[]string{"john.doe@kyolab.test", `KYOLAB\john.doe`, `DC1\john.doe`, `.\john.doe`}},
		{"domain form typed", `KYOLAB\alice`, formHints{NetBIOSDomain: "KYOLAB", DNSDomain: "kyolab.test", ServerName: "DC1"},
			[]string{"alice@kyolab.test", "alice", `DC1\alice`, `.\alice`}},
		{"slash typo", "KYOLAB/alice", formHints{NetBIOSDomain: "KYOLAB", DNSDomain: "kyolab.test"},
			[]string{"alice@kyolab.test", `KYOLAB\alice`, "alice", `.\alice`}},
		{"upn on a standalone server", "scanuser@kyolab.test", formHints{NetBIOSDomain: "SMB2SRV", ServerName: "SMB2SRV"},
			[]string{`SMB2SRV\scanuser`, "scanuser", `.\scanuser`}},
		{"directory knows the account", "john.doe", formHints{NetBIOSDomain: "KYOLAB", DNSDomain: "kyolab.test", SAM: "jdoe", UPN: "john.doe@kyolab.test"},
			[]string{"john.doe@kyolab.test", `KYOLAB\jdoe`, "jdoe"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := typedOf(candidateForms(tc.typed, tc.h))
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	opErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: errno}}
	}
	tests := []struct {
		name string
		step string
		err  error
		want scanwarden.Cause
	}{
		{"logon failure", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.LogonFailure)}, scanwarden.CauseBadCredentials},
		{"disabled", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.AccountDisabled)}, scanwarden.CauseAccountDisabled},
		{"locked", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.AccountLockedOut)}, scanwarden.CauseAccountLocked},
		{"must change", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.PasswordMustChange)}, scanwarden.CausePasswordMustChange},
		{"expired pw", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.PasswordExpired)}, scanwarden.CausePasswordExpired},
		{"expired account", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.AccountExpired)}, scanwarden.CauseAccountExpired},
		{"workstation", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.InvalidWorkstation)}, scanwarden.CauseWorkstationRestricted},
		{"samba upn wrong password", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.NotFound)}, scanwarden.CauseBadCredentials},
		{"hours", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.InvalidLogonHours)}, scanwarden.CauseLogonHours},
		{"bad share", StepTree, &smb2.ResponseError{Code: uint32(ntstatus.BadNetworkName)}, scanwarden.CauseShareNotFound},
		{"share denied (library)", StepTree, fmt.Errorf("mount: %w", os.ErrPermission), scanwarden.CauseShareAccessDenied},
		{"create denied (library)", StepWrite, &os.PathError{Op: "open", Path: "x", Err: os.ErrPermission}, scanwarden.CauseNoWritePermission},
		{"delete denied (library)", "delete", &os.PathError{Op: "remove", Path: "x", Err: os.ErrPermission}, scanwarden.CauseNoDeletePermission},
		{"path missing (library)", StepPath, &os.PathError{Op: "stat", Path: "x", Err: os.ErrNotExist}, scanwarden.CausePathNotFound},
		{"samba max connections", StepTree, &smb2.ResponseError{Code: uint32(ntstatus.InsufficientResources)}, scanwarden.CauseConnectionLimit},
		{"resources on write", StepWrite, &smb2.ResponseError{Code: uint32(ntstatus.InsufficientResources)}, scanwarden.CauseServerResources},
		{"server resources", StepSession, &smb2.ResponseError{Code: uint32(ntstatus.InsuffServerResources)}, scanwarden.CauseServerResources},
		{"windows session limit", StepSession, smb2.ErrRequestNotAccepted, scanwarden.CauseConnectionLimit},
		{"disk full", StepWrite, &os.PathError{Op: "write", Path: "x", Err: &smb2.ResponseError{Code: uint32(ntstatus.DiskFull)}}, scanwarden.CauseDiskFull},
		{"our status type", StepSession, fmt.Errorf("x: %w", ntstatus.LogonFailure), scanwarden.CauseBadCredentials},
		{"dns", StepName, &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, scanwarden.CauseNameUnresolved},
		{"refused", StepTCP, opErr(syscall.ECONNREFUSED), scanwarden.CauseHostUnreachable},
		{"no route", StepTCP, opErr(syscall.EHOSTUNREACH), scanwarden.CauseHostUnreachable},
		{"tcp timeout", StepTCP, context.DeadlineExceeded, scanwarden.CauseHostUnreachable},
		{"smb timeout", StepNegotiate, fmt.Errorf("negotiate: %w", os.ErrDeadlineExceeded), scanwarden.CauseTimeout},
		{"unknown status", StepWrite, &smb2.ResponseError{Code: 0xC0FFEE00}, scanwarden.CauseUnknown},
		{"garbage", StepSession, errors.New("something odd"), scanwarden.CauseUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ev := classify(tc.step, tc.err)
			if got != tc.want {
				t.Errorf("classify(%s, %v) = %s, want %s (evidence %v)", tc.step, tc.err, got, tc.want, ev)
			}
			if ev["error"] == nil {
				t.Errorf("no raw error in evidence")
			}
		})
	}
}

// TestFakeWindowsSessionLimit provokes the one cause no lab peer can:
// STATUS_REQUEST_NOT_ACCEPTED from a Windows client edition at its
// 20-session limit (FAKE peer, see fakepeer_test.go).
func TestFakeWindowsSessionLimit(t *testing.T) {
	f := startFakeWindows(t, ntstatus.RequestNotAccepted)
	rep := Run(context.Background(), scanwarden.Target{Host: "127.0.0.1", Port: f.port(), Share: "scans", User: "scan", Password: scanwarden.NewSecret("pw")},
		Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second})
	if rep.Verdict.Cause != scanwarden.CauseConnectionLimit {
		t.Fatalf("verdict %s, want connection-limit; steps %s", rep.Verdict.Cause, stepsString(rep))
	}
	neg := rep.Step(StepNegotiate)
	if neg.Status != StatusWarn || !strings.Contains(neg.Detail, "20 inbound") || rep.Server.NetBIOSComputer != "SCANPC" {
		t.Errorf("negotiate step did not warn about the Windows 11 session limit: %+v", neg)
	}
	if rep.Verdict.KyoceraCode == "" || !strings.Contains(rep.Verdict.Fix, "20") {
		t.Errorf("verdict lacks code or fix: %+v", rep.Verdict)
	}
	if f.conns > 2 {
		t.Errorf("the check opened %d connections, want at most 2", f.conns)
	}
}

func stepsString(r Report) string {
	var b strings.Builder
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "\n  %s %s [%s] %s %s", s.ID, s.Status, s.Cause, s.Detail, FormatEvidence(s.Evidence))
	}
	return b.String()
}

func TestReportJSONHasNoSecret(t *testing.T) {
	f := startFakeWindows(t, ntstatus.LogonFailure)
	const pw = "Very-Secret-Pw-42"
	rep := Run(context.Background(), scanwarden.Target{Host: "127.0.0.1", Port: f.port(), Share: "scans", User: "scan", Password: scanwarden.NewSecret(pw)},
		Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second})
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), pw) || strings.Contains(stepsString(rep), pw) || strings.Contains(rep.Verdict.Summary+rep.Verdict.Fix, pw) {
		t.Fatal("the password appears in the report")
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"target", "steps", "verdict"} {
		if m[k] == nil {
			t.Errorf("JSON lacks %q", k)
		}
	}
	steps := m["steps"].([]any)
	for _, s := range steps {
		sm := s.(map[string]any)
		for _, k := range []string{"id", "status", "evidence", "ms"} {
			if _, ok := sm[k]; !ok {
				t.Errorf("step %v lacks %q", sm["id"], k)
			}
		}
	}
	v := m["verdict"].(map[string]any)
	for _, k := range []string{"cause", "kyocera_code", "summary", "fix"} {
		if _, ok := v[k]; !ok {
			t.Errorf("verdict lacks %q", k)
		}
	}
	if rep.Verdict.Cause != scanwarden.CauseBadCredentials {
		t.Errorf("verdict %s, want bad-credentials:%s", rep.Verdict.Cause, stepsString(rep))
	}
}

// TestServerVanishesMidLogon: a server that hangs up once the AUTHENTICATE
// has arrived gives a report that says so, and the attempt counts as a
// failure: the DC behind the server may have counted it (a dropped attempt
// once let a later check exceed the budget). FAKE peer: a real server does
// not hang up on demand.
func TestServerVanishesMidLogon(t *testing.T) {
	f := startFakeWindows(t, 0)
	f.vanish = true
	led := &recordingLedger{}
	rep := Run(context.Background(), scanwarden.Target{Host: "127.0.0.1", Port: f.port(), Share: "scans", User: "scan", Password: scanwarden.NewSecret("pw")},
		Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second, Ledger: led})
	s := rep.Step(StepSession)
	if rep.OK() || s == nil || s.Status != StatusFail || !strings.Contains(s.Detail, "EOF") {
		t.Fatalf("verdict %s:%s", rep.Verdict.Cause, stepsString(rep))
	}
	if led.reserved != 1 {
		t.Fatalf("a logon whose AUTHENTICATE left was not counted (%d reserved)", led.reserved)
	}
	if len(led.outcomes) != 1 || led.outcomes[0].Kind != smbclient.Failed || led.outcomes[0].Cause == "" {
		t.Errorf("the vanished logon was not recorded as a failure: %+v", led.outcomes)
	}
}

// recordingLedger is a memory ledger that keeps what was reserved and how
// each attempt was resolved.
type recordingLedger struct {
	smbclient.MemoryLedger
	mu       sync.Mutex
	reserved int
	outcomes []smbclient.Outcome
}

func (l *recordingLedger) Reserve(ctx context.Context, a smbclient.Attempt, since time.Time, budget int) (int64, *smbclient.Refusal, error) {
	id, r, err := l.MemoryLedger.Reserve(ctx, a, since, budget)
	if id != 0 {
		l.mu.Lock()
		l.reserved++
		l.mu.Unlock()
	}
	return id, r, err
}

func (l *recordingLedger) Resolve(ctx context.Context, id int64, o smbclient.Outcome) error {
	l.mu.Lock()
	l.outcomes = append(l.outcomes, o)
	l.mu.Unlock()
	return l.MemoryLedger.Resolve(ctx, id, o)
}

// TestZeroBudgetSendsNothing: MaxFailures 0 means zero — no AUTHENTICATE
// leaves (FAKE peer that would answer STATUS_LOGON_FAILURE).
func TestZeroBudgetSendsNothing(t *testing.T) {
	f := startFakeWindows(t, ntstatus.LogonFailure)
	led := &smbclient.MemoryLedger{}
	rep := Run(context.Background(), scanwarden.Target{Host: "127.0.0.1", Port: f.port(), Share: "scans", User: "scan", Password: scanwarden.NewSecret("pw")},
		Options{MaxFailures: 0, Ledger: led, StepTimeout: 5 * time.Second})
	s := rep.Step(StepSession)
	if s == nil || s.Evidence["not_replayed"] == nil || s.Evidence["budget"] != 0 {
		t.Fatalf("a logon was replayed with a budget of 0:%s", stepsString(rep))
	}
}

func TestTargetValidateFieldError(t *testing.T) {
	tests := []struct {
		t     scanwarden.Target
		field string
	}{
		{scanwarden.Target{Share: "s", User: "u"}, "host"},
		{scanwarden.Target{Host: "h", Port: 70000, Share: "s", User: "u"}, "port"},
		{scanwarden.Target{Host: "h", Share: "a:b", User: "u"}, "share"},
		{scanwarden.Target{Host: "h", Share: "s", Path: `a\..\b`, User: "u"}, "path"},
		{scanwarden.Target{Host: "h", Share: "s", User: " "}, "user"}, // "" is an anonymous logon
	}
	for _, tc := range tests {
		var fe *scanwarden.FieldError
		if err := tc.t.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want a FieldError for %s", tc.t, err, tc.field)
		}
	}
	r := Run(context.Background(), scanwarden.Target{Host: "h", Share: "s", User: " "}, Options{})
	if !strings.Contains(r.Verdict.Fix, "Login User Name") {
		t.Errorf("fix does not name the panel setting: %s", r.Verdict.Fix)
	}
}
