package evidence

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/serverlog"
	"github.com/scanwarden/scanwarden/smbcheck"
)

func TestFor(t *testing.T) {
	def := Account(`KYOLAB\reader`, scanwarden.NewSecret("x"))
	r := Readers{Default: &def, Servers: map[string]serverlog.Account{"FS1.kyolab.test": Account("local", scanwarden.NewSecret("y"))}}
	if a, ok := r.For("fs1.KYOLAB.test"); !ok || a.User != "local" || a.Domain != "" {
		t.Errorf("fs1: %+v %v", a, ok)
	}
	if a, ok := r.For("fs2"); !ok || a.User != "reader" || a.Domain != "KYOLAB" || a.Name() != `KYOLAB\reader` {
		t.Errorf("fs2: %+v %v", a, ok)
	}
	if _, ok := (Readers{}).For("fs2"); ok || (Readers{}).Any() {
		t.Error("no readers found one")
	}
}

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		reader, scan string
		same         bool
	}{
		{`KYOLAB\scan`, `KYOLAB\scan`, true},
		{`scan`, `kyolab\SCAN`, true},
		{`KYOLAB\scan`, `scan@kyolab.test`, true},
		{`OTHER\scan`, `KYOLAB\scan`, false},
		{`KYOLAB\reader`, `KYOLAB\scan`, false},
	} {
		if got := same(Account(tc.reader, scanwarden.Secret{}), tc.scan); got != tc.same {
			t.Errorf("same(%q, %q) = %v", tc.reader, tc.scan, got)
		}
	}
}

// The scan account is never used to read: the story says so, and no
// connection is made (the host does not resolve).
func TestAttachRefusesScanAccount(t *testing.T) {
	a := Account("scanuser", scanwarden.NewSecret("pw"))
	rep := smbcheck.Report{Started: time.Now()}
	Readers{Default: &a}.Attach(context.Background(), scanwarden.Target{Host: "nosuchhost.invalid", Share: "s", User: "SCANUSER"}, &rep)
	if rep.ServerLog == nil || len(rep.ServerLog.Problems) != 1 || !strings.Contains(rep.ServerLog.Problems[0], "is the scan account: not used") {
		t.Fatalf("story %+v", rep.ServerLog)
	}
	rep = smbcheck.Report{Interrupted: true}
	Readers{Default: &a}.Attach(context.Background(), scanwarden.Target{Host: "x", User: "other"}, &rep)
	if rep.ServerLog != nil {
		t.Error("an interrupted check was read for")
	}
}
