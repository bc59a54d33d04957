package smbcheck

import (
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabRunWithOwnOffersTheBridge: on real servers, where the device's
// client fails on a limit of its own and scanwarden's passes, the report
// offers the bridge — encryption required (smb2srv's sealed) and a dialect
// floor (smb3only) for an SMB 2.1 MFP that cannot encrypt; where the
// device's cause is not its client's (a PDF refused by nopdf's file
// screen) no second check runs and nothing is offered.
func TestLabRunWithOwnOffersTheBridge(t *testing.T) {
	lab := testlab.Require(t)
	smb21 := Device{MaxDialect: DialectSMB21, NoEncryption: true, FileType: FileTypePDF}
	for _, tc := range []struct {
		name, dest string
		cause      scanwarden.Cause
		offered    bool
	}{
		{"encryption-required", "//" + lab.SMB2IP + "/sealed", scanwarden.CauseEncryptionRequired, true},
		{"dialect-floor", "//" + lab.SMB2IP + ":1445/scans", scanwarden.CauseDialectFloor, true},
		{"file-type-refused", "//" + lab.SMB2IP + "/nopdf", scanwarden.CauseFileTypeRefused, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Device: smb21, MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second, LocalNames: labLocalNames(t, lab)}
			rep := RunWithOwn(t.Context(), labTarget(t, lab, tc.dest, "scanuser", ""), o)
			if rep.Verdict.Cause != tc.cause {
				t.Fatalf("verdict %s, want %s (the device's)", rep.Verdict.Cause, tc.cause)
			}
			if !tc.offered {
				if rep.Bridge != nil {
					t.Errorf("bridge %+v for a cause the bridge does not answer", rep.Bridge)
				}
				return
			}
			b := rep.Bridge
			if b == nil || !b.Offered || b.DeviceCause != tc.cause || b.Own == nil || b.Own.Cause != scanwarden.CauseOK {
				t.Fatalf("bridge %+v", b)
			}
		})
	}
}
