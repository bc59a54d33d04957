package smbcheck

// A server whose highest dialect is below the MFP's lowest: smb21max
// (smb2srv's address, port 3445) speaks at most SMB 2.1.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestLabDialectCeiling(t *testing.T) {
	lab := testlab.Require(t)
	dest := "//" + lab.SMB2IP + ":3445/scans"
	ceiling := func(t *testing.T, r Report) {
		t.Helper()
		s := stepIs(t, r, StepNegotiate, StatusFail)
		if s.Evidence["device_min_dialect"] != "3.0" || s.Evidence["dialect"] != "2.1" {
			t.Errorf("negotiate evidence %v", s.Evidence)
		}
		if r.Verdict.KyoceraCode != "1102" || !strings.Contains(r.Verdict.Fix, "server max protocol") || !strings.Contains(r.Verdict.Summary, "2.1") {
			t.Errorf("verdict %+v", r.Verdict)
		}
		stepIs(t, r, StepSession, StatusSkipped)
	}
	for _, c := range []labCase{
		// The library offers every dialect up to 3.1.1: the server's
		// choice, 2.1, is held against the MFP's lowest.
		{name: "min-3.0-max-3.1.1", dest: dest, user: "scanuser", opts: Options{Device: Device{MinDialect: DialectSMB30, MaxDialect: DialectSMB311}}, want: scanwarden.CauseDialectCeiling, check: ceiling},
		{name: "min-3.0", dest: dest, user: "scanuser", opts: Options{Device: Device{MinDialect: DialectSMB30}}, want: scanwarden.CauseDialectCeiling, check: ceiling},
		// Only 3.0.2 is offered: the negotiation fails and the probe
		// tells the server's highest.
		{name: "min-3.0-max-3.0.2", dest: dest, user: "scanuser", opts: Options{Device: Device{MinDialect: DialectSMB30, MaxDialect: DialectSMB302}}, want: scanwarden.CauseDialectCeiling, check: ceiling},
		// A 3.1.1 MFP whose lowest is not known offers 2.1 as well.
		{name: "max-3.1.1-ok", dest: dest, user: "scanuser", opts: Options{Device: Device{MaxDialect: DialectSMB311}}, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepNegotiate, StatusOK); s.Evidence["dialect"] != "2.1" {
				t.Errorf("negotiated %v", s.Evidence["dialect"])
			}
		}},
		{name: "min-2.0.2-ok", dest: dest, user: "scanuser", opts: Options{Device: Device{MinDialect: DialectSMB202}}, want: scanwarden.CauseOK},
		{name: "own-client-ok", dest: dest, user: "scanuser", want: scanwarden.CauseOK},
	} {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
	// Named before any logon: nothing that could fail is sent.
	led := &countingLedger{Ledger: &smbclient.MemoryLedger{}}
	o := Options{Device: Device{MinDialect: DialectSMB30}, Ledger: led, MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second}
	if r := Run(context.Background(), labTarget(t, lab, dest, "scanuser", wrongPassword), o); r.Verdict.Cause != scanwarden.CauseDialectCeiling || led.sent != 0 {
		t.Errorf("wrong password: verdict %s, %d logons sent", r.Verdict.Cause, led.sent)
	}
}
