package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/smbclient"
)

// The forwarder's Kerberos hints are [ad]'s domain and DC, as the checks'
// (ad.Directory.Into), and it asks [ad] about accounts; neither without
// [ad].
func TestForwardingKerberosHints(t *testing.T) {
	cfg := config.Defaults()
	cfg.AD = config.AD{URL: "ldaps://dc1.kyolab.test", BindUser: "svc", Password: scanwarden.NewSecret("x")}
	r, err := Forwarding(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := r.Kerberos; k.Realm != "kyolab.test" || !slices.Equal(k.KDCs, []string{"dc1.kyolab.test"}) {
		t.Fatalf("hints %+v, want realm kyolab.test, KDC dc1.kyolab.test", k)
	}
	if r.Accounts == nil {
		t.Fatal("with [ad]: no account lookup")
	}
	if r.MaxFailures != cfg.Checks.MaxFailures || r.Window != cfg.Checks.FailureWindow.D() || r.Timeout != cfg.Checks.Timeout.D() {
		t.Fatalf("budget %d/%s/%s, want [checks]'", r.MaxFailures, r.Window, r.Timeout)
	}
	r, err = Forwarding(config.Defaults(), nil)
	if err != nil || r.Kerberos.Realm != "" || r.Kerberos.KDCs != nil || r.Accounts != nil {
		t.Fatalf("without [ad]: %+v, %v", r, err)
	}
	cfg.AD.CA = "/nonexistent/ca.pem"
	if r, err := Forwarding(cfg, nil); err == nil || r.Accounts != nil {
		t.Fatalf("[ad] with an unreadable CA: %+v, %v; want an error naming it and no directory", r, err)
	}
}

// A reload that adds [ad] and changes [checks]' budget reaches the running
// share's forwarder (systemctl reload, no restart): the deliveries from then
// on get [ad]'s Kerberos hints and account lookup and the new budget.
func TestReloadGivesTheForwarderAD(t *testing.T) {
	m := serveWithReceiver(t)
	before := *m.recv.remote.r.Load()
	if before.Accounts != nil || before.Kerberos.Realm != "" || before.MaxFailures != config.Defaults().Checks.MaxFailures {
		t.Fatalf("without [ad]: %+v", before)
	}
	pw := filepath.Join(t.TempDir(), "ad.pw")
	os.WriteFile(pw, []byte("x\n"), 0o600)
	f, err := os.OpenFile(m.Config.File, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[checks]\nmax_failures = 1\n[ad]\nurl = \"ldaps://dc1.kyolab.test\"\nbind_user = \"svc\"\npassword_file = %q\n", pw)
	f.Close()
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	after := *m.recv.remote.r.Load()
	if after.Accounts == nil || after.Kerberos.Realm != "kyolab.test" || !slices.Equal(after.Kerberos.KDCs, []string{"dc1.kyolab.test"}) || after.MaxFailures != 1 {
		t.Fatalf("after the reload with [ad]: %+v", after)
	}
}

// countingAccounts is a directory that counts the questions it is asked
// and fails while err is set (a fake: the caching is what is tested).
type countingAccounts struct {
	asked int
	err   error
}

func (c *countingAccounts) Account(_ context.Context, typed, _ string) (*smbclient.Account, error) {
	c.asked++
	if c.err != nil {
		return nil, c.err
	}
	return &smbclient.Account{Found: true, SAM: "asmith", NetBIOSDomain: "KYOLAB", UPN: typed}, nil
}

// The forwarder's account lookup asks the directory once per user name
// and workstation within its TTL, again after it; an error is not kept.
func TestAccountCache(t *testing.T) {
	ctx := context.Background()
	dir := &countingAccounts{}
	c := newAccountCache(dir, 30*time.Second)
	now := time.Unix(1_800_000_000, 0)
	c.now = func() time.Time { return now }
	ask := func(typed, ws string) (*smbclient.Account, error) { return c.Account(ctx, typed, ws) }
	if a, err := ask("a.smith@kyolab.test", "MFP01"); err != nil || a.SAM != "asmith" {
		t.Fatalf("%+v %v", a, err)
	}
	ask("a.smith@kyolab.test", "MFP01")
	now = now.Add(29 * time.Second)
	ask("a.smith@kyolab.test", "MFP01")
	if dir.asked != 1 {
		t.Fatalf("asked %d times within the TTL, want 1", dir.asked)
	}
	ask("a.smith@kyolab.test", "MFP02")
	if dir.asked != 2 {
		t.Fatalf("another workstation: asked %d times, want 2", dir.asked)
	}
	now = now.Add(2 * time.Second)
	dir.err = errors.New("ldaps://dc1: connection refused")
	if _, err := ask("a.smith@kyolab.test", "MFP01"); err == nil {
		t.Fatal("after the TTL, the directory down: an old answer, want its error")
	}
	dir.err = nil
	ask("a.smith@kyolab.test", "MFP01")
	ask("a.smith@kyolab.test", "MFP01")
	if dir.asked != 4 {
		t.Fatalf("asked %d times, want 4 (the error not kept, the next answer kept)", dir.asked)
	}
	if len(c.m) != 2 {
		t.Errorf("%d answers kept, want 2", len(c.m))
	}
}
