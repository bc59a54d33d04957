package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// Issue 18, "a fix on the DC side is seen", through serve: a destination
// whose stored password the DC no longer takes fails its scheduled check
// and opens an incident; the same password is then not replayed for the
// 30-minute window. The admin fixes the account instead of the MFP (sets
// the DC password to the one the MFP stores): with [ad], the next scheduled
// check — no "check now" — sees pwdLastSet after the failure, replays the
// stored password, passes, and the incident closes after close_after. Uses
// the lab account dcfix (one wrong logon, then good ones).
func TestLabServeDCFixClosesIncident(t *testing.T) {
	lab := testlab.Require(t)
	ctx := context.Background()
	setPassword := func(pw string) {
		t.Helper()
		out, err := exec.Command("samba-tool", "user", "setpassword", "dcfix", "--newpassword="+pw,
			"-H", "ldap://"+lab.DCIP, "-U", "Administrator%"+lab.AdminPassword).CombinedOutput()
		if err != nil {
			t.Fatalf("samba-tool user setpassword dcfix: %v\n%s", err, out)
		}
	}
	setPassword(lab.Password)
	t.Cleanup(func() { setPassword(lab.Password) })
	stored := fmt.Sprintf("Stored-%d-Mfp.7", time.Now().UnixNano()%1e9)

	files := t.TempDir()
	adPw := filepath.Join(files, "ad.pw")
	os.WriteFile(adPw, []byte(lab.Password+"\n"), 0o600)
	hook := newHookPeer(t)
	cfg := testConfig(t, `
[checks]
interval = "10s"
jitter = "0s"
max_failures = 2
failure_window = "30m"
timeout = "5s"
[incidents]
close_after = "4s"
[ad]
url = "ldaps://`+lab.DCHost+`"
bind_user = "ldapreader@`+lab.DNSDomain+`"
password_file = "`+adPw+`"
ca = "`+lab.CA+`"
[notify]
webhook_url = "`+hook.srv.URL+`/hook"
webhook_backoff = "100ms"
`)
	st := testStore(t, cfg)
	if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "dcfix", Host: lab.DCHost, Share: "scans", User: `KYOLAB\dcfix`,
		Workstation: "MFP01", Password: scanwarden.NewSecret(stored), Source: registry.SourceAdded}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	m, logs := startMain(t, cfg)
	openIncident := func() []incident.Incident {
		incs, _ := m.Store().Incidents().Incidents(ctx, store.IncidentFilter{Destination: "dcfix"})
		return incs
	}
	waitUntil(t, 40*time.Second, "an incident for dcfix's stored password", func() bool {
		incs := openIncident()
		return len(incs) == 1 && incs[0].State != incident.StateClosed
	})
	if c := openIncident()[0].Cause; c != scanwarden.CauseBadCredentials {
		t.Fatalf("incident cause %s, want bad-credentials", c)
	}
	// Without a fix the stored password is not replayed again: the next
	// scheduled check answers from the ledger.
	waitUntil(t, 30*time.Second, "a scheduled check answered from the ledger", func() bool {
		r, ok, err := m.Store().Reports().LatestReport(ctx, "dcfix")
		return err == nil && ok && r.Report.Verdict.FromLedger
	})

	fixed := time.Now()
	setPassword(stored)
	waitUntil(t, 40*time.Second, "incident.closed at the webhook after the fix on the DC", func() bool {
		for _, e := range hook.events() {
			if strings.HasPrefix(e, "incident.closed") {
				return true
			}
		}
		return false
	})
	t.Logf("DC password set to the stored one → incident closed by scheduled checks in %v (interval 10s, close_after 4s)",
		time.Since(fixed).Round(100*time.Millisecond))
	incs := openIncident()
	if len(incs) != 1 || incs[0].State != incident.StateClosed {
		t.Fatalf("incidents %+v", incs)
	}
	if r, ok, err := m.Store().Reports().LatestReport(ctx, "dcfix"); err != nil || !ok || !r.Report.OK() {
		t.Fatalf("latest report after the fix: %+v %v", r.Report.Verdict, err)
	}
	if strings.Contains(logs.String(), stored) || strings.Contains(logs.String(), lab.Password) {
		t.Fatal("a password reached the log")
	}
}
