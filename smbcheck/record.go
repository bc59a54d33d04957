package smbcheck

import (
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/smbconn"
)

// record is a check's report as its steps end — each step's status,
// evidence, cause and time — and what the verdict says beyond the causes.
type record struct {
	r        Report
	progress func(Step) // Options.Progress
	// noDirectory leaves the ad and acl steps out of the report.
	noDirectory bool
	firstFx     *verdictNote           // the first failure's specific summary and fix
	ledgerHit   *smbclient.LedgerEntry // last observation used instead of a replay
	// warnings are what an ok verdict must still say: things that need
	// an admin's action (not information such as the dialect).
	warnings []string
	// also are causes a step found besides its own (the Kerberos replay
	// behind an NTLM refusal): the verdict lists them.
	also []scanwarden.Cause
	// floor is the lowest-dialect question still being asked (lowest.go):
	// the negotiate step's detail waits for it, and so does the progress
	// of that step and of every step after it (held: their indexes).
	floor *floorAsk
	held  []int
	// first is the lowest-dialect question's first connection, asked at
	// the TCP step (firstAsk): an extra connection, waited for as the
	// floor is before another one opens.
	first *firstAsk
}

type verdictNote struct {
	cause   scanwarden.Cause
	summary string
	fix     string
}

type stepState struct {
	Step
	start time.Time
}

func (c *record) begin(id string) *stepState {
	return &stepState{Step: Step{ID: id, Evidence: Evidence{}}, start: time.Now()}
}

func (c *record) end(s *stepState, st Status, detail string) {
	s.Status, s.Detail = st, detail
	s.Duration = time.Since(s.start)
	c.r.Steps = append(c.r.Steps, s.Step)
	if c.floor != nil && !c.settleFloor(false) {
		c.held = append(c.held, len(c.r.Steps)-1)
		return
	}
	if c.progress != nil {
		c.progress(c.r.Steps[len(c.r.Steps)-1])
	}
}

// endFloor ends the negotiate step s with detail head + the lowest
// dialect's finding + tail; while f is still being asked, the step's
// progress and that of the steps after it wait for it.
func (c *record) endFloor(s *stepState, st Status, head, tail string, f *floorAsk) {
	if f == nil {
		c.end(s, st, head+tail)
		return
	}
	f.step, f.head, f.tail = len(c.r.Steps), head, tail
	c.floor = f
	c.end(s, st, head+tail)
}

// settleFloor writes the lowest dialect's finding into the negotiate step
// and lets the held progress go — waiting for the question (and its first
// connection, asked at the TCP step) when wait is set. It reports whether
// no question is left pending. A step's end settles without waiting; the
// check waits before it opens another extra connection and before its
// verdict.
func (c *record) settleFloor(wait bool) bool {
	if wait && c.first != nil {
		<-c.first.done
	}
	f := c.floor
	if f == nil {
		return true
	}
	if wait {
		<-f.done
	} else {
		select {
		case <-f.done:
		default:
			return false
		}
	}
	c.floor = nil
	f.into(&c.r.Steps[f.step])
	held := c.held
	c.held = nil
	if c.progress != nil {
		for _, i := range held {
			c.progress(c.r.Steps[i])
		}
	}
	return true
}

func (c *record) ok(s *stepState, detail string)   { c.end(s, StatusOK, detail) }
func (c *record) warn(s *stepState, detail string) { c.end(s, StatusWarn, detail) }

// fail ends a step with a cause; summary and fix, when given, refine the
// cause's generic ones for the verdict.
func (c *record) fail(s *stepState, cause scanwarden.Cause, detail, fix string) {
	s.Cause = cause
	if c.firstFx == nil {
		c.firstFx = &verdictNote{cause: cause, summary: detail, fix: fix}
	}
	c.end(s, StatusFail, detail)
}

func (c *record) skip(ids ...string) { c.skipWhy("not run: an earlier step failed", ids...) }

func (c *record) skipWhy(why string, ids ...string) {
	for _, id := range ids {
		if (id == StepAD || id == StepACL) && c.noDirectory {
			continue
		}
		if c.r.Step(id) != nil {
			continue
		}
		s := c.begin(id)
		s.Duration = 0
		c.end(s, StatusSkipped, why)
	}
}

// warnAction ends a step with a warning that needs an admin's action; the
// verdict repeats it even when the destination works.
func (c *record) warnAction(s *stepState, detail, action string) {
	c.warnings = append(c.warnings, action)
	c.warn(s, detail)
}

// noteSMB1Replay says in the verdict what the SMB1 replay of an SMB1-only
// server (replayed: the check replayed over SMB1 a device that also speaks
// SMB2/3) proved when no later step failed.
func (c *record) noteSMB1Replay(replayed bool) {
	if !replayed || c.firstFx == nil || c.firstFx.cause != scanwarden.CauseSMB1OnlyServer {
		return
	}
	for _, s := range c.r.Steps {
		if s.ID != StepNegotiate && s.Status == StatusFail {
			return
		}
	}
	c.firstFx.summary = "the server speaks only SMB1; replayed over SMB1, every later step passes: only an MFP with its SMB1 client enabled can store scans here"
	c.firstFx.fix = "Enable SMB2/SMB3 on the server (Samba: server min protocol = SMB2_02; Windows: the SMB 2 feature); until then the MFP's SMB1 client must stay enabled (Command Center RX → Network Settings → Protocol → SMB)."
}

// finish writes the verdict from the recorded steps: the first failure's
// cause (with its specific summary and fix, when the step gave them), the
// other causes, the warnings of an ok verdict; and server, what the server
// told in negotiate.
func (c *record) finish(server *smbconn.ServerInfo, verbatim []string) {
	v := Verdict{Cause: scanwarden.CauseOK}
	for _, s := range c.r.Steps {
		if s.Status != StatusFail || s.Cause == "" {
			continue
		}
		if v.Cause == scanwarden.CauseOK {
			v.Cause = s.Cause
		} else if s.Cause != v.Cause && !containsCause(v.Also, s.Cause) {
			v.Also = append(v.Also, s.Cause)
		}
	}
	info := v.Cause.Info()
	v.KyoceraCode, v.Summary, v.Fix = info.KyoceraCode, info.Summary, info.Fix
	if c.firstFx != nil && c.firstFx.cause == v.Cause {
		if c.firstFx.summary != "" {
			// What the check saw says more than the cause's generic line.
			v.Summary = upperFirst(c.firstFx.summary, verbatim) + "."
		}
		if c.firstFx.fix != "" {
			v.Fix = c.firstFx.fix
		}
	}
	for _, a := range c.also {
		if a != v.Cause && a != scanwarden.CauseOK && !containsCause(v.Also, a) {
			v.Also = append(v.Also, a)
		}
	}
	if c.ledgerHit != nil && c.ledgerHit.Cause == v.Cause {
		v.FromLedger = true
	}
	if v.Cause == scanwarden.CauseOK && len(c.warnings) > 0 {
		v.Summary += " Warnings: " + strings.Join(c.warnings, "; ") + "."
	}
	c.r.Verdict = v
	c.r.Server = server
}

func containsCause(cs []scanwarden.Cause, c scanwarden.Cause) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// upperFirst starts a sentence with a capital — unless it starts with a name
// the admin typed or the server gave (verbatim), which is printed exactly
// as it is.
func upperFirst(s string, verbatim []string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	for _, n := range verbatim {
		if n != "" && strings.HasPrefix(s, n) {
			return s
		}
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
