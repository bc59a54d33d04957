package smbcheck

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/localname"
	"github.com/scanwarden/scanwarden/testlab"
)

// labLocalNames asks as the box would, from the lab's client namespace:
// the scope derived from its interfaces, refused unless every broadcast
// stays inside the lab's segment.
func labLocalNames(t *testing.T, lab *testlab.Lab) LocalNames {
	t.Helper()
	ifs, err := localname.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	sc := localname.ScopeOf(ifs)
	seg := netip.PrefixFrom(netip.MustParseAddr(lab.DCIP), 24).Masked()
	for _, b := range sc.Broadcast {
		if !seg.Contains(b.Addr()) {
			t.Fatalf("the client namespace's interfaces give %s, outside the lab's %s", sc, seg)
		}
	}
	return &localname.Asker{Scope: sc}
}

// TestLabNameNotInDNS: a name DNS does not know but a PC on the segment
// answers for — Samba's nmbd over NetBIOS (broadcast, and as a WINS
// server), llmnrd over LLMNR — is name-not-in-dns with that PC's address,
// and the rest of the check is replayed at that address (the PC's smbd):
// the fix says whether storing it works or names that address's own cause;
// a name nobody answers for stays name-unresolved, saying what was asked.
func TestLabNameNotInDNS(t *testing.T) {
	lab := testlab.Require(t)
	if lab.PCIP == "" {
		testlab.Missing(t, "the lab has no name-only PC (SWLAB_PC_IP unset): run testlab/lab up again")
	}
	notInDNS := func(proto, via string, at scanwarden.Cause) func(t *testing.T, r Report) {
		return func(t *testing.T, r Report) {
			s := stepIs(t, r, StepName, StatusFail)
			stepIs(t, r, StepTCP, StatusSkipped)
			if s.Evidence["answered_by"] != proto || s.Evidence["answer_address"] != lab.PCIP || s.Evidence["netbios_llmnr_asked"] == nil {
				t.Errorf("name evidence %v", s.Evidence)
			}
			if !strings.Contains(s.Detail, lab.PCIP) || !strings.Contains(s.Detail, via) {
				t.Errorf("detail %q does not name %s and %s", s.Detail, lab.PCIP, via)
			}
			if r.Verdict.KyoceraCode != "1101" || !strings.Contains(r.Verdict.Fix, "A record") || !strings.Contains(r.Verdict.Fix, lab.PCIP) ||
				!strings.Contains(r.Verdict.Fix, "DNS only") {
				t.Errorf("verdict %+v", r.Verdict)
			}
			if at == "" { // a broadcast or multicast answer: no logon there
				if res, _ := s.Evidence["answer_address_result"].(string); !strings.HasPrefix(res, "not checked: "+lab.PCIP+" answered a "+via) ||
					strings.Contains(r.Verdict.Fix, "would succeed") || strings.Contains(r.Verdict.Fix, "is not enough") {
					t.Errorf("answer_address_result %v, fix %q", s.Evidence["answer_address_result"], r.Verdict.Fix)
				}
				return
			}
			if s.Evidence["answer_address_result"] != string(at) {
				t.Errorf("answer_address_result %v, want %s", s.Evidence["answer_address_result"], at)
			}
			works := "At " + lab.PCIP + " the MFP's logon would succeed"
			if at == scanwarden.CauseOK {
				if !strings.HasPrefix(r.Verdict.Fix, works+" (checked just now as this MFP would, with the same account): store that address or add the A record.") || len(r.Verdict.Also) != 0 {
					t.Errorf("verdict %+v", r.Verdict)
				}
				return
			}
			if strings.Contains(r.Verdict.Fix, works) || !strings.HasPrefix(r.Verdict.Fix, "Storing "+lab.PCIP+" or adding the A record is not enough") ||
				!strings.Contains(r.Verdict.Fix, "Then: The MFP looks the Host Name up in DNS only") ||
				len(r.Verdict.Also) != 1 || r.Verdict.Also[0] != at || !strings.Contains(s.Detail, "fails too: "+string(at)) {
				t.Errorf("verdict %+v, detail %q", r.Verdict, s.Detail)
			}
		}
	}
	wins := &localname.Asker{Scope: localname.Scope{}.WithWINS(netip.MustParseAddr(lab.PCIP))}
	cases := []labCase{
		{name: "netbios broadcast", dest: "//" + strings.ToLower(lab.PCNetBIOS) + "/scans", user: "scanuser", want: scanwarden.CauseNameNotInDNS, check: notInDNS("netbios", "broadcast", "")},
		{name: "llmnr, no such share there", dest: "//" + lab.PCLLMNR + "/nosuch", user: "scanuser", want: scanwarden.CauseNameNotInDNS, check: notInDNS("llmnr", "multicast", "")},
		{name: "wins, the logon works there", dest: "//" + lab.PCNetBIOS + "/scans", user: "scanuser", opts: Options{MaxFailures: DefaultMaxFailures, LocalNames: wins}, want: scanwarden.CauseNameNotInDNS, check: notInDNS("netbios", "wins", scanwarden.CauseOK)},
		{name: "wins, the PC does not know the account", dest: "//" + lab.PCNetBIOS + "/scans", user: "alice", opts: Options{MaxFailures: DefaultMaxFailures, LocalNames: wins}, want: scanwarden.CauseNameNotInDNS, check: notInDNS("netbios", "wins", scanwarden.CauseBadCredentials)},
		{name: "a nested check replays nowhere else", dest: "//" + lab.PCNetBIOS + "/scans", user: "scanuser", opts: Options{MaxFailures: DefaultMaxFailures, nested: "the target of a DFS link"}, want: scanwarden.CauseNameNotInDNS, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepName, StatusFail)
			if s.Evidence["answer_address_result"] != "not checked: this is the check of the target of a DFS link" || strings.Contains(r.Verdict.Fix, "would succeed") {
				t.Errorf("name evidence %v, verdict %+v", s.Evidence, r.Verdict)
			}
		}},
		{name: "nobody answers", dest: "//nosuchhost/scans", user: "alice", want: scanwarden.CauseNameUnresolved, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepName, StatusFail)
			asked, _ := s.Evidence["netbios_llmnr_asked"].([]string)
			if s.Detail != "nosuchhost does not resolve" || len(asked) < 2 || s.Evidence["netbios_llmnr_answers"] != nil || r.Verdict.KyoceraCode != "1101" {
				t.Errorf("name step %q %v, verdict %+v", s.Detail, s.Evidence, r.Verdict)
			}
		}},
		{name: "wins says no", dest: "//nosuchhost/scans", user: "alice", opts: Options{MaxFailures: DefaultMaxFailures, LocalNames: wins}, want: scanwarden.CauseNameUnresolved, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepName, StatusFail)
			if neg, _ := s.Evidence["netbios_llmnr_negative"].([]string); len(neg) != 1 || !strings.Contains(neg[0], "NAM_ERR") {
				t.Errorf("name evidence %v", s.Evidence)
			}
		}},
		{name: "dotted name not asked", dest: "//nosuchhost." + lab.DNSDomain + "/scans", user: "alice", want: scanwarden.CauseNameUnresolved, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepName, StatusFail)
			if why, _ := s.Evidence["netbios_llmnr_not_asked"].(string); !strings.Contains(why, "has a dot") || s.Evidence["netbios_llmnr_asked"] != nil {
				t.Errorf("name evidence %v", s.Evidence)
			}
		}},
		{name: "a name DNS resolves asks nothing else", dest: "//" + lab.DCHost + "/scans", user: "alice", opts: Options{MaxFailures: DefaultMaxFailures, NoWrite: true}, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepName, StatusOK)
			for k := range s.Evidence {
				if strings.HasPrefix(k, "netbios_llmnr") {
					t.Errorf("name step asked NetBIOS/LLMNR for a name DNS resolves: %v", s.Evidence)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
}
