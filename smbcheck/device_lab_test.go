package smbcheck

import (
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

// A check with a Device speaks only the device's highest dialect and
// writes its test file with the device's file type.
func TestLabDeviceReplay(t *testing.T) {
	lab := testlab.Require(t)
	smb21 := Device{MaxDialect: DialectSMB21, NoEncryption: true, FileType: FileTypePDF}
	cases := []labCase{
		{name: "smb2.1-device-ok", dest: "//" + lab.DCHost + "/scans", user: "alice", opts: Options{Device: smb21}, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepNegotiate, StatusOK); s.Evidence["dialect"] != "2.1" {
				t.Errorf("negotiated %v, want 2.1 (the device's highest)", s.Evidence["dialect"])
			}
			if s := stepIs(t, r, StepWrite, StatusOK); !strings.HasSuffix(s.Evidence["canary"].(string), ".pdf") {
				t.Errorf("canary %v is not the device's file type", s.Evidence["canary"])
			}
		}},
		// smb2srv's share sealed requires SMB3 encryption: scanwarden's own
		// client gets in (and says the share asks for encryption), an SMB
		// 2.1 MFP and an SMB 3.0.2 MFP that cannot encrypt are refused at
		// the tree connect.
		{name: "own-client-sealed-ok", dest: "//" + lab.SMB2IP + "/sealed", user: "scanuser", want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepTree, StatusOK); s.Evidence["encryption"] == nil || !strings.Contains(s.Detail, "encryption") {
				t.Errorf("the tree step does not say the share asks for encryption: %s %v", s.Detail, s.Evidence)
			}
		}},
		{name: "smb2.1-device-sealed", dest: "//" + lab.SMB2IP + "/sealed", user: "scanuser", opts: Options{Device: smb21}, want: scanwarden.CauseEncryptionRequired, check: func(t *testing.T, r Report) {
			stepIs(t, r, StepTree, StatusFail)
			if r.Verdict.KyoceraCode != "1102" || !strings.Contains(r.Verdict.Summary, "2.1") {
				t.Errorf("verdict %+v", r.Verdict)
			}
		}},
		{name: "smb3.0.2-no-encryption-sealed", dest: "//" + lab.SMB2IP + "/sealed", user: "scanuser", opts: Options{Device: Device{MaxDialect: DialectSMB302, NoEncryption: true}}, want: scanwarden.CauseEncryptionRequired, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepNegotiate, StatusOK); s.Evidence["dialect"] != "3.0.2" {
				t.Errorf("negotiated %v", s.Evidence["dialect"])
			}
		}},
		{name: "smb3.0.2-encrypting-sealed-ok", dest: "//" + lab.SMB2IP + "/sealed", user: "scanuser", opts: Options{Device: Device{MaxDialect: DialectSMB302}}, want: scanwarden.CauseOK},
		// smb3only (smb2srv port 1445) speaks SMB 3.1.1 only.
		{name: "own-client-smb3only-ok", dest: "//" + lab.SMB2IP + ":1445/scans", user: "scanuser", want: scanwarden.CauseOK},
		{name: "smb2.1-device-dialect-floor", dest: "//" + lab.SMB2IP + ":1445/scans", user: "scanuser", opts: Options{Device: smb21}, want: scanwarden.CauseDialectFloor, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepNegotiate, StatusFail)
			if s.Evidence["device_max_dialect"] != "2.1" || !strings.Contains(r.Verdict.Fix, "SMB2_10") {
				t.Errorf("evidence %v, fix %q", s.Evidence, r.Verdict.Fix)
			}
			stepIs(t, r, StepSession, StatusSkipped)
		}},
		// smb2srv's share dfs is a DFS root whose folder scans is a link.
		{name: "dfs-link", dest: "//" + lab.SMB2IP + "/dfs/scans", user: "scanuser", want: scanwarden.CauseDFSLink, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepPath, StatusFail)
			if s.Evidence["dfs_link"] != `dfs\scans` || r.Verdict.KyoceraCode != "1103" || !strings.Contains(r.Verdict.Fix, `\\`+lab.SMB2IP+`\dfs\scans`) {
				t.Errorf("evidence %v, verdict %+v", s.Evidence, r.Verdict)
			}
		}},
		// smb2srv's share nopdf refuses *.pdf (veto files), takes the rest.
		{name: "own-client-nopdf-ok", dest: "//" + lab.SMB2IP + "/nopdf", user: "scanuser", want: scanwarden.CauseOK},
		{name: "tiff-device-nopdf-ok", dest: "//" + lab.SMB2IP + "/nopdf", user: "scanuser", opts: Options{Device: Device{FileType: FileTypeTIFF}}, want: scanwarden.CauseOK},
		{name: "pdf-device-nopdf", dest: "//" + lab.SMB2IP + "/nopdf", user: "scanuser", opts: Options{Device: Device{FileType: FileTypePDF}}, want: scanwarden.CauseFileTypeRefused, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepWrite, StatusFail)
			if s.Evidence["file_type"] != "pdf" || s.Evidence["other_type_accepted"] == nil || r.Verdict.KyoceraCode != "1103" || r.Canary != "" {
				t.Errorf("evidence %v, verdict %+v, canary %q", s.Evidence, r.Verdict, r.Canary)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
}
