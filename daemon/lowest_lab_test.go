package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/testlab"
	"github.com/scanwarden/scanwarden/web"
)

// TestLabServeChecksRememberLowestDialect: serve's checks (the monitor's
// and the page's Test, one checker) share one memory of each server's
// lowest dialect: the second check of smb3only states it without asking.
func TestLabServeChecksRememberLowestDialect(t *testing.T) {
	lab := testlab.Require(t)
	cfg := testConfig(t, "")
	st := testStore(t, cfg)
	t.Cleanup(func() { st.Close() })
	c := &checksPart{env: env{st: st, faults: newFaults(time.Now), log: slog.New(slog.DiscardHandler)}}
	c.Open(context.Background(), cfg)
	t.Cleanup(func() { c.Close(time.Second) })
	d := monitor.Destination{Name: "smb3only", Target: scanwarden.Target{Host: lab.SMB2IP, Port: 1445, Share: "scans",
		User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}}
	for i, asked := range []int{4, 0} {
		r := c.check.Check(context.Background(), d, nil)
		if r.Verdict.Cause != scanwarden.CauseOK {
			t.Fatalf("check %d: verdict %+v", i+1, r.Verdict)
		}
		ev := r.Step(smbcheck.StepNegotiate).Evidence
		if ev["lowest_dialect"] != "3.1.1" || ev["lowest_dialect_asked"] != asked || (asked == 0) != (ev["lowest_dialect_learned"] != nil) {
			t.Errorf("check %d: negotiate evidence %v; want lowest 3.1.1 after %d questions", i+1, ev, asked)
		}
	}
}

// TestLabAdminCheckAsksLowestDialectAfresh: once serve's scheduled check
// of smb3only has filled the lowest-dialect memory, a check an admin asks
// for — "Check now" (the monitor's CheckNow, as the page and the API's
// check-now run it) and the page's Test of a form — asks the server
// afresh (the admin may just have changed its floor) and refreshes the
// memory, which the next scheduled check then states without asking.
func TestLabAdminCheckAsksLowestDialectAfresh(t *testing.T) {
	lab := testlab.Require(t)
	m, _ := startMain(t, testConfig(t, "[checks]\ninterval = \"1h\"\njitter = \"0s\"\n"))
	ctx := context.Background()
	if err := m.Store().Destinations().PutDestination(ctx, registry.Destination{Name: "smb3only", Host: lab.SMB2IP, Port: 1445, Share: "scans",
		User: "scanuser", Password: scanwarden.NewSecret(lab.Password), Source: registry.SourceAdded}); err != nil {
		t.Fatal(err)
	}
	m.SyncDevices(ctx)
	negotiate := func(what string, r smbcheck.Report) smbcheck.Evidence {
		t.Helper()
		if r.Verdict.Cause != scanwarden.CauseOK || r.Step(smbcheck.StepNegotiate) == nil {
			t.Fatalf("%s: verdict %+v", what, r.Verdict)
		}
		ev := r.Step(smbcheck.StepNegotiate).Evidence
		if ev["lowest_dialect"] != "3.1.1" {
			t.Fatalf("%s: negotiate evidence %v, want lowest 3.1.1", what, ev)
		}
		return ev
	}
	var scheduled registry.Report
	waitUntil(t, 60*time.Second, "the scheduled check of smb3only", func() bool {
		r, ok, err := m.Store().Reports().LatestReport(ctx, "smb3only")
		scheduled = r
		return err == nil && ok
	})
	if ev := negotiate("scheduled check", scheduled.Report); fmt.Sprint(ev["lowest_dialect_asked"]) != "4" {
		t.Fatalf("the scheduled check (memory empty) did not ask: %v", ev)
	}
	// (a second apart: the memory's time is stated to the second)
	time.Sleep(1100 * time.Millisecond)
	res, err := m.Monitor().CheckNow(ctx, "smb3only", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev := negotiate("check now", res.Report); fmt.Sprint(ev["lowest_dialect_asked"]) != "4" || ev["lowest_dialect_learned"] != nil {
		t.Errorf("check now stated the remembered floor instead of asking: %v", ev)
	}
	tried := time.Now()
	rep, err := webRegistry{m}.TryDestination(ctx, web.DestinationInput{Name: "smb3only", Folder: "//" + lab.SMB2IP + ":1445/scans",
		User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev := negotiate("the page's Test", rep); fmt.Sprint(ev["lowest_dialect_asked"]) != "4" || ev["lowest_dialect_learned"] != nil {
		t.Errorf("the page's Test stated the remembered floor instead of asking: %v", ev)
	}
	// A scheduled check (no admin asked) states the refreshed answer.
	p := m.live.get()
	d := monitor.Destination{Name: "smb3only", Target: scanwarden.Target{Host: lab.SMB2IP, Port: 1445, Share: "scans",
		User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}}
	ev := negotiate("the next scheduled check", p.checks.check.Check(ctx, d, nil))
	learned, _ := time.Parse(time.RFC3339, fmt.Sprint(ev["lowest_dialect_learned"]))
	if fmt.Sprint(ev["lowest_dialect_asked"]) != "0" || learned.Before(tried.Truncate(time.Second)) {
		t.Errorf("the next scheduled check: %v; want the floor the Test learned (at %s) stated without asking", ev, tried.UTC().Format(time.RFC3339))
	}
}
