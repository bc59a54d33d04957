package smbcheck

import (
	"time"

	"github.com/scanwarden/scanwarden"
)

// PasswordUnreadable is the report of a destination whose stored password
// is not known (why says why, e.g. the address book's field was not in the
// device's form): no packet is sent, so no logon can fail and no budget is
// spent; its session step fails with CausePasswordUnreadable.
func PasswordUnreadable(t scanwarden.Target, why string, now time.Time) Report {
	ci := scanwarden.CausePasswordUnreadable.Info()
	return Report{
		Target:  t.Info(),
		Started: now,
		Steps: []Step{{ID: StepSession, Status: StatusFail, Cause: scanwarden.CausePasswordUnreadable,
			Detail: "not replayed: the password is unreadable (" + why + ")", Evidence: Evidence{"password": "unreadable"}}},
		Verdict: Verdict{Cause: scanwarden.CausePasswordUnreadable, KyoceraCode: ci.KyoceraCode, Summary: ci.Summary, Fix: ci.Fix},
	}
}
