package receiver_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

// dc2Hosts resolves names through the lab's dc2 DNS (the office DNS of
// realm NTLMOFF.TEST) but offers no SRV lookups: the KDC then comes from
// SMBRemote.Kerberos, the [ad] host, as the checks' does.
type dc2Hosts struct{ r *net.Resolver }

func (h dc2Hosts) LookupHost(ctx context.Context, host string) ([]string, error) {
	return h.r.LookupHost(ctx, host)
}

// A scan held for a destination of auth kerberos on the lab's server that
// refuses NTLM (dc2, `ntlm auth = disabled`) is delivered over Kerberos and
// verified; the realm's KDC is the one SMBRemote.Kerberos names.
func TestLabDeliverKerberosNTLMBlocked(t *testing.T) {
	lab := testlab.Require(t)
	if lab.DC2IP == "" {
		testlab.Missing(t, "the lab has no dc2 (SWLAB_DC2_IP unset): run testlab/lab up again")
	}
	sub := "rxk-" + time.Now().Format("150405.000")
	local := filepath.Join(lab.Dir, "dc2", "shares", "scans", sub)
	if err := os.Mkdir(local, 0o777); err != nil {
		testlab.Missing(t, fmt.Sprintf("lab share folder not writable here: %v", err))
	}
	os.Chmod(local, 0o777)
	t.Cleanup(func() { os.RemoveAll(local) })
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(lab.DC2IP, "53"))
	}}
	target := scanwarden.Target{Host: lab.DC2Host, Share: "scans", Path: sub, User: lab.Domain2 + `\kim`,
		Password: scanwardenSecret(lab.Password), Workstation: "MFP01", Auth: scanwarden.AuthKerberos}
	dests := staticDests{{Name: "kim-scans", Folder: "kim-scans", Target: target}}
	ledger := &smbclient.MemoryLedger{}
	remote := receiver.SMBRemote{Ledger: ledger, MaxFailures: 2, Timeout: 5 * time.Second,
		Kerberos: smbclient.Kerberos{KDCs: []string{lab.DC2IP}}, Resolver: dc2Hosts{res}}
	e := newEnv(t, opts{remote: remote, dests: dests})
	body := pdf("held for a Kerberos destination")
	if err := e.put("kim-scans/doc.pdf", body, false); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(10*time.Second, "delivered", func(r []receiver.Scan) bool {
		for _, s := range r {
			if s.State == receiver.Failed {
				t.Fatalf("delivery failed: %s", s.Error)
			}
		}
		return count(r, receiver.Delivered) == 1
	})
	got, err := os.ReadFile(filepath.Join(local, rows[0].RemoteName))
	if err != nil || sum(got) != rows[0].SHA256 || sum(got) != sum(body) {
		t.Fatalf("the server's copy of %s: %v", rows[0].RemoteName, err)
	}
}
