package samba

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// AppliedFile is root's copy of the last allowlist it took from the daemon
// (PrepareShare writes it beside smb.conf, mode 0644, once smb.conf carries
// that list): what the daemon reads to learn that root applied its list.
func AppliedFile(smbdDir string) string { return filepath.Join(smbdDir, "allow") }

// RefusedFile says why root last refused the daemon's list (PrepareShare
// writes it, mode 0644, and removes it once it takes a list).
func RefusedFile(smbdDir string) string { return filepath.Join(smbdDir, "allow.refused") }

// maxRefusedBytes bounds what is read of RefusedFile.
const maxRefusedBytes = 1024

// readRefused is why root refused the daemon's list, when it did so at
// since or later ("" otherwise: an older refusal is not this list's).
func readRefused(smbdDir string, since time.Time) string {
	f, err := os.Open(RefusedFile(smbdDir))
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.ModTime().Before(since) {
		return ""
	}
	b := make([]byte, maxRefusedBytes)
	n, _ := io.ReadFull(f, b)
	return strings.TrimSpace(strings.ToValidUTF8(string(b[:n]), "?"))
}

// ReadApplied reads AppliedFile: the list smb.conf in smbdDir carries.
func ReadApplied(smbdDir string) ([]netip.Prefix, error) {
	name := AppliedFile(smbdDir)
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("root's applied allowlist: %w", err)
	}
	return parseAllow(name, b)
}

// reloadPathUnit watches AllowFile and reloads smbdUnit when it changes
// (the installed layout).
const reloadPathUnit = "scanwarden-smbd-reload.path"

// AllowLag is how the list root applied differs from the one the daemon
// handed it.
type AllowLag struct {
	Want []netip.Prefix // the daemon's list
	Root []netip.Prefix // root's (AppliedFile); nil with RootErr
	// RootErr: root's list could not be read (none applied yet, or not
	// readable).
	RootErr error
	// RootRefused is why root refused the daemon's list, when it did since
	// the list was written (RefusedFile); "" when it did not.
	RootRefused string
	// Refused are the daemon's entries that none of root's admits: smbd
	// turns them away (an MFP refused).
	Refused []netip.Prefix
	// Admitted are root's entries that none of the daemon's contains:
	// smbd still admits them (an address taken off the list can still
	// store scans).
	Admitted []netip.Prefix
}

// LagOf compares the daemon's list with root's.
func LagOf(want, root []netip.Prefix) AllowLag {
	l := AllowLag{Want: want, Root: root}
	for _, w := range want {
		if !covered(w, root) {
			l.Refused = append(l.Refused, w)
		}
	}
	for _, r := range root {
		if !covered(r, want) {
			l.Admitted = append(l.Admitted, r)
		}
	}
	return l
}

// covered says whether one of nets contains all of p.
func covered(p netip.Prefix, nets []netip.Prefix) bool {
	p = unmapPrefix(p.Masked())
	for _, n := range nets {
		n = unmapPrefix(n.Masked())
		if n.Addr().BitLen() == p.Addr().BitLen() && n.Bits() <= p.Bits() && n.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// sameAllow says whether two lists hold the same entries.
func sameAllow(a, b []netip.Prefix) bool {
	norm := func(ps []netip.Prefix) []netip.Prefix {
		out := make([]netip.Prefix, 0, len(ps))
		for _, p := range ps {
			out = append(out, unmapPrefix(p.Masked()))
		}
		sortPrefixes(out)
		return slices.Compact(out)
	}
	return slices.Equal(norm(a), norm(b))
}

func prefixList(ps []netip.Prefix) string {
	if len(ps) == 0 {
		return "(none)"
	}
	s := make([]string, 0, len(ps))
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, " ")
}

// Effect says, for an admin, what the lag means at the share: who is
// turned away, who still gets in.
func (l AllowLag) Effect() string {
	if l.RootErr != nil {
		return fmt.Sprintf("root's list cannot be read (%v), so whom smbd admits is not known", l.RootErr)
	}
	var parts []string
	if len(l.Refused) > 0 {
		parts = append(parts, "smbd refuses "+prefixList(l.Refused)+", which the daemon admits (a registered MFP or [receiver] allow: its scans are turned away)")
	}
	if len(l.Admitted) > 0 {
		parts = append(parts, "smbd still admits "+prefixList(l.Admitted)+", which the daemon no longer does (an address taken off the list can still store scans)")
	}
	if len(parts) == 0 {
		parts = append(parts, "root's list names the same addresses in other entries")
	}
	if l.RootRefused != "" {
		return "root refused the daemon's list (" + l.RootRefused + "), so " + strings.Join(parts, "; and ")
	}
	return strings.Join(parts, "; and ")
}

// Applied says whether root has the daemon's list (in any order).
func (l AllowLag) Applied() bool {
	return l.RootErr == nil && sameAllow(l.Root, l.Want)
}

// Lists names both lists: the daemon's (in file, its AllowFile) and
// root's (AppliedFile in smbdDir).
func (l AllowLag) Lists(file, smbdDir string) string {
	root := prefixList(l.Root)
	if l.RootErr != nil {
		root = "unreadable"
	}
	return fmt.Sprintf("The daemon's list (%s): %s; root's (%s): %s", file, prefixList(l.Want), AppliedFile(smbdDir), root)
}

// LagFix is what makes root take the daemon's list (in file) and where
// root says why it refused one.
func LagFix(file string) string {
	return fmt.Sprintf("Check `systemctl status %s` (it must be active, watching %s) and `journalctl -u %s` (a list root refused is named there); "+
		"`systemctl restart %s` and `systemctl reload %s` make root take the list now", reloadPathUnit, file, smbdUnit, reloadPathUnit, smbdUnit)
}

// ReadLag compares, from outside the daemon (doctor, as root or as the
// daemon's user), the daemon's list in file (its AllowFile, read below its
// folder as safefile does: no link followed, no FIFO) with root's copy in
// smbdDir, with root's reason when it refused a list since file was
// written. written is when the daemon wrote file. The error: file could
// not be read (fs.ErrNotExist: the daemon has written no list there).
func ReadLag(file, smbdDir string) (lag AllowLag, written time.Time, err error) {
	want, written, err := readAllowFile(file, openBelowDir)
	if err != nil {
		return AllowLag{}, time.Time{}, err
	}
	root, rerr := ReadApplied(smbdDir)
	lag = LagOf(want, root)
	lag.RootErr, lag.RootRefused = rerr, readRefused(smbdDir, written)
	return lag, written, nil
}

// HandoverTimes is how long root is given to apply a list and how often
// the list is written again.
type HandoverTimes struct {
	// Waits: how long root is given after the write and after each
	// rewrite; once the last has passed, the lag is reported.
	Waits []time.Duration
	// Retry: once the lag is reported, the list is written again after
	// Retry, then after twice as long each time, up to MaxRetry (a
	// MaxRetry below Retry: every Retry).
	Retry, MaxRetry time.Duration
	// Poll: how often root's list is read while it lags or a write waits.
	Poll time.Duration
	// Check: how often root's list is read once it was applied (root could
	// have taken a list that is not the daemon's since).
	Check time.Duration
}

// Grace is how long root is given from the list's first write before the
// lag is reported: the sum of Waits.
func (t HandoverTimes) Grace() time.Duration {
	var sum time.Duration
	for _, w := range t.Waits {
		sum += w
	}
	return sum
}

// backoff is the wait after the k-th rewrite since the lag was reported
// (0: the report itself): Retry doubled k times, at most MaxRetry.
func (t HandoverTimes) backoff(k int) time.Duration {
	d, most := t.Retry, max(t.MaxRetry, t.Retry)
	for ; k > 0 && d > 0 && d < most; k-- {
		d *= 2
	}
	return min(d, most)
}

// DefaultHandoverTimes: root has 5 s after the write (its reload takes
// under 2 s on an idle box), then 10 s and 20 s after two rewrites: the
// lag is reported 35 s after the write; the list is written again a
// minute after that, then 2, 4, … minutes later, at most every hour (each
// write reloads smbd: a weekend of a root that refuses the list is ~50
// reloads, not ~3,000).
var DefaultHandoverTimes = HandoverTimes{
	Waits: []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second},
	Retry: time.Minute, MaxRetry: time.Hour, Poll: 500 * time.Millisecond, Check: 30 * time.Second,
}

// HandoverReport says where the daemon's list stands at root: applied, or
// lagging behind after Writes writes.
type HandoverReport struct {
	Applied bool
	// Again: the lag was reported before and root's refusal reason
	// changed since (Lag.RootRefused is the new one).
	Again   bool
	Writes  int           // writes of this list (1: the first was taken)
	Took    time.Duration // since its first write
	Lag     AllowLag      // when not applied
	File    string        // the daemon's AllowFile
	SmbdDir string        // root's folder (AppliedFile)
	// Retry, MaxRetry: while it lags, the list is written again after
	// Retry, then twice as long each time up to MaxRetry.
	Retry, MaxRetry time.Duration
}

// Fault is the lag as the daemon's fault: what the daemon wants, what root
// has, what that means at the share, and the fix.
func (r HandoverReport) Fault() string {
	again := fmt.Sprintf("every %v", r.Retry)
	if r.MaxRetry > r.Retry {
		again = fmt.Sprintf("after %v, then twice as long each time up to every %v,", r.Retry, r.MaxRetry)
	}
	return fmt.Sprintf("root has not applied the fallback share's allowlist after %d writes in %v: %s. %s. %s. The daemon writes its list again %s and clears this once root has it",
		r.Writes, roundTook(r.Took), r.Lag.Effect(), r.Lag.Lists(r.File, r.SmbdDir), LagFix(r.File), again)
}

func roundTook(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// Handover follows the allowlist the daemon hands root (the installed
// layout) until root has applied it: it reads root's copy (AppliedFile),
// and when root has not taken the list within a wait, it has the list
// written again (a lost write: systemd's path unit missed it, or was
// stopped). After the last wait it reports the lag (the daemon's fault);
// it goes on reading root's copy every Poll and reports at once when root
// has the list, reports again when root's refusal reason changes, and
// writes the list again less and less often (Retry doubled up to
// MaxRetry: each write reloads smbd), logging those writes at debug level
// only. Once applied it reads root's copy every Check and follows again
// should it differ.
type Handover struct {
	file, smbdDir string
	times         HandoverTimes
	// rewrite writes the daemon's current list to file again (the
	// daemon's: under its lock over the writes of that file).
	rewrite func() error
	report  func(HandoverReport)
	log     *slog.Logger
	now     func() time.Time

	mu    sync.Mutex
	want  []netip.Prefix // the list last written (Follow); under mu
	gen   int            // counts Follow calls; under mu
	wrote chan struct{}  // Follow's signal

	// the loop's own state (Run's goroutine only)
	seen     int // gen of the round
	writes   int
	first    time.Time // the round's first write
	next     time.Time // when root's time is up
	pending  bool      // a write waits for root
	reported bool      // the round's lag is reported
	lagging  bool      // reported as not applied (this round or before)
	reason   string    // root's refusal reason as last reported
}

// NewHandover follows the list the daemon writes to file (AllowFile) to
// root's copy in smbdDir. rewrite writes the daemon's current list again
// (never a list older than the last Follow); report is called when the
// list is found applied after a lag or a rewrite, and when it lags past the
// last wait.
func NewHandover(file, smbdDir string, t HandoverTimes, rewrite func() error, report func(HandoverReport), log *slog.Logger) *Handover {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handover{file: file, smbdDir: smbdDir, times: t, rewrite: rewrite, report: report, log: log, now: time.Now,
		wrote: make(chan struct{}, 1)}
}

// Follow says the daemon has just written allow (or found it in place):
// root is given the first wait from now.
//
// The same list again (the daemon's sync saw only its warning change)
// starts nothing: there is nothing new for root to take, and a new round
// would restart the waits, hold off the lag's report and drop the backoff.
func (h *Handover) Follow(allow []netip.Prefix) {
	h.mu.Lock()
	if h.gen > 0 && sameAllow(h.want, allow) {
		h.mu.Unlock()
		return
	}
	h.want = slices.Clone(allow)
	h.gen++
	h.mu.Unlock()
	select {
	case h.wrote <- struct{}{}:
	default:
	}
}

// Run follows the lists until ctx ends.
func (h *Handover) Run(ctx context.Context) {
	t := time.NewTimer(h.times.Check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wrote:
		case <-t.C:
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(h.step())
	}
}

// step reads root's list, writes the daemon's again or reports as due,
// and says when to look next.
func (h *Handover) step() time.Duration {
	h.mu.Lock()
	want, gen := h.want, h.gen
	h.mu.Unlock()
	if gen == 0 {
		return h.times.Check
	}
	now := h.now()
	if gen != h.seen {
		h.seen, h.writes, h.first, h.next, h.pending, h.reported = gen, 1, now, now.Add(h.wait(1)), true, false
	}
	root, err := ReadApplied(h.smbdDir)
	if err == nil && sameAllow(root, want) {
		if h.lagging || (h.pending && h.writes > 1) {
			h.report(HandoverReport{Applied: true, Writes: h.writes, Took: now.Sub(h.first), File: h.file, SmbdDir: h.smbdDir})
		}
		h.pending, h.lagging, h.reported = false, false, false
		return h.times.Check
	}
	if !h.pending && !h.lagging {
		// applied before, not now: root took a list that is not the
		// daemon's (its file written by someone else). Write it again.
		h.log.Warn("root's allowlist of the fallback share is no longer the daemon's: written again", "daemon", prefixList(want), "root", prefixList(root), "err", err)
		h.writes, h.first, h.next, h.pending, h.reported = 0, now, now, true, false
	}
	if h.reported {
		// the lag is reported: say so again when root's reason changes
		if reason := readRefused(h.smbdDir, h.first); reason != h.reason {
			h.reason = reason
			h.report(h.lagReport(true, now, want, root, err))
		}
	}
	if now.Before(h.next) {
		return min(h.times.Poll, h.next.Sub(now))
	}
	if h.writes >= len(h.times.Waits) && !h.reported {
		r := h.lagReport(false, now, want, root, err)
		h.lagging, h.reported, h.reason = true, true, r.Lag.RootRefused
		h.next = now.Add(h.times.backoff(0))
		h.report(r)
		return h.times.Poll
	}
	h.writes++
	h.next = now.Add(h.wait(h.writes))
	if werr := h.rewrite(); werr != nil {
		h.log.Error("fallback share allowlist not written again", "err", werr)
		return h.times.Poll
	}
	level := slog.LevelWarn
	if h.reported { // the fault says so already
		level = slog.LevelDebug
	}
	h.log.Log(context.Background(), level, "root has not applied the fallback share's allowlist yet: written again", "write", h.writes,
		"since", now.Sub(h.first).Round(time.Millisecond), "next", h.next.Sub(now), "daemon", prefixList(want), "root", prefixList(root),
		"effect", h.lagReport(false, now, want, root, err).Lag.Effect())
	return h.times.Poll
}

// lagReport is the round's lag now: root's list (or err reading it) and
// its refusal reason since the round's first write.
func (h *Handover) lagReport(again bool, now time.Time, want, root []netip.Prefix, err error) HandoverReport {
	lag := LagOf(want, root)
	lag.RootErr, lag.RootRefused = err, readRefused(h.smbdDir, h.first)
	return HandoverReport{Again: again, Writes: h.writes, Took: now.Sub(h.first), Lag: lag, File: h.file, SmbdDir: h.smbdDir,
		Retry: h.times.Retry, MaxRetry: h.times.MaxRetry}
}

// wait is how long root is given after write n (1: the first): the n-th
// of Waits; past them (the lag reported) the backoff.
func (h *Handover) wait(n int) time.Duration {
	if n <= len(h.times.Waits) {
		return h.times.Waits[n-1]
	}
	return h.times.backoff(n - len(h.times.Waits))
}
