package testlab

import (
	"runtime"
	"strings"
	"testing"
)

// outcomeTB is a testing.TB that records whether Require skipped or failed
// (a fake: the real TB would end this test).
type outcomeTB struct {
	testing.TB
	skipped, failed string
}

func (o *outcomeTB) Helper() {}
func (o *outcomeTB) Skip(args ...any) {
	o.skipped = args[0].(string)
	runtime.Goexit()
}
func (o *outcomeTB) Fatal(args ...any) {
	o.failed = args[0].(string)
	runtime.Goexit()
}

func require(tb *outcomeTB) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Require(tb)
	}()
	<-done
}

// Outside the lab a lab test skips, saying how to run it; inside it
// (SCANWARDEN_LAB set) a lab that cannot be found fails the test.
func TestRequireFailsInsideLab(t *testing.T) {
	t.Setenv("SCANWARDEN_LAB", "")
	out := &outcomeTB{TB: t}
	require(out)
	if out.skipped != HowToRun || out.failed != "" {
		t.Fatalf("outside the lab: skipped %q, failed %q", out.skipped, out.failed)
	}
	t.Setenv("SCANWARDEN_LAB", t.TempDir())
	t.Setenv("SWLAB_DC_IP", "")
	in := &outcomeTB{TB: t}
	require(in)
	if in.skipped != "" || !strings.Contains(in.failed, "SCANWARDEN_LAB is set") {
		t.Fatalf("inside the lab: skipped %q, failed %q", in.skipped, in.failed)
	}
}
