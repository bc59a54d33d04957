package smbcheck

// A check with no device profile states the server's lowest dialect
// beside what it already states (signing, encryption).

import (
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestLabLowestDialect(t *testing.T) {
	lab := testlab.Require(t)
	lowest := func(want string, asked int) func(t *testing.T, r Report) {
		return func(t *testing.T, r Report) {
			t.Helper()
			s := stepIs(t, r, StepNegotiate, StatusOK)
			if s.Evidence["lowest_dialect"] != want || s.Evidence["lowest_dialect_asked"] != asked || !strings.Contains(s.Detail, "the server's lowest dialect is "+want) {
				t.Errorf("negotiate %q, evidence %v; want lowest %s after %d questions", s.Detail, s.Evidence, want, asked)
			}
		}
	}
	for _, c := range []labCase{
		// smb3only takes nothing below 3.1.1: 2.0.2, 2.1, 3.0 and 3.0.2 asked.
		{name: "smb3only", dest: "//" + lab.SMB2IP + ":1445/scans", user: "scanuser", want: scanwarden.CauseOK, check: lowest("3.1.1", 4)},
		{name: "ordinary", dest: "//" + lab.SMB2IP + "/scans", user: "scanuser", want: scanwarden.CauseOK, check: lowest("2.0.2", 1)},
		{name: "dc", dest: "//" + lab.DCHost + "/scans", user: "alice", want: scanwarden.CauseOK, check: lowest("2.0.2", 1)},
		// smb21max chooses 2.1; only 2.0.2 is below it.
		{name: "smb21max", dest: "//" + lab.SMB2IP + ":3445/scans", user: "scanuser", want: scanwarden.CauseOK, check: lowest("2.0.2", 1)},
		// A check with a profile replays the device and asks nothing more.
		{name: "with-profile", dest: "//" + lab.SMB2IP + ":1445/scans", user: "scanuser", opts: Options{Device: Device{MaxDialect: DialectSMB311}}, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepNegotiate, StatusOK); s.Evidence["lowest_dialect"] != nil || s.Evidence["lowest_dialect_asked"] != nil {
				t.Errorf("evidence %v", s.Evidence)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
}
