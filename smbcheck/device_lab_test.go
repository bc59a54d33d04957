package smbcheck

import (
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/testlab"
)

// A check with a Device speaks only the device's highest dialect and
// writes its test file with the device's file type.
func TestLabDeviceReplay(t *testing.T) {
	lab := testlab.Require(t)
	smb21 := Device{MaxDialect: DialectSMB21, NoEncryption: true, FileType: FileTypePDF}
	cases := []labCase{
		{name: "smb2.1-device-ok", dest: "//" + lab.DCHost + "/scans", user: "alice", opts: Options{Device: smb21}, want: CauseOK, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepNegotiate, StatusOK); s.Evidence["dialect"] != "2.1" {
				t.Errorf("negotiated %v, want 2.1 (the device's highest)", s.Evidence["dialect"])
			}
			if s := stepIs(t, r, StepWrite, StatusOK); !strings.HasSuffix(s.Evidence["canary"].(string), ".pdf") {
				t.Errorf("canary %v is not the device's file type", s.Evidence["canary"])
			}
		}},
		// smb2srv's share sealed requires SMB3 encryption: scanwarden's own
		// client gets in, an SMB 2.1 MFP is refused at the tree connect.
		{name: "own-client-sealed-ok", dest: "//" + lab.SMB2IP + "/sealed", user: "scanuser", want: CauseOK},
		{name: "smb2.1-device-sealed", dest: "//" + lab.SMB2IP + "/sealed", user: "scanuser", opts: Options{Device: smb21}, want: CauseShareAccessDenied, check: func(t *testing.T, r Report) {
			stepIs(t, r, StepTree, StatusFail)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
}
