package snmp

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// An SNMPv3 message carries its sender's engine boots and engine time
// (USM, RFC 3414), covered by the message's digest; gosnmp checks the
// digest, not the time. Without a check a captured authentic trap could be
// sent again at any later time and be taken as new. replayGuard does what
// RFC 3414 3.2 step 7b asks of a receiver that is not the authoritative
// engine: it keeps, per sender engine, the latest boots/time seen and when,
// and refuses a message from an older boot or more than timeWindow behind
// that engine's clock as extrapolated since. Inside the window it also
// refuses an exact copy (the same digest) of a message already taken.
//
// The notions live in memory and, when the listener has a ReplayStore, are
// saved there (at most a second after they change, and at Close) and read
// back at Open: a trap captured before a restart is refused after it.
// Without a store the first message of an engine after a restart is taken
// as it comes. A loaded notion is re-based to the time of loading: its
// saved wall-clock time is not trusted (a box without a real-time clock
// starts with its clock ahead or behind, and NTP steps it later), so the
// extrapolation starts again from the engine's latest time at Open. That
// under-counts the time the box was down (more permissive); captures from
// further back than the window before that latest time, and copies of the
// digests taken within it, are still refused.
//
// An engine that restarts without incrementing snmpEngineBoots (some
// agents keep it on a read-only store, or reset it) has its clock far
// behind its notion from then on, which would never heal. So after
// rebaseAfter authenticated traps in a row from one engine, refused as
// behind its notion, with one boots value, and consistent with each other
// (each later in engine time, the engine's clock advancing with ours), the
// notion is re-based to the last of them (which is taken), and the
// listener logs an ERROR naming the engine and counts it.

// timeWindow is RFC 3414's 150 s.
const timeWindow = 150 * time.Second

// Bounds of the guard's memory. Only authenticated messages reach it.
// When maxDigests are kept, the oldest go down to keepDigests (and all
// older than the window): the scan is paid once per maxDigests-keepDigests
// new digests.
const (
	maxEngines  = 1024
	maxDigests  = 8192
	keepDigests = maxDigests * 3 / 4
)

// rebaseAfter consistent traps in a row refused as behind an engine's
// notion re-base it; rebaseSlack (plus 2 % of the run's length) is how far
// the engine's clock may drift from ours over the run (whole seconds on
// the wire, the network's delay).
const (
	rebaseAfter = 3
	rebaseSlack = 2 * time.Second
)

// usmStamp is what a v3 trap says about its sender's engine.
type usmStamp struct {
	engineID    string
	boots, time uint32
	digest      string // msgAuthenticationParameters
}

type engineNotion struct {
	boots, time uint32
	at          time.Time // when the latest boots/time arrived (or the notion was loaded)
	behind      behindRun // the traps refused in a row as behind this notion
}

// behindRun is a run of authenticated traps from one engine refused as
// behind its notion (an earlier boot, or older than the window).
type behindRun struct {
	n                   int
	boots               uint32
	firstTime, lastTime uint32
	firstAt             time.Time
}

// add counts s, refused at now as behind, into the run; it says whether
// the run is now rebaseAfter long. A trap that does not follow the run (
// another boots value, not later in engine time, or engine time not
// advancing with real time since the run's first) starts a new run.
func (r *behindRun) add(s usmStamp, now time.Time) bool {
	if r.n > 0 && s.boots == r.boots && s.time > r.lastTime {
		engine := time.Duration(s.time-r.firstTime) * time.Second
		ours := now.Sub(r.firstAt)
		if d := engine - ours; d.Abs() <= rebaseSlack+ours.Abs()/50 {
			r.n++
			r.lastTime = s.time
			return r.n >= rebaseAfter
		}
	}
	*r = behindRun{n: 1, boots: s.boots, firstTime: s.time, lastTime: s.time, firstAt: now}
	return false
}

// verdict is the guard's answer on one message.
type verdict struct {
	ok  bool
	why string // why it was refused
	// rebased is set when the message ended a run of rebaseAfter refused
	// as behind: the notion given up (its time extrapolated to now) was
	// replaced by the message's boots/time, and the message taken.
	rebased bool
	was     struct{ boots, time uint32 }
}

type seenKey struct{ engine, digest string }

type replayGuard struct {
	mu      sync.Mutex
	engines map[string]engineNotion
	seen    map[seenKey]time.Time // when taken
	dirty   bool                  // changed since the last state()
}

func newReplayGuard() *replayGuard {
	return &replayGuard{engines: map[string]engineNotion{}, seen: map[seenKey]time.Time{}}
}

// check says whether a message stamped s, arriving at now, is taken; when
// it is, it updates the engine's notion.
func (g *replayGuard) check(s usmStamp, now time.Time) verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.boots >= math.MaxInt32 {
		return verdict{why: "engine boots at its maximum (RFC 3414: never in the time window)"}
	}
	key := seenKey{s.engineID, s.digest}
	if _, dup := g.seen[key]; dup {
		return verdict{why: "a copy of a trap already taken"}
	}
	var v verdict
	n, known := g.engines[s.engineID]
	if known {
		est := int64(n.time) + int64(now.Sub(n.at)/time.Second)
		switch {
		case s.boots < n.boots:
			v.why = "from an earlier boot of the sending engine than already seen"
		case s.boots == n.boots && int64(s.time) < est-int64(timeWindow/time.Second):
			v.why = "older than the 150 s time window of the sending engine's clock"
		}
		if v.why != "" {
			if !n.behind.add(s, now) {
				g.engines[s.engineID] = n
				return v
			}
			v.why, v.rebased = "", true
			v.was.boots, v.was.time = n.boots, uint32(min(max(est, 0), math.MaxUint32))
		}
	}
	if !known || v.rebased || s.boots > n.boots || s.time > n.time {
		if !known && len(g.engines) >= maxEngines {
			g.evictEngine()
		}
		n = engineNotion{boots: s.boots, time: s.time, at: now}
	}
	n.behind = behindRun{} // taken: a run of refused ones is broken
	g.engines[s.engineID] = n
	if len(g.seen) >= maxDigests {
		g.prune(now)
	}
	g.seen[key] = now
	g.dirty = true
	v.ok = true
	return v
}

// ReplayState is what the SNMPv3 replay guard knows, kept across restarts
// by a ReplayStore: per sender engine the latest boots/time and when it
// arrived, and the digests of the messages taken within the time window.
// Bounded: at most 1,024 engines and 8,192 digests.
type ReplayState struct {
	Engines []ReplayEngine
	Seen    []ReplaySeen
}

// ReplayEngine is one sender engine's latest boots/time and when it arrived.
type ReplayEngine struct {
	EngineID    []byte
	Boots, Time uint32
	At          time.Time
}

// ReplaySeen is the digest (msgAuthenticationParameters) of a message
// taken from engine EngineID at At.
type ReplaySeen struct {
	EngineID, Digest []byte
	At               time.Time
}

// ReplayStore keeps the replay guard's state across restarts (the daemon's
// store). Save replaces the whole state.
type ReplayStore interface {
	LoadReplay(ctx context.Context) (ReplayState, error)
	SaveReplay(ctx context.Context, st ReplayState) error
}

// state returns the guard's state (digests older than the window left
// out: the time check refuses their copies) when it changed since the last
// call, or ok false.
func (g *replayGuard) state(now time.Time) (st ReplayState, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.dirty {
		return st, false
	}
	g.dirty = false
	for id, n := range g.engines {
		st.Engines = append(st.Engines, ReplayEngine{EngineID: []byte(id), Boots: n.boots, Time: n.time, At: n.at})
	}
	for key, at := range g.seen {
		if now.Sub(at) > timeWindow {
			continue
		}
		st.Seen = append(st.Seen, ReplaySeen{EngineID: []byte(key.engine), Digest: []byte(key.digest), At: at})
	}
	return st, true
}

// touch marks the state changed (a save failed: try again).
func (g *replayGuard) touch() {
	g.mu.Lock()
	g.dirty = true
	g.mu.Unlock()
}

// load merges a saved state into the guard (at Open), within its bounds.
// The saved wall-clock times are not trusted: every engine's notion is
// re-based to now (its latest boots/time as if it had just arrived), and
// every digest is kept as if taken now (the window from now on covers what
// the re-based notion does not refuse by time).
func (g *replayGuard) load(st ReplayState, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range st.Engines {
		if len(g.engines) >= maxEngines {
			break
		}
		g.engines[string(e.EngineID)] = engineNotion{boots: e.Boots, time: e.Time, at: now}
	}
	for _, s := range st.Seen {
		if len(g.seen) >= maxDigests {
			break
		}
		g.seen[seenKey{string(s.EngineID), string(s.Digest)}] = now
	}
}

// prune drops digests older than the window (the time check refuses their
// copies from then on), then the oldest down to keepDigests.
func (g *replayGuard) prune(now time.Time) {
	for k, at := range g.seen {
		if now.Sub(at) > timeWindow {
			delete(g.seen, k)
		}
	}
	if len(g.seen) <= keepDigests {
		return
	}
	type taken struct {
		key seenKey
		at  time.Time
	}
	all := make([]taken, 0, len(g.seen))
	for k, at := range g.seen {
		all = append(all, taken{k, at})
	}
	slices.SortFunc(all, func(a, b taken) int { return a.at.Compare(b.at) })
	for _, t := range all[:len(all)-keepDigests] {
		delete(g.seen, t.key)
	}
}

// evictEngine forgets the engine heard from least recently.
func (g *replayGuard) evictEngine() {
	var oldest string
	var at time.Time
	for id, n := range g.engines {
		if oldest == "" || n.at.Before(at) {
			oldest, at = id, n.at
		}
	}
	delete(g.engines, oldest)
}
