package smbcheck

// Kerberos and NTLM-refusing servers against the lab's second AD DC (dc2,
// realm NTLMOFF.TEST, `ntlm auth = disabled`) and its KDC run 10 minutes
// ahead (kdcskew).

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

func requireDC2(t *testing.T) *testlab.Lab {
	t.Helper()
	lab := testlab.Require(t)
	if lab.DC2IP == "" {
		testlab.Missing(t, "the lab has no dc2 (SWLAB_DC2_IP unset): run testlab/lab up again")
	}
	return lab
}

// dc2Resolver asks dc2's DNS: the office DNS that knows realm NTLMOFF.TEST
// (its A and _kerberos SRV records).
func dc2Resolver(lab *testlab.Lab) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(lab.DC2IP, "53"))
	}}
}

// hostsOnly resolves names through r but offers no SRV lookups: KDCs then
// come from Options.KDCs (the [ad] host), as when DNS lacks the records.
type hostsOnly struct{ r *net.Resolver }

func (h hostsOnly) LookupHost(ctx context.Context, host string) ([]string, error) {
	return h.r.LookupHost(ctx, host)
}

// badPwdCount reads an account's badPwdCount from dc2's database.
func badPwdCount(t *testing.T, lab *testlab.Lab, user string) int {
	t.Helper()
	out, err := exec.Command("ldbsearch", "-H", filepath.Join(lab.Dir, "dc2/private/sam.ldb"),
		"(sAMAccountName="+user+")", "badPwdCount").CombinedOutput()
	if err != nil {
		t.Fatalf("ldbsearch: %v: %s", err, out)
	}
	m := regexp.MustCompile(`(?m)^badPwdCount: (\d+)$`).FindSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// outcomeLedger records how each attempt was resolved.
type outcomeLedger struct {
	smbclient.Ledger
	mu   sync.Mutex
	got  []smbclient.OutcomeKind
	sent int
}

func (l *outcomeLedger) Reserve(ctx context.Context, a smbclient.Attempt, since time.Time, budget int) (int64, *smbclient.Refusal, error) {
	id, r, err := l.Ledger.Reserve(ctx, a, since, budget)
	if id != 0 {
		l.mu.Lock()
		l.sent++
		l.mu.Unlock()
	}
	return id, r, err
}

func (l *outcomeLedger) Resolve(ctx context.Context, id int64, o smbclient.Outcome) error {
	l.mu.Lock()
	l.got = append(l.got, o.Kind)
	l.mu.Unlock()
	return l.Ledger.Resolve(ctx, id, o)
}

// TestLabKerberosNTLMBlocked: the MFP's NTLM logon refused, the truth
// learned over Kerberos; the wrong password sent is counted, and dc2's
// badPwdCount may not rise by more.
func TestLabKerberosNTLMBlocked(t *testing.T) {
	testLabKerberos(t, true)
}

// TestLabKerberosAuth: destinations that log on over Kerberos (auth
// kerberos and auto) and each Kerberos failure.
func TestLabKerberosAuth(t *testing.T) {
	testLabKerberos(t, false)
}

func testLabKerberos(t *testing.T, blocked bool) {
	lab := requireDC2(t)
	res := dc2Resolver(lab)
	dest := "//" + lab.DC2Host + "/scans"
	kw0, ks0 := badPwdCount(t, lab, "kwrong"), badPwdCount(t, lab, "kskew")
	wrong := 0
	run := func(t *testing.T, dest, user, pw string, auth scanwarden.Auth, o Options, want scanwarden.Cause) Report {
		t.Helper()
		if o.Resolver == nil {
			o.Resolver = res
		}
		if o.MaxFailures == 0 {
			o.MaxFailures = 2
		}
		o.StepTimeout = 5 * time.Second
		tg := labTarget(t, lab, dest, user, pw)
		tg.Auth = auth
		r := Run(context.Background(), tg, o)
		if r.Verdict.Cause != want {
			t.Fatalf("verdict %s, want %s%s", r.Verdict.Cause, want, stepsString(r))
		}
		if strings.Contains(stepsString(r)+r.Verdict.Summary+r.Verdict.Fix, lab.Password) {
			t.Fatal("the password appears in the report")
		}
		return r
	}
	sessionEv := func(t *testing.T, r Report, key string, want any) {
		t.Helper()
		s := r.Step(StepSession)
		if s == nil {
			t.Fatalf("no session step%s", stepsString(r))
		}
		if got := s.Evidence[key]; got != want {
			t.Fatalf("session evidence %s = %v, want %v%s", key, got, want, stepsString(r))
		}
	}
	if blocked {
		ntlmBlockedCases(t, lab, dest, run, sessionEv, &wrong)
	} else {
		kerberosCases(t, lab, dest, res, run, sessionEv, &wrong)
	}
	if kw := badPwdCount(t, lab, "kwrong") - kw0; kw > wrong || kw < 1 {
		t.Errorf("kwrong's badPwdCount rose by %d for %d wrong-password cases", kw, wrong)
	} else {
		t.Logf("kwrong's badPwdCount rose by %d for %d wrong-password cases; kskew's by %d", kw, wrong, badPwdCount(t, lab, "kskew")-ks0)
	}
}

type runFn func(t *testing.T, dest, user, pw string, auth scanwarden.Auth, o Options, want scanwarden.Cause) Report
type evFn func(t *testing.T, r Report, key string, want any)

func ntlmBlockedCases(t *testing.T, lab *testlab.Lab, dest string, run runFn, sessionEv evFn, wrong *int) {
	t.Run("ntlm-blocked, password right", func(t *testing.T) {
		led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
		r := run(t, dest, lab.Domain2+`\kim`, "", scanwarden.AuthNTLM, Options{Ledger: led}, scanwarden.CauseNTLMBlocked)
		sessionEv(t, r, "kerberos", "ok")
		sessionEv(t, r, "kerberos_realm", lab.Realm2)
		sessionEv(t, r, "kerberos_kdc_source", "DNS SRV _kerberos._tcp."+lab.DNSDomain2)
		sessionEv(t, r, "nt_status", ntstatus.NTLMBlocked.String())
		if !strings.Contains(r.Verdict.Summary, "password is right") || !strings.Contains(r.Verdict.Fix, "NTLM exceptions") || len(r.Verdict.Also) != 0 {
			t.Errorf("verdict %+v", r.Verdict)
		}
		if w := stepIs(t, r, StepWrite, StatusOK); w == nil {
			t.Fatal("no write step")
		}
		// The NTLM try is resolved as cancelled, the Kerberos one as a success.
		if !slices.Equal(led.got, []smbclient.OutcomeKind{smbclient.Cancelled, smbclient.Succeeded}) {
			t.Errorf("ledger outcomes %v, want [cancelled succeeded]", led.got)
		}
	})
	t.Run("ntlm-blocked, password wrong", func(t *testing.T) {
		*wrong++
		r := run(t, dest, lab.Domain2+`\kwrong`, "Wrong.Pass-"+strconv.FormatInt(time.Now().UnixNano(), 36), scanwarden.AuthNTLM, Options{}, scanwarden.CauseNTLMBlocked)
		sessionEv(t, r, "kerberos", "bad-credentials")
		if !slices.Contains(r.Verdict.Also, scanwarden.CauseBadCredentials) || !strings.Contains(r.Verdict.Summary, "password is wrong") ||
			!strings.Contains(r.Verdict.Fix, "Login Password") || !strings.Contains(r.Verdict.Fix, "NTLM exceptions") {
			t.Errorf("verdict %+v", r.Verdict)
		}
		stepIs(t, r, StepTree, StatusSkipped)
	})
	t.Run("ntlm-blocked, UPN", func(t *testing.T) {
		r := run(t, dest, "kim@"+lab.DNSDomain2, "", scanwarden.AuthNTLM, Options{}, scanwarden.CauseNTLMBlocked)
		sessionEv(t, r, "kerberos", "ok")
		sessionEv(t, r, "kerberos_principal", "kim@"+lab.Realm2)
	})
	t.Run("a third check after two NTLM refusals is replayed", func(t *testing.T) {
		led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
		for i := 1; i <= 3; i++ {
			r := run(t, dest, lab.Domain2+`\kim`, "", scanwarden.AuthNTLM, Options{Ledger: led, MaxFailures: 2, NoWrite: true}, scanwarden.CauseNTLMBlocked)
			sessionEv(t, r, "kerberos", "ok")
			if s := r.Step(StepSession); s.Evidence["not_replayed"] != nil {
				t.Fatalf("check %d not replayed: %v", i, s.Evidence["not_replayed"])
			}
		}
		if led.sent != 6 {
			t.Errorf("%d logons sent, want 6 (3 NTLM refused, 3 Kerberos)", led.sent)
		}
	})
}

func kerberosCases(t *testing.T, lab *testlab.Lab, dest string, res *net.Resolver, run runFn, sessionEv evFn, wrong *int) {
	t.Run("auth kerberos", func(t *testing.T) {
		var canary string
		o := Options{}
		o.Progress = func(s Step) {
			if s.ID == StepWrite {
				if n, ok := s.Evidence["canary"].(string); ok {
					canary = n
				}
			}
		}
		r := run(t, dest, lab.Domain2+`\kim`, "", scanwarden.AuthKerberos, o, scanwarden.CauseOK)
		sessionEv(t, r, "kerberos", "ok")
		stepIs(t, r, StepWrite, StatusOK)
		if r.Canary != "" {
			t.Errorf("leftover canary %s", r.Canary)
		}
		entries, err := os.ReadDir(filepath.Join(lab.Dir, "dc2/shares/scans"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.Contains(e.Name(), "scanwarden") || (canary != "" && e.Name() == canary) {
				t.Errorf("canary %s left in the share", e.Name())
			}
		}
	})
	t.Run("auth kerberos to the address", func(t *testing.T) {
		r := run(t, "//"+lab.DC2IP+"/scans", lab.Domain2+`\kim`, "", scanwarden.AuthKerberos, Options{}, scanwarden.CauseKerberosNeedsName)
		if !strings.Contains(r.Verdict.Fix, lab.DC2Host) {
			t.Errorf("fix does not name %s: %s", lab.DC2Host, r.Verdict.Fix)
		}
		sessionEv(t, r, "krb_error", "(7) KDC_ERR_S_PRINCIPAL_UNKNOWN Server not found in Kerberos database")
	})
	t.Run("auth kerberos, wrong password", func(t *testing.T) {
		*wrong++
		r := run(t, dest, "kwrong@"+lab.DNSDomain2, "Wrong.Pass-"+strconv.FormatInt(time.Now().UnixNano(), 36), scanwarden.AuthKerberos, Options{}, scanwarden.CauseBadCredentials)
		sessionEv(t, r, "krb_error", "(24) KDC_ERR_PREAUTH_FAILED Pre-authentication information was invalid")
	})
	t.Run("unknown principal", func(t *testing.T) {
		r := run(t, dest, "nosuchkrb@"+lab.DNSDomain2, "", scanwarden.AuthKerberos, Options{}, scanwarden.CauseUnknownUser)
		sessionEv(t, r, "krb_error", "(6) KDC_ERR_C_PRINCIPAL_UNKNOWN Client not found in Kerberos database")
	})
	t.Run("disabled account", func(t *testing.T) {
		r := run(t, dest, lab.Domain2+`\kdis`, "", scanwarden.AuthKerberos, Options{}, scanwarden.CauseAccountDisabled)
		sessionEv(t, r, "kerberos", string(scanwarden.CauseAccountDisabled))
	})
	t.Run("disabled account, ntlm", func(t *testing.T) {
		r := run(t, dest, lab.Domain2+`\kdis`, "", scanwarden.AuthNTLM, Options{}, scanwarden.CauseNTLMBlocked)
		sessionEv(t, r, "kerberos", string(scanwarden.CauseAccountDisabled))
		if !slices.Contains(r.Verdict.Also, scanwarden.CauseAccountDisabled) {
			t.Errorf("also %v, want account-disabled", r.Verdict.Also)
		}
	})
	t.Run("clock skew", func(t *testing.T) {
		r := run(t, dest, lab.Domain2+`\kskew`, "", scanwarden.AuthKerberos, Options{Resolver: hostsOnly{res}, KDCs: []string{lab.KDCSkewIP}}, scanwarden.CauseClockSkew)
		s := r.Step(StepSession)
		off, ok := s.Evidence["kdc_clock_offset_s"].(int64)
		if !ok || off < 540 || off > 660 {
			t.Fatalf("offset %v, want about 600 s%s", s.Evidence["kdc_clock_offset_s"], stepsString(r))
		}
		if !strings.Contains(r.Verdict.Summary, "+"+strconv.FormatInt(off, 10)+" s") {
			t.Errorf("summary does not give the offset: %s", r.Verdict.Summary)
		}
		sessionEv(t, r, "kerberos_kdc_source", "the [ad] host ("+lab.KDCSkewIP+")")
		t.Logf("%s: %s\nfix: %s", r.Verdict.Cause, r.Verdict.Summary, r.Verdict.Fix)
	})
	t.Run("no KDC", func(t *testing.T) {
		r := run(t, dest, lab.Domain2+`\kim`, "", scanwarden.AuthKerberos, Options{Resolver: hostsOnly{res}, KDCs: []string{lab.GhostIP}}, scanwarden.CauseKDCUnreachable)
		if !strings.Contains(r.Verdict.Summary, lab.GhostIP) {
			t.Errorf("summary does not name what was tried: %s", r.Verdict.Summary)
		}
	})
	t.Run("auto falls back to NTLM on dc1", func(t *testing.T) {
		// dc1's realm has SRV records in dc1's DNS (the system resolver);
		// to its address Kerberos has no ticket, so NTLM logs on.
		r := run(t, "//"+lab.DCIP+"/scans", lab.Domain+`\alice`, "", scanwarden.AuthAuto, Options{Resolver: net.DefaultResolver, NoWrite: true}, scanwarden.CauseOK)
		sessionEv(t, r, "kerberos", string(scanwarden.CauseKerberosNeedsName))
	})
}
