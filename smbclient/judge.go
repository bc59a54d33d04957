package smbclient

import (
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden"
)

// Judge applies the ledger rules (see Ledger) to the entries of one account
// within the window (window = a.At - since): every Ledger implementation's
// Reserve calls it inside its own transaction.
func Judge(entries []LedgerEntry, a Attempt, budget int, window time.Duration) *Refusal {
	var last, lastDone *LedgerEntry
	pending := 0
	for i := range entries {
		e := &entries[i]
		if last == nil || e.At.After(last.At) {
			last = e
		}
		if e.Pending() {
			pending++
		} else if lastDone == nil || e.At.After(lastDone.At) {
			lastDone = e
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Cause == scanwarden.CauseAccountLocked && !a.Seen.lifts(e) {
			return &Refusal{Reason: fmt.Sprintf("the account was seen locked out at %s; no logon is replayed until the window has passed", e.At.Format(time.TimeOnly)),
				Last: e, RetryAt: e.At.Add(window)}
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Form == a.Form && e.Definite() && !a.Seen.lifts(e) {
			return &Refusal{Reason: fmt.Sprintf("this user name form and password already failed at %s; it is not replayed again within %s", e.At.Format(time.TimeOnly), spell(window)),
				Last: e, RetryAt: e.At.Add(window)}
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Form == a.Form && e.Pending() && a.At.Sub(e.At) < pendingWait {
			// Its answer is due any moment and says whether this one may go:
			// wait for it (reserve does), but not longer than pendingWait.
			return &Refusal{Reason: fmt.Sprintf("the same user name form and password is being tried by another logon since %s; its answer is awaited", e.At.Format(time.TimeOnly)),
				Last: e, RetryAt: e.At.Add(pendingWait), Pending: pending}
		}
	}
	counted := len(entries)
	if known := countKnownGood(entries); known > 1 {
		counted -= known - 1
	}
	if a.Seen != nil && a.Seen.DCBudget {
		for i := range entries {
			if a.Seen.lifts(&entries[i]) {
				counted--
			}
		}
	}
	if counted >= budget {
		r := &Refusal{Last: lastDone, Pending: pending}
		if r.Last == nil {
			r.Last = last
		}
		if budget == 0 {
			r.Reason = "the failure budget is 0: no logon that could fail is replayed"
		} else {
			oldest := entries[0].At
			for _, e := range entries {
				if e.At.Before(oldest) {
					oldest = e.At
				}
			}
			r.Reason = fmt.Sprintf("the failure budget (%d per %s) is spent", budget, spell(window))
			if pending > 0 {
				r.Reason += fmt.Sprintf(" (%d of it by logons still in flight)", pending)
			}
			r.RetryAt = oldest.Add(window)
		}
		return r
	}
	return nil
}

// countKnownGood counts the interrupted entries of forms known good: they
// spend one slot of the budget between them (see Ledger).
func countKnownGood(entries []LedgerEntry) int {
	n := 0
	for i := range entries {
		if entries[i].KnownGood && entries[i].Status == Interrupted {
			n++
		}
	}
	return n
}

// spell says a window in words: "30 minutes", "2 hours", else Go's form.
func spell(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		if d == time.Hour {
			return "1 hour"
		}
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}
