package daemon

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/testlab"
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
