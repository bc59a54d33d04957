package smbcheck

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/smbconn"
)

// A check with no device profile states the server's lowest SMB2/3
// dialect — what the admin compares with the MFP's highest. Learning it
// costs one connection and one NEGOTIATE per dialect below the one the
// server chose, so a check asks it beside its later steps rather than
// before them (floorAsk), and a long-running process remembers the answer
// per server for a while, its checks of one server asking at once sharing
// one question (LowestDialects).

// floorAsk is one check's lowest-dialect question. It is asked on a
// goroutine of its own while the check's connection goes on with the
// session, share and write; its connections come one at a time, and the
// check waits for it before it opens any other extra connection (the
// check's politeness: one extra connection at a time) and before its
// verdict. The negotiate step has ended by then: the finding is written
// into it (the record holds back the steps' progress meanwhile, so the
// steps are still shown in order and complete).
type floorAsk struct {
	done chan struct{} // closed once the fields below are final
	low  Dialect       // 0: not learned
	// asked is how many dialects were offered alone (0: remembered).
	asked int
	err   error     // why the server could not be asked
	seen  time.Time // when a remembered answer was learned
	// where the finding goes: the negotiate step's index in the report
	// and its detail around the finding
	step       int
	head, tail string
}

// into writes the finding into the negotiate step st.
func (f *floorAsk) into(st *Step) {
	if f.seen.IsZero() {
		st.Evidence["lowest_dialect_asked"] = f.asked
	} else {
		st.Evidence["lowest_dialect_asked"] = 0
		st.Evidence["lowest_dialect_learned"] = f.seen.UTC().Format(time.RFC3339)
	}
	phrase := ""
	switch {
	case f.err != nil:
		st.Evidence["lowest_dialect_error"] = f.err.Error()
	case f.low != 0:
		st.Evidence["lowest_dialect"] = f.low.String()
		phrase = fmt.Sprintf("; the server's lowest dialect is %s", f.low)
	}
	st.Detail = f.head + phrase + f.tail
}

// firstAsk is the question's first dialect, 2.0.2 offered alone, asked by
// a check whose memory is its own (the CLI's) as soon as its TCP connection
// stands, beside its own negotiate rather than after it: the one extra
// connection is then mostly over before the logon, share and write need
// the server. The rest of the question, if the server refuses 2.0.2,
// follows once the server has chosen its highest dialect. Checks that
// share a memory (serve's) do not ask it early: one of them asks for all
// (LowestDialects.answer).
type firstAsk struct {
	done chan struct{} // closed once ok and err are final
	ok   bool          // the server takes 2.0.2
	err  error
}

// askFirst starts the first dialect's question at addr when the check
// will ask the lowest dialect with a memory of its own that knows nothing
// of the server yet.
func (c *checker) askFirst(ctx context.Context) {
	if !c.o.ownLowest || c.o.Device.Known() || c.o.LowestDialects.knows(negotiateStep{c}.floorKey(), c.o.Now(), c.o.LowestSince) {
		return
	}
	f := &firstAsk{done: make(chan struct{})}
	c.first = f
	addr, port, host, timeout := c.addr, c.t.DialPort(), c.t.Host, c.o.StepTimeout
	go func() {
		defer close(f.done)
		f.ok, f.err = acceptsDialect(ctx, addr, port, host, timeout, DialectSMB202)
	}()
}

// lowestDialect offers each dialect below highest alone on a connection
// of its own, lowest first, until the server takes one (one NEGOTIATE
// each, nothing more; SMB1 is not asked); first, when not nil, is the
// answer for 2.0.2, asked already. It returns the lowest dialect the
// server takes and how many were asked; an error names the dialect the
// server could not be asked about.
func lowestDialect(ctx context.Context, addr string, port int, host string, timeout time.Duration, highest Dialect, first *firstAsk) (Dialect, int, error) {
	asked, from := 0, DialectSMB202
	if first != nil {
		<-first.done
		asked, from = 1, DialectSMB202+1
		switch {
		case first.err != nil:
			return 0, asked, fmt.Errorf("%s: %w", DialectSMB202, first.err)
		case first.ok:
			return DialectSMB202, asked, nil
		}
	}
	for d := from; d < highest; d++ {
		asked++
		ok, err := acceptsDialect(ctx, addr, port, host, timeout, d)
		if err != nil {
			return 0, asked, fmt.Errorf("%s: %w", d, err)
		}
		if ok {
			return d, asked, nil
		}
	}
	return highest, asked, nil
}

// acceptsDialect asks the server, on a connection of its own, whether it
// takes dialect d offered alone.
func acceptsDialect(ctx context.Context, addr string, port int, host string, timeout time.Duration, d Dialect) (bool, error) {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := smbconn.DialTCP(pctx, addr, port)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	return smbconn.AcceptsDialect(pctx, conn, port, host, d)
}

// LowestDialectTTL is how long serve remembers a server's lowest dialect:
// a server whose floor an admin raises or lowers is reported with the old
// one for at most ten minutes — less than the default check interval
// (15 min), so a server with one destination is still asked at every
// scheduled check, while one with a folder per user (the common case) is
// asked once per ten minutes instead of once per destination. A check
// whose negotiate fails, or whose server now chooses another highest
// dialect, asks again at once.
const LowestDialectTTL = 10 * time.Minute

// LowestDialects remembers, per server address (IP and port), the lowest
// dialect a check with no device profile learned, for a long-running
// process (serve) to share among its checks: a check that finds an answer
// younger than the TTL, for a server that still chooses the same highest
// dialect, states it without asking, and one that finds another check of
// its server asking waits for that answer. The zero value is not usable; a
// nil *LowestDialects remembers nothing. Safe for concurrent checks.
type LowestDialects struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]lowestEntry
	// asking holds, per server, the question being asked now: checks of
	// that server that start meanwhile wait for its answer rather than
	// asking again (one set of extra connections for all of them).
	asking map[string]*lowestFlight
}

// lowestFlight is one server's lowest-dialect question in flight, shared
// by the checks of that server that find it there.
type lowestFlight struct {
	highest Dialect
	at      time.Time     // when the asking check asked (what is remembered)
	done    chan struct{} // closed once low and err are final
	low     Dialect
	err     error
	waiters int // the checks that found it and wait for it
}

type lowestEntry struct {
	low, highest Dialect
	at           time.Time // when the check asked (its negotiate step's end)
}

// NewLowestDialects remembers each answer for ttl.
func NewLowestDialects(ttl time.Duration) *LowestDialects {
	return &LowestDialects{ttl: ttl, m: map[string]lowestEntry{}, asking: map[string]*lowestFlight{}}
}

// knows says whether key has an answer younger than the TTL at now and
// learned no earlier than since (for any highest dialect), or a question
// in flight asked no earlier than since.
func (l *LowestDialects) knows(key string, now, since time.Time) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.m[key]; ok && l.fresh(e, now) && !e.at.Before(since) {
		return true
	}
	f := l.asking[key]
	return f != nil && !f.at.Before(since)
}

// lookup is key's answer if it is younger than the TTL at now, was
// learned no earlier than since and from a server that chose the same
// highest dialect.
func (l *LowestDialects) lookup(key string, highest Dialect, now, since time.Time) (lowestEntry, bool) {
	if l == nil {
		return lowestEntry{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.m[key]
	if !ok || e.highest != highest || !l.fresh(e, now) || e.at.Before(since) {
		return lowestEntry{}, false
	}
	return e, true
}

func (l *LowestDialects) fresh(e lowestEntry, now time.Time) bool {
	age := now.Sub(e.at)
	return age >= 0 && age < l.ttl
}

// remember stores key's answer, unless a check that asked later stored
// one already (checks run at once and finish out of order), and drops the
// ones older than the TTL at e.at, so the map holds no more than the
// servers checked within it. An answer learned after e.at is kept.
func (l *LowestDialects) remember(key string, e lowestEntry) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rememberLocked(key, e)
}

func (l *LowestDialects) rememberLocked(key string, e lowestEntry) {
	for k, old := range l.m {
		if e.at.Sub(old.at) >= l.ttl {
			delete(l.m, k)
		}
	}
	if old, ok := l.m[key]; ok && old.at.After(e.at) {
		return
	}
	l.m[key] = e
}

// forget drops key's answer unless it was learned after at (by a check
// that asked after the one that failed).
func (l *LowestDialects) forget(key string, at time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgetLocked(key, at)
}

func (l *LowestDialects) forgetLocked(key string, at time.Time) {
	if old, ok := l.m[key]; ok && !old.at.After(at) {
		delete(l.m, key)
	}
}

// answer is key's lowest dialect for a check that asked at now: the
// remembered one (lookup); else the answer of the question another check
// of the server is asking (for the same highest dialect, asked no earlier
// than since); else ask's, which the checks that start meanwhile wait for
// and which is remembered (a failure forgets). asked is how many dialects
// this check offered itself; seen, when not zero, is when the answer it
// did not ask was learned. A failed question is not shared (it may be its
// own check's, whose context ended): the checks that waited for it ask
// again, sharing that question in the same way. A nil *LowestDialects
// asks every time.
func (l *LowestDialects) answer(ctx context.Context, key string, highest Dialect, now, since time.Time,
	ask func(context.Context) (Dialect, int, error)) (low Dialect, asked int, seen time.Time, err error) {
	if l == nil {
		low, asked, err = ask(ctx)
		return low, asked, time.Time{}, err
	}
	for {
		e, f, lead := l.join(key, highest, now, since)
		switch {
		case f == nil:
			return e.low, 0, e.at, nil
		case lead:
			f.low, asked, f.err = ask(ctx)
			l.land(key, f)
			return f.low, asked, time.Time{}, f.err
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return 0, 0, time.Time{}, ctx.Err()
		}
		if f.err == nil {
			return f.low, 0, f.at, nil
		}
	}
}

// join finds key's remembered answer (f nil), or the question in flight
// to wait for, or — lead — a new question this check asks, registered so
// that the checks that start meanwhile wait for it.
func (l *LowestDialects) join(key string, highest Dialect, now, since time.Time) (e lowestEntry, f *lowestFlight, lead bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.m[key]; ok && e.highest == highest && l.fresh(e, now) && !e.at.Before(since) {
		return e, nil, false
	}
	if f := l.asking[key]; f != nil && f.highest == highest && !f.at.Before(since) {
		f.waiters++
		return lowestEntry{}, f, false
	}
	f = &lowestFlight{highest: highest, at: now, done: make(chan struct{})}
	l.asking[key] = f
	return lowestEntry{}, f, true
}

// land ends question f: its answer is remembered (a failure forgets
// key's), the checks waiting for it go on, and the next check of the
// server asks anew unless it finds the answer.
func (l *LowestDialects) land(key string, f *lowestFlight) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f.err == nil {
		l.rememberLocked(key, lowestEntry{low: f.low, highest: f.highest, at: f.at})
	} else {
		l.forgetLocked(key, f.at)
	}
	if l.asking[key] == f {
		delete(l.asking, key)
	}
	close(f.done)
}
