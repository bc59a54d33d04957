package bridge

import (
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/smbcheck"
)

func TestJudge(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	serving := &samba.ShareHealth{Cause: samba.ShareOK, Detail: "logged on and listed", At: now.Add(-30 * time.Second)}
	refused := &samba.ShareHealth{Cause: samba.ShareCause("mfp-logon-refused"), Detail: "logon refused", At: now.Add(-5 * time.Second)}
	stale := &samba.ShareHealth{Cause: samba.ShareOK, Detail: "logged on and listed", At: now.Add(-time.Hour)}
	ok := &smbcheck.Verdict{Cause: scanwarden.CauseOK}
	down := &smbcheck.Verdict{Cause: scanwarden.CauseHostUnreachable, Summary: "Nothing answers."}
	delivered := receiver.Backlog{LastDelivered: now.Add(-time.Minute), LastFile: "doc.pdf"}
	for _, tc := range []struct {
		name string
		in   Inputs
		want State
		why  string
	}{
		{"all well", Inputs{Share: serving, Own: ok, Backlog: delivered}, StateOK, ""},
		{"nothing delivered yet", Inputs{Share: serving, Own: ok}, StateOK, ""},
		{"no share", Inputs{Own: ok}, StateFailing, "fallback share is not running"},
		{"share refuses", Inputs{Share: refused, Own: ok}, StateFailing, "refuses the MFP: logon refused"},
		{"share probe stale", Inputs{Share: stale, Own: ok}, StateFailing, "last probed 1h0m0s ago"},
		{"own check fails", Inputs{Share: serving, Own: down}, StateFailing, "own check of the real folder fails (host-unreachable)"},
		{"a scan waits, young", Inputs{Share: serving, Own: ok, Backlog: receiver.Backlog{Waiting: 1, Oldest: now.Add(-10 * time.Minute),
			LastFailed: &receiver.Scan{Error: "timeout"}}}, StateOK, ""},
		{"a scan stuck", Inputs{Share: serving, Own: ok, Backlog: receiver.Backlog{Waiting: 2, Oldest: now.Add(-2 * time.Hour),
			LastFailed: &receiver.Scan{Error: "disk full"}}}, StateFailing, "waited 2h0m0s undelivered (more than 1h0m0s); the last attempt: disk full"},
		{"a scan stuck, own threshold", Inputs{Share: serving, Own: ok, StuckAfter: time.Minute,
			Backlog: receiver.Backlog{Waiting: 1, Oldest: now.Add(-2 * time.Minute)}}, StateFailing, "more than 1m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Judge(tc.in, now)
			if h.State != tc.want || !strings.Contains(h.Why, tc.why) {
				t.Fatalf("%s: %q; want %s with %q", h.State, h.Why, tc.want, tc.why)
			}
			if h.OK() != (tc.want == StateOK) {
				t.Error("OK disagrees with State")
			}
			if !h.OK() {
				v := h.Verdict()
				if v.Cause != scanwarden.CauseBridgeFailing || !strings.Contains(v.Summary, tc.why) || v.Fix == "" {
					t.Errorf("verdict %+v", v)
				}
			}
		})
	}
	h := Judge(Inputs{Share: serving, Own: ok, Backlog: receiver.Backlog{Waiting: 1, Oldest: now.Add(-90 * time.Second),
		LastDelivered: now.Add(-time.Minute), LastFile: "doc.pdf"}}, now)
	if h.Waiting != 1 || h.OldestAge != 90 || h.LastDelivery != "delivered" || h.LastDeliveryFile != "doc.pdf" || !h.ShareServing || h.OwnCheck != scanwarden.CauseOK {
		t.Errorf("health %+v", h)
	}
	if l := h.Line(now); !strings.Contains(l, "bridged, ok; share serving; own check ok; last delivery 1m0s ago; 1 waiting, oldest 1m30s") {
		t.Errorf("line %q", l)
	}
}
