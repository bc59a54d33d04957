package smbcheck

// An MFP whose highest dialect is SMB 3.1.1 and that cannot encrypt: the
// replay cannot leave encryption out of a 3.1.1 negotiate, so what the
// server asks for is judged (tree.go, encryptionAsked).

import (
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestLabNoEncryption311(t *testing.T) {
	lab := testlab.Require(t)
	dev := Options{Device: Device{MaxDialect: DialectSMB311, NoEncryption: true}}
	negotiated311 := func(t *testing.T, r Report) {
		t.Helper()
		if s := stepIs(t, r, StepNegotiate, StatusOK); s.Evidence["dialect"] != "3.1.1" {
			t.Errorf("negotiated %v, want 3.1.1", s.Evidence["dialect"])
		}
	}
	for _, c := range []labCase{
		// smb2srv's sealed: required; a client without encryption is
		// refused at the tree connect.
		{name: "sealed", dest: "//" + lab.SMB2IP + "/sealed", user: "scanuser", opts: dev, want: scanwarden.CauseEncryptionRequired, check: func(t *testing.T, r Report) {
			negotiated311(t, r)
			s := stepIs(t, r, StepTree, StatusFail)
			if ev, _ := s.Evidence["encryption"].(string); !strings.Contains(ev, "refused") || strings.Contains(ev, "judged") {
				t.Errorf("tree evidence %v", s.Evidence)
			}
			if r.Verdict.KyoceraCode != "1102" || r.Canary != "" {
				t.Errorf("verdict %+v, canary %q", r.Verdict, r.Canary)
			}
		}},
		// No dialect given: the library offers 3.1.1 as well.
		{name: "sealed-no-dialect", dest: "//" + lab.SMB2IP + "/sealed", user: "scanuser", opts: Options{Device: Device{NoEncryption: true}}, want: scanwarden.CauseEncryptionRequired},
		// smb2srv's wished: desired; the MFP is let in unencrypted.
		{name: "wished-ok", dest: "//" + lab.SMB2IP + "/wished", user: "scanuser", opts: dev, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			negotiated311(t, r)
			s := stepIs(t, r, StepTree, StatusOK)
			if ev, _ := s.Evidence["encryption"].(string); !strings.Contains(ev, "not required") {
				t.Errorf("tree evidence %v", s.Evidence)
			}
			stepIs(t, r, StepWrite, StatusOK)
		}},
		{name: "ordinary-share-ok", dest: "//" + lab.SMB2IP + "/scans", user: "scanuser", opts: dev, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			negotiated311(t, r)
			if s := stepIs(t, r, StepTree, StatusOK); s.Evidence["encryption"] != nil {
				t.Errorf("tree evidence %v", s.Evidence)
			}
		}},
		// smb3only's sealed: no dialect below 3.1.1, so no client without
		// encryption can be asked; the request is taken as a demand.
		{name: "smb3only-sealed-judged", dest: "//" + lab.SMB2IP + ":1445/sealed", user: "scanuser", opts: dev, want: scanwarden.CauseEncryptionRequired, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepTree, StatusFail)
			if ev, _ := s.Evidence["encryption"].(string); !strings.Contains(ev, "judged from the server's request") {
				t.Errorf("tree evidence %v", s.Evidence)
			}
		}},
		{name: "smb3only-scans-ok", dest: "//" + lab.SMB2IP + ":1445/scans", user: "scanuser", opts: dev, want: scanwarden.CauseOK},
		// A device that encrypts is served on every one of them.
		{name: "encrypting-sealed-ok", dest: "//" + lab.SMB2IP + "/sealed", user: "scanuser", opts: Options{Device: Device{MaxDialect: DialectSMB311}}, want: scanwarden.CauseOK},
	} {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
}
