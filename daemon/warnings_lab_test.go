package daemon

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/bridge"
	"github.com/scanwarden/scanwarden/notify"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
	"github.com/scanwarden/scanwarden/warning"
)

// TestLabServeWarningGrouped: the lab account pwsoon's password expires in
// 5 days; three destinations on two MFPs log on as it, a fourth as alice.
// Every check passes (no incident, verdict ok) and each pwsoon destination
// carries password-expires-soon — said once, as one group ("3 destinations
// on 2 MFPs will fail with 1102"), in one warning.raised webhook however
// many checks see it; a reload with password_days = 3 clears it with one
// warning.cleared.
func TestLabServeWarningGrouped(t *testing.T) {
	lab := testlab.Require(t)
	ctx := context.Background()
	hook := newHookPeer(t)
	files := t.TempDir()
	adPw := filepath.Join(files, "ad.pw")
	os.WriteFile(adPw, []byte(lab.Password+"\n"), 0o600)
	base := `
[checks]
interval = "1h"
jitter = "0s"
timeout = "5s"
no_write = true
[snmp]
interval = "1h"
[ad]
url = "ldaps://` + lab.DCHost + `"
bind_user = "ldapreader@` + lab.DNSDomain + `"
password_file = "` + adPw + `"
ca = "` + lab.CA + `"
[notify]
webhook_url = "` + hook.srv.URL + `/hook"
webhook_backoff = "100ms"
`
	cfg := testConfig(t, base)
	st := testStore(t, cfg)
	for _, dev := range []string{"MFP-A", "MFP-B"} {
		if err := st.Devices().PutDevice(ctx, registry.Device{Name: dev, Address: "127.0.0.1:9",
			SNMP: registry.SNMP{Version: "2c", Community: scanwarden.NewSecret("public")}}); err != nil {
			t.Fatal(err)
		}
	}
	dests := []registry.Destination{
		{Name: "a-scans", Device: "MFP-A", User: lab.Domain + `\pwsoon`},
		{Name: "a-upn", Device: "MFP-A", User: "pwsoon@" + lab.DNSDomain},
		{Name: "b-scans", Device: "MFP-B", User: lab.Domain + `\pwsoon`},
		{Name: "b-alice", Device: "MFP-B", User: lab.Domain + `\alice`},
	}
	for _, d := range dests {
		d.Host, d.Share, d.Password = lab.DCHost, "scans", scanwarden.NewSecret(lab.Password)
		if err := st.Destinations().PutDestination(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	m, _ := startMain(t, cfg)
	warnEvents := func() []notify.Message {
		hook.mu.Lock()
		defer hook.mu.Unlock()
		var out []notify.Message
		for _, msg := range hook.msgs {
			if strings.HasPrefix(msg.Event, "warning.") {
				out = append(out, msg)
			}
		}
		return out
	}
	checkAll := func() {
		t.Helper()
		for _, d := range dests {
			res, err := m.Monitor().CheckNow(ctx, d.Name, nil)
			if err != nil || !res.Report.OK() || res.Incident != nil {
				t.Fatalf("%s: %+v incident %+v err %v", d.Name, res.Report.Verdict, res.Incident, err)
			}
		}
	}
	checkAll()
	// Checked again: once per warning, not per check.
	if res, err := m.Monitor().CheckNow(ctx, "a-scans", nil); err != nil || !res.Report.OK() {
		t.Fatalf("a-scans again: %+v %v", res.Report.Verdict, err)
	}
	// Every check has returned: each notification it started is counted
	// in Notifying until the webhook answered it.
	waitUntil(t, 15*time.Second, "the notifications sent", func() bool { return m.Monitor().Stats().Notifying == 0 })
	evs := warnEvents()
	if len(evs) != 1 || evs[0].Event != notify.EventWarningRaised || evs[0].Warning == nil ||
		evs[0].Warning.Kind != warning.PasswordExpiresSoon || evs[0].Warning.Subject != lab.Domain+`\pwsoon` {
		t.Fatalf("webhook warnings %+v", evs)
	}

	sum, err := Summary(ctx, m.Store(), nil, bridge.StuckAfter, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if sum.State != "ok" || sum.Warnings != 1 || len(sum.ComingUp) != 1 {
		t.Fatalf("summary %+v", sum)
	}
	g := sum.ComingUp[0]
	t.Logf("overview: %s", sum.Sentence)
	t.Logf("grouped: %s", g.Text)
	if strings.Join(g.Destinations, ",") != "a-scans,a-upn,b-scans" || strings.Join(g.Devices, ",") != "MFP-A,MFP-B" ||
		!strings.Contains(g.Text, `KYOLAB\pwsoon's password expires on `) ||
		!strings.Contains(g.Text, "days): 3 destinations on 2 MFPs will fail with 1102; set a password that does not expire") ||
		!strings.Contains(g.Text, "`scanwarden export addressbook`") || !strings.Contains(sum.Sentence, "1 warning coming up") {
		t.Errorf("group %+v\nsentence %q", g, sum.Sentence)
	}
	if gs, err := (webBackend{m}).Warnings(ctx); err != nil || len(gs) != 1 || gs[0].Key() != g.Key() {
		t.Errorf("web warnings %+v %v", gs, err)
	}
	rec := httptest.NewRecorder()
	m.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, d := range []string{"a-scans", "a-upn", "b-scans"} {
		dev := "MFP-" + strings.ToUpper(d[:1])
		want := `scanwarden_destination_warning{destination="` + d + `",device="` + dev + `",kind="password-expires-soon",subject="KYOLAB\\pwsoon"} 1`
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(rec.Body.String(), `destination="b-alice",`) && strings.Contains(rec.Body.String(), `scanwarden_destination_warning{destination="b-alice"`) {
		t.Error("b-alice has a warning metric")
	}
	incs, err := m.Store().Incidents().Incidents(ctx, store.IncidentFilter{})
	if err != nil || len(incs) != 0 {
		t.Errorf("a passing destination with a warning opened incidents: %+v %v", incs, err)
	}

	// The threshold moves below the 5 days left: cleared, once.
	if err := os.WriteFile(cfg.File, []byte("data_dir = \""+cfg.DataDir+"\"\nlisten = \"127.0.0.1:0\"\n"+base+"[warnings]\npassword_days = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	checkAll()
	waitUntil(t, 15*time.Second, "the notifications sent", func() bool { return m.Monitor().Stats().Notifying == 0 })
	if evs := warnEvents(); len(evs) != 2 || evs[1].Event != notify.EventWarningCleared || evs[1].Warning.Key() != g.Key() {
		t.Fatalf("webhook warnings %+v", evs)
	}
	if sum, _ := Summary(ctx, m.Store(), nil, bridge.StuckAfter, time.Now()); sum.Warnings != 0 {
		t.Errorf("after clearing: %+v", sum)
	}
}
