package samba

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func prefixes(s ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}

func TestLagOf(t *testing.T) {
	for _, c := range []struct {
		name              string
		want, root        []netip.Prefix
		refused, admitted string
		effect            string
	}{
		{"same", prefixes("10.0.0.5/32"), prefixes("10.0.0.5/32"), "(none)", "(none)", "same addresses"},
		{"an MFP added, root lags", prefixes("10.0.0.5/32", "10.0.0.6/32"), prefixes("10.0.0.5/32"), "10.0.0.6/32", "(none)", "smbd refuses 10.0.0.6/32, which the daemon admits"},
		{"an MFP removed, root lags", prefixes("10.0.0.5/32"), prefixes("10.0.0.5/32", "10.0.0.9/32"), "(none)", "10.0.0.9/32", "smbd still admits 10.0.0.9/32, which the daemon no longer does"},
		{"local networks narrowed to the MFP", prefixes("127.0.0.1/32"), prefixes("127.0.0.0/8", "::1/128"), "(none)", "127.0.0.0/8 ::1/128", "still admits 127.0.0.0/8 ::1/128"},
		{"both ways", prefixes("10.0.1.0/24"), prefixes("10.0.0.0/24"), "10.0.1.0/24", "10.0.0.0/24", "smbd refuses 10.0.1.0/24, which the daemon admits (a registered MFP or [receiver] allow: its scans are turned away); and smbd still admits 10.0.0.0/24"},
		{"an address inside root's network is not refused", prefixes("10.0.0.7/32"), prefixes("10.0.0.0/24"), "(none)", "10.0.0.0/24", "still admits 10.0.0.0/24"},
		{"IPv6 and IPv4 never cover each other", prefixes("10.0.0.7/32"), prefixes("::/0"), "10.0.0.7/32", "::/0", "smbd refuses 10.0.0.7/32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := LagOf(c.want, c.root)
			if got := prefixList(l.Refused); got != c.refused {
				t.Errorf("refused %s, want %s", got, c.refused)
			}
			if got := prefixList(l.Admitted); got != c.admitted {
				t.Errorf("admitted %s, want %s", got, c.admitted)
			}
			if !strings.Contains(l.Effect(), c.effect) {
				t.Errorf("effect %q lacks %q", l.Effect(), c.effect)
			}
		})
	}
}

// fakeRoot is root's side of the handover as the test drives it: each
// write of the daemon's list reaches it (as the path unit's reload would)
// unless it is dropped, as systemd drops a write it did not see.
type fakeRoot struct {
	t      *testing.T
	dir    string
	mu     sync.Mutex
	drop   int    // writes still to drop
	dead   bool   // drop every write
	refuse string // refuse every write, saying this (as PrepareShare does)
	n      int    // writes made
	at     []time.Time
}

func (r *fakeRoot) write(allow []netip.Prefix) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	r.at = append(r.at, time.Now())
	if r.refuse != "" {
		if err := os.WriteFile(RefusedFile(r.dir), []byte(r.refuse+"\n"), 0o644); err != nil {
			r.t.Error(err)
		}
		return
	}
	if r.dead || r.drop > 0 {
		r.drop--
		return
	}
	if err := os.WriteFile(AppliedFile(r.dir), FormatAllow(allow), 0o644); err != nil {
		r.t.Error(err)
	}
}

func (r *fakeRoot) writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// times are when the writes reached root.
func (r *fakeRoot) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.at)
}

func (r *fakeRoot) refuseWith(reason string) {
	r.mu.Lock()
	r.refuse = reason
	r.mu.Unlock()
}

func (r *fakeRoot) set(dead bool) {
	r.mu.Lock()
	r.dead = dead
	r.mu.Unlock()
}

// handoverRig is a Handover on short times over a fake root, the daemon's
// list written through it.
type handoverRig struct {
	h       *Handover
	root    *fakeRoot
	file    string
	mu      sync.Mutex
	want    []netip.Prefix
	reports chan HandoverReport
	logs    *logRecords
}

var fastHandover = HandoverTimes{Waits: []time.Duration{40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond},
	Retry: 200 * time.Millisecond, MaxRetry: 800 * time.Millisecond, Poll: 5 * time.Millisecond, Check: 30 * time.Millisecond}

// logRecords keeps the level and message of each record the Handover
// logs (debug included).
type logRecords struct {
	mu  sync.Mutex
	got []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.got = append(l.got, r.Clone())
	l.mu.Unlock()
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// since counts the records at level or above logged after t.
func (l *logRecords) since(t time.Time, level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.got {
		if !r.Time.Before(t) && r.Level >= level {
			out = append(out, r.Level.String()+" "+r.Message)
		}
	}
	return out
}

func newHandoverRig(t *testing.T, root *fakeRoot) *handoverRig {
	dir := t.TempDir()
	root.t, root.dir = t, filepath.Join(dir, "smbd")
	if err := os.Mkdir(root.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &handoverRig{root: root, file: AllowFile(dir), reports: make(chan HandoverReport, 16), logs: &logRecords{}}
	rewrite := func() error {
		g.mu.Lock()
		defer g.mu.Unlock()
		if err := RewriteAllowFile(g.file, g.want); err != nil {
			return err
		}
		g.root.write(g.want)
		return nil
	}
	g.h = NewHandover(g.file, root.dir, fastHandover, rewrite, func(r HandoverReport) { g.reports <- r }, slog.New(g.logs))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return g
}

// write is the daemon writing a new list (as SetAllow does), then telling
// the Handover.
func (g *handoverRig) write(t *testing.T, allow []netip.Prefix) {
	g.mu.Lock()
	g.want = allow
	if _, err := WriteAllowFile(g.file, allow); err != nil {
		t.Fatal(err)
	}
	g.root.write(allow)
	g.h.Follow(allow)
	g.mu.Unlock()
}

func (g *handoverRig) next(t *testing.T, within time.Duration) HandoverReport {
	t.Helper()
	select {
	case r := <-g.reports:
		return r
	case <-time.After(within):
		t.Fatalf("no report within %v (root saw %d writes)", within, g.root.writes())
		return HandoverReport{}
	}
}

func (g *handoverRig) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case r := <-g.reports:
		t.Fatalf("unexpected report %+v", r)
	case <-time.After(d):
	}
}

// The list root takes at the first write: no report, no write again, also
// after several Checks.
func TestHandoverTakenAtOnce(t *testing.T) {
	g := newHandoverRig(t, &fakeRoot{})
	g.write(t, prefixes("10.0.0.5/32"))
	g.none(t, 300*time.Millisecond)
	if n := g.root.writes(); n != 1 {
		t.Errorf("%d writes, want 1", n)
	}
}

// A write root never saw (systemd's path unit missed it) is made again
// after the first wait; root takes the second; the report says so.
func TestHandoverLostWriteWrittenAgain(t *testing.T) {
	g := newHandoverRig(t, &fakeRoot{drop: 1})
	start := time.Now()
	g.write(t, prefixes("10.0.0.5/32"))
	r := g.next(t, 2*time.Second)
	if !r.Applied || r.Writes != 2 {
		t.Fatalf("report %+v, want applied at write 2", r)
	}
	if took := time.Since(start); took < fastHandover.Waits[0] {
		t.Errorf("written again after %v, before root's first wait (%v)", took, fastHandover.Waits[0])
	}
	g.none(t, 300*time.Millisecond)
	if n := g.root.writes(); n != 2 {
		t.Errorf("%d writes, want 2", n)
	}
}

// Root never takes the list: written 3 times (the waits between them),
// then the lag is reported with both lists, its effect and the fix; the
// list is written again every Retry; once root takes one, the report says
// applied (the daemon clears its fault).
func TestHandoverLagReportedThenCleared(t *testing.T) {
	g := newHandoverRig(t, &fakeRoot{})
	g.write(t, prefixes("10.0.0.5/32", "10.0.0.9/32")) // root has it
	g.none(t, 100*time.Millisecond)
	g.root.set(true)
	start := time.Now()
	g.write(t, prefixes("10.0.0.5/32", "10.0.0.6/32")) // .6 registered, .9 removed: root never sees it
	r := g.next(t, 2*time.Second)
	took := time.Since(start)
	if r.Applied || r.Writes != 3 {
		t.Fatalf("report %+v, want the lag after 3 writes", r)
	}
	var sum time.Duration
	for _, w := range fastHandover.Waits {
		sum += w
	}
	if took < sum {
		t.Errorf("lag reported after %v, before the waits (%v) passed", took, sum)
	}
	f := r.Fault()
	for _, want := range []string{
		"after 3 writes",
		"smbd refuses 10.0.0.6/32, which the daemon admits",
		"smbd still admits 10.0.0.9/32, which the daemon no longer does",
		"The daemon's list (" + g.file + "): 10.0.0.5/32 10.0.0.6/32",
		"root's (" + AppliedFile(g.root.dir) + "): 10.0.0.5/32 10.0.0.9/32",
		"systemctl status scanwarden-smbd-reload.path",
		"journalctl -u scanwarden-smbd.service",
		"systemctl restart scanwarden-smbd-reload.path",
		"writes its list again after 200ms, then twice as long each time up to every 800ms,",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("fault lacks %q:\n%s", want, f)
		}
	}
	t.Logf("fault after %v: %s", took.Round(time.Millisecond), f)
	// doctor, reading the files then, counts from the list's first write
	// (the rewrites keep its time): past root's grace, as the daemon
	if _, written, err := ReadLag(g.file, g.root.dir); err != nil || time.Since(written) < fastHandover.Grace() || written.After(start.Add(fastHandover.Waits[0])) {
		t.Errorf("doctor's view at the fault: written %v after the list's first write, %v ago (%v), want the first write, at least %v ago",
			written.Sub(start), time.Since(written), err, fastHandover.Grace())
	}
	// written again after Retry while it lags
	time.Sleep(fastHandover.Retry + fastHandover.Retry/2)
	if n := g.root.writes(); n < 4 {
		t.Errorf("%d writes after a Retry period of lag, want at least 4", n)
	}
	g.none(t, 0)
	// the path unit works again: the next write is taken
	g.root.set(false)
	r = g.next(t, 2*time.Second)
	if !r.Applied {
		t.Fatalf("report %+v, want applied", r)
	}
	g.none(t, 200*time.Millisecond)
}

// A new list while the old one lags: its own writes, then its own lag,
// naming the new list.
func TestHandoverNewListWhileLagging(t *testing.T) {
	g := newHandoverRig(t, &fakeRoot{})
	g.write(t, prefixes("10.0.0.4/32"))
	g.root.set(true)
	g.write(t, prefixes("10.0.0.5/32"))
	if r := g.next(t, 2*time.Second); r.Applied {
		t.Fatalf("report %+v, want the lag", r)
	}
	n := g.root.writes()
	g.write(t, prefixes("10.0.0.7/32"))
	r := g.next(t, 2*time.Second)
	if r.Applied || r.Writes != 3 || !strings.Contains(r.Fault(), "smbd refuses 10.0.0.7/32") {
		t.Fatalf("report %+v (%s), want the new list's lag after its 3 writes", r, r.Fault())
	}
	if got := g.root.writes() - n; got < 3 { // 3 before the report; a loaded box may see the next Retry's
		t.Errorf("%d writes of the new list, want 3", got)
	}
}

// Root took a list that is not the daemon's (its file written by someone
// else, and root's reload accepted it): written again at the next Check.
func TestHandoverRootDrifted(t *testing.T) {
	g := newHandoverRig(t, &fakeRoot{})
	want := prefixes("10.0.0.5/32")
	g.write(t, want)
	g.none(t, 100*time.Millisecond)
	if err := os.WriteFile(AppliedFile(g.root.dir), FormatAllow(prefixes("10.0.0.66/32")), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		got, err := ReadApplied(g.root.dir)
		if err == nil && sameAllow(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("root's list still %v (%v): not written again", got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := g.root.writes(); n != 2 {
		t.Errorf("%d writes, want 2", n)
	}
}

// No list of root's at all (root never ran, or an older version's root
// step): the lag says root's list cannot be read.
func TestHandoverRootListMissing(t *testing.T) {
	g := newHandoverRig(t, &fakeRoot{dead: true})
	g.write(t, prefixes("10.0.0.5/32"))
	r := g.next(t, 2*time.Second)
	if r.Applied || !errors.Is(r.Lag.RootErr, os.ErrNotExist) || !strings.Contains(r.Fault(), "root's list cannot be read") {
		t.Fatalf("report %+v (%s), want root's list unreadable", r, r.Fault())
	}
}

// RewriteAllowFile writes even when the file holds the list already (a
// new file: the path unit sees a change, its mtime the list's first
// write); WriteAllowFile does not.
func TestRewriteAllowFile(t *testing.T) {
	path := AllowFile(t.TempDir())
	allow := prefixes("10.0.0.5/32")
	if changed, err := WriteAllowFile(path, allow); err != nil || !changed {
		t.Fatalf("first write: %v %v", changed, err)
	}
	ino := func() uint64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	before := ino()
	if changed, err := WriteAllowFile(path, allow); err != nil || changed || ino() != before {
		t.Fatalf("the same list again: changed %v, err %v, a new file %v", changed, err, ino() != before)
	}
	// the list's first write is an hour ago: a rewrite keeps that time
	// (doctor's grace counts from it), a new list has its own
	first := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, first, first); err != nil {
		t.Fatal(err)
	}
	mtime := func() time.Time {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	if err := RewriteAllowFile(path, allow); err != nil || ino() == before {
		t.Fatalf("rewrite: err %v, a new file %v", err, ino() != before)
	}
	if !mtime().Equal(first) {
		t.Errorf("rewritten: mtime %v, want the list's first write %v", mtime(), first)
	}
	if err := RewriteAllowFile(path, prefixes("10.0.0.6/32")); err != nil || time.Since(mtime()) > time.Minute {
		t.Errorf("another list: err %v, mtime %v, want now", err, mtime())
	}
	if err := RewriteAllowFile(path, nil); err == nil {
		t.Error("an empty list rewritten")
	}
}

// A list root refuses (PrepareShare says why in RefusedFile): the lag
// names the reason; a refusal older than the list is not named.
func TestHandoverRootRefused(t *testing.T) {
	g := newHandoverRig(t, &fakeRoot{})
	g.write(t, prefixes("10.0.0.4/32"))
	old := RefusedFile(g.root.dir)
	if err := os.WriteFile(old, []byte("an old attack's line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	g.root.set(true)
	g.write(t, prefixes("10.0.0.5/32"))
	r := g.next(t, 2*time.Second)
	if r.Applied || strings.Contains(r.Fault(), "refused the daemon's list") || strings.Contains(r.Fault(), "old attack") {
		t.Fatalf("report %+v (%s), want a lag that names no refusal", r, r.Fault())
	}
	g.root.mu.Lock()
	g.root.refuse = "10.0.0.0/8 is a network that neither [receiver] allow nor this box's networks contain; the file is refused"
	g.root.mu.Unlock()
	g.write(t, prefixes("10.0.0.0/8"))
	r = g.next(t, 2*time.Second)
	want := "root refused the daemon's list (10.0.0.0/8 is a network that neither [receiver] allow nor this box's networks contain; the file is refused), so smbd refuses 10.0.0.0/8"
	if r.Applied || !strings.Contains(r.Fault(), want) {
		t.Fatalf("report %+v, want the fault to say %q:\n%s", r, want, r.Fault())
	}
}

// Root refuses every write, for a weekend in small: once the lag is
// reported the fault stays, root's copy is still read (the report comes as
// soon as root takes the list), but the list is written again after Retry,
// then after twice as long each time up to MaxRetry (each write reloads
// smbd), with nothing logged at warn or above; root's new reason is
// reported once (Again); a new list is written at once and gets the waits
// afresh. Before the backoff the list was written every Retry, with a warn
// line each time.
func TestHandoverLagBacksOff(t *testing.T) {
	g := newHandoverRig(t, &fakeRoot{})
	g.write(t, prefixes("10.0.0.4/32")) // root has it
	g.none(t, 100*time.Millisecond)
	g.root.refuseWith("10.0.0.5/32: reason one")
	g.write(t, prefixes("10.0.0.5/32"))
	r := g.next(t, 2*time.Second)
	if r.Applied || r.Again || r.Writes != 3 || !strings.Contains(r.Fault(), "reason one") {
		t.Fatalf("report %+v (%s), want the lag after 3 writes naming root's reason", r, r.Fault())
	}
	lagged, before := time.Now(), g.root.writes()
	g.none(t, 2*time.Second) // the fault stays: no report while nothing changes
	at := g.root.times()[before:]
	t.Logf("%d writes in the 2 s after the fault (before the backoff: one every %v, %d)", len(at), fastHandover.Retry, 2*time.Second/fastHandover.Retry)
	if len(at) < 2 || len(at) > 4 { // 200 ms, 600 ms, 1.4 s (2.2 s)
		t.Errorf("%d writes in the 2 s after the fault, want 3 (after 200ms, 400ms, 800ms)", len(at))
	}
	for i := 1; i < len(at); i++ {
		gap, want := at[i].Sub(at[i-1]), min(fastHandover.Retry<<i, fastHandover.MaxRetry)
		if gap < want*3/4 {
			t.Errorf("write %d after the fault %v after the one before, want about %v (twice as long each time)", i+1, gap.Round(time.Millisecond), want)
		}
	}
	if warn := g.logs.since(lagged, slog.LevelWarn); len(warn) > 0 {
		t.Errorf("logged at warn or above while nothing changed:\n%s", strings.Join(warn, "\n"))
	}
	if debug := g.logs.since(lagged, slog.LevelDebug); len(debug) < len(at) {
		t.Errorf("%d debug lines for %d writes: %v", len(debug), len(at), debug)
	}

	// root says otherwise at its next write: reported once
	g.root.refuseWith("10.0.0.5/32: reason two")
	r = g.next(t, 2*fastHandover.MaxRetry)
	if r.Applied || !r.Again || r.Lag.RootRefused != "10.0.0.5/32: reason two" || !strings.Contains(r.Fault(), "reason two") {
		t.Fatalf("report %+v (%s), want the lag again with root's new reason", r, r.Fault())
	}
	g.none(t, 3*fastHandover.Poll+50*time.Millisecond)

	// a new list (an MFP registered): written at once, the waits afresh
	n := g.root.writes()
	start := time.Now()
	g.write(t, prefixes("10.0.0.7/32"))
	r = g.next(t, 2*time.Second)
	if took := time.Since(start); r.Applied || r.Again || r.Writes != 3 || took < fastHandover.Grace() || took > fastHandover.Grace()+fastHandover.MaxRetry {
		t.Fatalf("report %+v after %v, want the new list's lag after its 3 writes and %v", r, took, fastHandover.Grace())
	}
	if got := g.root.writes() - n; got < 3 {
		t.Errorf("%d writes of the new list before its lag, want 3", got)
	}
	if warn := g.logs.since(start, slog.LevelWarn); len(warn) != 2 {
		t.Errorf("logged at warn %d times for the new list's two lost writes, want 2:\n%s", len(warn), strings.Join(warn, "\n"))
	}

	// root takes it at the next write: reported at once
	g.root.refuseWith("")
	r = g.next(t, 2*time.Second)
	if !r.Applied {
		t.Fatalf("report %+v, want applied", r)
	}
}

// TestHandoverSameListStartsNoRound: the daemon's sync hands the same
// list again (only its warning changed) while root lags: no new round —
// the next write comes on the backoff's schedule (Retry after the lag's
// report), not the first wait's.
func TestHandoverSameListStartsNoRound(t *testing.T) {
	g := newHandoverRig(t, &fakeRoot{})
	g.root.refuseWith("10.0.0.5/32: refused")
	g.write(t, prefixes("10.0.0.5/32"))
	if r := g.next(t, 2*time.Second); r.Applied || r.Writes != 3 {
		t.Fatalf("report %+v, want the lag after 3 writes", r)
	}
	reported := time.Now()
	g.write(t, prefixes("10.0.0.5/32")) // the sync again: the same list
	n := g.root.writes()
	deadline := time.Now().Add(5 * time.Second)
	for g.root.writes() == n {
		if time.Now().After(deadline) {
			t.Fatal("no write within 5 s of the lag's report")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if gap := time.Since(reported); gap < fastHandover.Retry*3/4 {
		t.Errorf("written again %v after the lag's report: the same list started a new round (first wait %v), want the backoff's %v",
			gap.Round(time.Millisecond), fastHandover.Waits[0], fastHandover.Retry)
	}
}
