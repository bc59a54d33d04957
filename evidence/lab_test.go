package evidence

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabGateKeepsRefusedReader: a reading account that evtsrv refuses (a
// wrong password) is tried once; the next checks do not send its logon
// again (it would count toward its own lockout) and say so; a new gate (a
// reload with the corrected password) tries again. Without a gate (one
// check from the shell) every reading tries.
func TestLabGateKeepsRefusedReader(t *testing.T) {
	lab := testlab.Require(t)
	ctx := context.Background()
	tgt := scanwarden.Target{Host: lab.EvtIP, Share: "nosuchshare", User: "scanuser"}
	failed := func() smbcheck.Report {
		return smbcheck.Report{Started: time.Now(), Verdict: smbcheck.Verdict{Cause: scanwarden.CauseShareNotFound}}
	}
	wrong := Account(testlab.EventReader, scanwarden.NewSecret("not-"+lab.Password))
	r := Readers{Default: &wrong, Gate: NewGate()}
	rep := failed()
	r.Attach(ctx, tgt, &rep)
	if rep.ServerLog == nil || !strings.Contains(rep.ServerLog.LogonRefused, "STATUS_LOGON_FAILURE") {
		t.Fatalf("first reading: %+v", rep.ServerLog)
	}
	rep = failed()
	r.Attach(ctx, tgt, &rep)
	if rep.ServerLog == nil || len(rep.ServerLog.Problems) != 1 || rep.ServerLog.LogonRefused != "" ||
		!strings.Contains(rep.ServerLog.Problems[0], "it is not tried again before") {
		t.Fatalf("second reading: %+v", rep.ServerLog)
	}
	right := Account(testlab.EventReader, scanwarden.NewSecret(lab.Password))
	r = Readers{Default: &right, Gate: NewGate()}
	rep = failed()
	r.Attach(ctx, tgt, &rep)
	if rep.ServerLog == nil || len(rep.ServerLog.Logs) != 2 {
		t.Fatalf("after the fix: %+v", rep.ServerLog)
	}
	r = Readers{Default: &wrong}
	for i := 0; i < 2; i++ {
		rep = failed()
		r.Attach(ctx, tgt, &rep)
		if rep.ServerLog == nil || rep.ServerLog.LogonRefused == "" {
			t.Fatalf("no gate, reading %d: %+v", i, rep.ServerLog)
		}
	}
}
