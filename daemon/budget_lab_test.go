package daemon

// Checks and deliveries of one destination spend one failed-logon budget
// per AD account, also when the MFP stores a UPN whose prefix is not the
// account's sAMAccountName.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/ad"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

// sentLedger is a ledger that counts the logons it let go, by account key.
type sentLedger struct {
	smbclient.Ledger
	mu   sync.Mutex
	sent map[string]int
}

func (l *sentLedger) Reserve(ctx context.Context, a smbclient.Attempt, since time.Time, budget int) (int64, *smbclient.Refusal, error) {
	id, r, err := l.Ledger.Reserve(ctx, a, since, budget)
	if id != 0 {
		l.mu.Lock()
		l.sent[a.Account]++
		l.mu.Unlock()
	}
	return id, r, err
}

// TestLabUPNChecksAndDeliveriesOneBudget: an MFP stores s.upnN@kyolab.test
// for the account swupnN with a wrong password (the admin retyped it
// wrong twice more). Scheduled checks (the daemon's options, [ad]) and the
// forwarder's deliveries (Forwarding, [ad]) alternate: every logon either
// sends is counted under the one key kyolab\swupnN, and together they send
// no more than the budget — the DC's badPwdCount stays at or below it and
// the account is never locked (lab threshold 3). On the old code the
// deliveries counted under kyolab\s.upnN with a budget of their own: 4
// logons over NTLM, 3 over Kerberos, which locked the account (Samba does
// not count an NTLM logon by a UPN whose prefix is not the sAMAccountName
// in badPwdCount, Windows does; its KDC counts the Kerberos ones).
func TestLabUPNChecksAndDeliveriesOneBudget(t *testing.T) {
	lab := testlab.Require(t)
	for _, auth := range []scanwarden.Auth{scanwarden.AuthNTLM, scanwarden.AuthKerberos} {
		t.Run(string(auth), func(t *testing.T) { upnOneBudget(t, lab, auth) })
	}
}

func upnOneBudget(t *testing.T, lab *testlab.Lab, auth scanwarden.Auth) {
	ctx := context.Background()
	n := time.Now().UnixNano() % 1e6
	sam, upn := fmt.Sprintf("swupn%d", n), fmt.Sprintf("s.upn%d@%s", n, lab.DNSDomain)
	lab.AddUser(t, sam, upn)

	files := t.TempDir()
	adPw := filepath.Join(files, "ad.pw")
	if err := os.WriteFile(adPw, []byte(lab.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, `
[checks]
max_failures = 2
timeout = "5s"
[ad]
url = "ldaps://`+lab.DCHost+`"
bind_user = "ldapreader@`+lab.DNSDomain+`"
password_file = "`+adPw+`"
ca = "`+lab.CA+`"
`)
	st := testStore(t, cfg)
	defer st.Close()
	led := &sentLedger{Ledger: st.Ledger(), sent: map[string]int{}}

	// The checks as checksPart.Open builds them.
	opts := smbcheck.Options{MaxFailures: cfg.Checks.MaxFailures, Window: cfg.Checks.FailureWindow.D(), Ledger: led,
		StepTimeout: cfg.Checks.Timeout.D(), NoWrite: true}
	d, err := openAD(cfg.AD)
	if err != nil {
		t.Fatal(err)
	}
	d.Into(&opts)
	remote, err := Forwarding(cfg, led)
	if err != nil {
		t.Fatal(err)
	}
	target := func(pw string) scanwarden.Target {
		return scanwarden.Target{Host: lab.DCHost, Share: "scans", User: upn, Password: scanwarden.NewSecret(pw), Workstation: "MFP01", Auth: auth}
	}
	deliveriesRefused := 0
	for i := range 3 {
		if rep := smbcheck.Run(ctx, target(fmt.Sprintf("Wrong.Check-%d", i)), opts); rep.OK() {
			t.Fatalf("check %d passed with a wrong password", i)
		}
		f, err := remote.Open(ctx, target(fmt.Sprintf("Wrong.Deliver-%d", i)))
		if err == nil {
			f.Close()
			t.Fatalf("delivery %d logged on with a wrong password", i)
		}
		if !errors.Is(err, receiver.ErrLogon) {
			t.Fatalf("delivery %d: %v, want a failed or refused logon", i, err)
		}
		var se *smbclient.Error
		if errors.As(err, &se) && se.Refusal != nil {
			deliveriesRefused++
		}
	}
	u := labADUser(t, lab, sam)
	t.Logf("logons sent by key %v; deliveries kept back %d of 3; DC: badPwdCount %d, locked %v", led.sent, deliveriesRefused, u.BadPwdCount, u.Locked)
	key := smbclient.AccountKey(lab.Domain, sam)
	total := 0
	for k, v := range led.sent {
		total += v
		if k != key {
			t.Errorf("%d logon(s) counted under %s, want every one under %s", v, k, key)
		}
	}
	if total == 0 || total > cfg.Checks.MaxFailures {
		t.Errorf("%d logons sent, want 1..%d (the budget)", total, cfg.Checks.MaxFailures)
	}
	if u.Locked || u.BadPwdCount > cfg.Checks.MaxFailures {
		t.Fatalf("DC: badPwdCount %d (budget %d), locked %v", u.BadPwdCount, cfg.Checks.MaxFailures, u.Locked)
	}
	if deliveriesRefused == 0 {
		t.Error("no delivery was kept back by the budget the checks spent")
	}
}

// labADUser reads sam's state on the lab DC.
func labADUser(t *testing.T, lab *testlab.Lab, sam string) *ad.User {
	t.Helper()
	d, err := ad.New(ad.Config{URL: "ldaps://" + lab.DCHost, BindUser: "ldapreader@" + lab.DNSDomain,
		Password: scanwarden.NewSecret(lab.Password), CAFile: lab.CA, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	u, err := d.User(context.Background(), lab.Domain+`\`+sam, "")
	if err != nil || !u.Found {
		t.Fatalf("AD %s: %v %+v", sam, err, u)
	}
	return u
}

// countedUnder reports whether st's ledger holds a logon counted under
// account key (a budget of 1 is then spent); it leaves nothing behind.
func countedUnder(t *testing.T, led smbclient.Ledger, key string) bool {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	id, refused, err := led.Reserve(ctx, smbclient.Attempt{Account: key, Form: "probe", Typed: "probe", At: now}, now.Add(-time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	if id != 0 {
		if err := led.Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Cancelled}); err != nil {
			t.Fatal(err)
		}
	}
	return refused != nil
}

// TestLabReloadADReachesDeliveries: serve runs its share without [ad]; a
// delivery's failed logon by a UPN is counted under the UPN's prefix (all
// it can know). [ad] is added and the daemon reloaded (systemctl reload):
// without a restart of smbd, the next delivery's logon is counted under
// the directory's account (kyolab\swupnN), as the checks count it, and a
// delivery that was in flight across the reload finishes its write.
func TestLabReloadADReachesDeliveries(t *testing.T) {
	lab := testlab.Require(t)
	ctx := context.Background()
	n := time.Now().UnixNano() % 1e6
	sam, upn := fmt.Sprintf("swrld%d", n), fmt.Sprintf("s.rld%d@%s", n, lab.DNSDomain)
	lab.AddUser(t, sam, upn)
	m := serveWithReceiver(t)
	led := m.Store().Ledger()
	target := func(pw string) scanwarden.Target {
		return scanwarden.Target{Host: lab.DCHost, Share: "scans", User: upn, Password: scanwarden.NewSecret(pw), Workstation: "MFP01"}
	}
	samKey, upnKey := smbclient.AccountKey(lab.Domain, sam), smbclient.AccountKey(lab.Domain, strings.Split(upn, "@")[0])

	inFlight, err := m.recv.remote.Open(ctx, target(lab.Password))
	if err != nil {
		t.Fatalf("the right password: %v", err)
	}
	defer inFlight.Close()
	if _, err := m.recv.remote.Open(ctx, target("Wrong.Before-1")); !errors.Is(err, receiver.ErrLogon) {
		t.Fatalf("wrong password before the reload: %v, want a failed logon", err)
	}
	if !countedUnder(t, led, upnKey) || countedUnder(t, led, samKey) {
		t.Fatalf("without [ad]: the failure is not counted under %s alone", upnKey)
	}
	smbdPid := func() int {
		st, err := m.recv.r.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.SmbdPid
	}
	pid := smbdPid()

	adPw := filepath.Join(t.TempDir(), "ad.pw")
	if err := os.WriteFile(adPw, []byte(lab.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(m.Config.File, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[ad]\nurl = \"ldaps://%s\"\nbind_user = \"ldapreader@%s\"\npassword_file = %q\nca = %q\n", lab.DCHost, lab.DNSDomain, adPw, lab.CA)
	f.Close()
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.recv.remote.Open(ctx, target("Wrong.After-2")); !errors.Is(err, receiver.ErrLogon) {
		t.Fatalf("wrong password after the reload: %v, want a failed logon", err)
	}
	if !countedUnder(t, led, samKey) {
		t.Fatalf("after the reload with [ad]: the delivery's failure is not counted under the account %s", samKey)
	}
	if p := smbdPid(); p != pid {
		t.Errorf("smbd pid %d → %d: the reload restarted the share", pid, p)
	}
	name := fmt.Sprintf("reload-%d.pdf", n)
	w, err := inFlight.Create(ctx, name)
	if err == nil {
		_, err = w.Write([]byte("%PDF-1.4 written across a reload\n"))
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("the delivery in flight across the reload: %v", err)
	}
	inFlight.Remove(ctx, name)
}

// TestLabReloadADKerberosDelivers: a destination of auth kerberos on the
// lab's server that refuses NTLM (dc2), whose realm's KDCs DNS does not
// name (the office DNS answers its host name, not its SRV records): serve
// without [ad] cannot deliver there (no KDC). [ad] naming dc2 is added and
// the daemon reloaded: the next delivery logs on over Kerberos with [ad]'s
// host as the KDC and writes its file — without a restart.
func TestLabReloadADKerberosDelivers(t *testing.T) {
	lab := testlab.Require(t)
	if lab.DC2IP == "" {
		testlab.Missing(t, "the lab has no dc2 (SWLAB_DC2_IP unset): run testlab/lab up again")
	}
	ctx := context.Background()
	sub := fmt.Sprintf("reload-krb-%d", time.Now().UnixNano()%1e6)
	local := filepath.Join(lab.Dir, "dc2", "shares", "scans", sub)
	if err := os.Mkdir(local, 0o777); err != nil {
		testlab.Missing(t, fmt.Sprintf("lab share folder not writable here: %v", err))
	}
	os.Chmod(local, 0o777)
	t.Cleanup(func() { os.RemoveAll(local) })
	dc2DNS := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(lab.DC2IP, "53"))
	}}
	m := serveReceiver(t, func(m *Main) { m.resolver = dc2DNS })
	target := scanwarden.Target{Host: lab.DC2Host, Share: "scans", Path: sub, User: lab.Domain2 + `\kim`,
		Password: scanwarden.NewSecret(lab.Password), Workstation: "MFP01", Auth: scanwarden.AuthKerberos}

	f, err := m.recv.remote.Open(ctx, target)
	if err == nil {
		f.Close()
		t.Fatal("delivered over Kerberos without [ad]: DNS named the KDC, the test proves nothing")
	}
	var se *smbclient.Error
	if !errors.As(err, &se) || se.Cause != scanwarden.CauseKDCUnreachable {
		t.Fatalf("without [ad]: %v, want kdc-unreachable", err)
	}
	adPw := filepath.Join(t.TempDir(), "ad.pw")
	if err := os.WriteFile(adPw, []byte(lab.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cf, err := os.OpenFile(m.Config.File, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(cf, "[ad]\nurl = \"ldaps://%s\"\nbind_user = \"kim@%s\"\npassword_file = %q\nca = %q\n", lab.DC2IP, lab.DNSDomain2, adPw, lab.CA)
	cf.Close()
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	f, err = m.recv.remote.Open(ctx, target)
	if err != nil {
		t.Fatalf("after the reload with [ad]: %v", err)
	}
	defer f.Close()
	body := []byte("%PDF-1.4 delivered over Kerberos after a reload\n")
	w, err := f.Create(ctx, "doc.pdf")
	if err == nil {
		_, err = w.Write(body)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("write after the reload: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(local, "doc.pdf")); err != nil || string(got) != string(body) {
		t.Fatalf("dc2's copy: %q, %v", got, err)
	}
}

// TestLabForwardingADDownFallsBack: [ad] names a DC that does not answer
// (the lab's ghost address): a delivery does not wait for it beyond the
// timeout nor fail for it — its logon goes on, counted as without a
// directory (under the UPN's prefix, as a check that could not ask counts
// it), and the log says that the directory could not be asked.
func TestLabForwardingADDownFallsBack(t *testing.T) {
	lab := testlab.Require(t)
	if lab.GhostIP == "" {
		testlab.Missing(t, "the lab has no ghost address (SWLAB_GHOST_IP unset)")
	}
	ctx := context.Background()
	n := time.Now().UnixNano() % 1e6
	sam, upn := fmt.Sprintf("swdown%d", n), fmt.Sprintf("s.down%d@%s", n, lab.DNSDomain)
	lab.AddUser(t, sam, upn)
	adPw := filepath.Join(t.TempDir(), "ad.pw")
	os.WriteFile(adPw, []byte(lab.Password+"\n"), 0o600)
	cfg := testConfig(t, "[checks]\ntimeout = \"5s\"\n[ad]\nurl = \"ldaps://"+lab.GhostIP+"\"\nbind_user = \"ldapreader@"+lab.DNSDomain+
		"\"\npassword_file = \""+adPw+"\"\nca = \""+lab.CA+"\"\n")
	st := testStore(t, cfg)
	defer st.Close()
	remote, err := Forwarding(cfg, st.Ledger())
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	remote.Logger = slog.New(slog.NewTextHandler(logs, nil))
	start := time.Now()
	_, err = remote.Open(ctx, scanwarden.Target{Host: lab.DCHost, Share: "scans", User: upn, Password: scanwarden.NewSecret("Wrong.Down-1"), Workstation: "MFP01"})
	if !errors.Is(err, receiver.ErrLogon) {
		t.Fatalf("delivery with the directory down: %v, want the logon sent and refused", err)
	}
	if took := time.Since(start); took > 12*time.Second {
		t.Errorf("took %s", took)
	}
	if !countedUnder(t, st.Ledger(), smbclient.AccountKey(lab.Domain, strings.Split(upn, "@")[0])) {
		t.Error("the failure is not counted under the UPN's prefix")
	}
	if !strings.Contains(logs.String(), "Active Directory could not be asked") || strings.Contains(logs.String(), "Wrong.Down-1") {
		t.Errorf("log: %s", logs.String())
	}
}
