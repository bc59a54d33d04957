package snmp

import (
	"context"
	"math"
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
// as it comes.

// timeWindow is RFC 3414's 150 s.
const timeWindow = 150 * time.Second

// Bounds of the guard's memory. Only authenticated messages reach it.
const (
	maxEngines = 1024
	maxDigests = 8192
)

// usmStamp is what a v3 trap says about its sender's engine.
type usmStamp struct {
	engineID    string
	boots, time uint32
	digest      string // msgAuthenticationParameters
}

type engineNotion struct {
	boots, time uint32
	at          time.Time // when the latest boots/time arrived
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
// it is, it updates the engine's notion. why says what is wrong otherwise.
func (g *replayGuard) check(s usmStamp, now time.Time) (ok bool, why string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.boots >= math.MaxInt32 {
		return false, "engine boots at its maximum (RFC 3414: never in the time window)"
	}
	key := seenKey{s.engineID, s.digest}
	if _, dup := g.seen[key]; dup {
		return false, "a copy of a trap already taken"
	}
	n, known := g.engines[s.engineID]
	if known {
		if s.boots < n.boots {
			return false, "from an earlier boot of the sending engine than already seen"
		}
		if s.boots == n.boots {
			est := int64(n.time) + int64(now.Sub(n.at)/time.Second)
			if int64(s.time) < est-int64(timeWindow/time.Second) {
				return false, "older than the 150 s time window of the sending engine's clock"
			}
		}
	}
	if !known || s.boots > n.boots || s.time > n.time {
		if !known && len(g.engines) >= maxEngines {
			g.evictEngine()
		}
		g.engines[s.engineID] = engineNotion{boots: s.boots, time: s.time, at: now}
	}
	if len(g.seen) >= maxDigests {
		g.prune(now)
	}
	g.seen[key] = now
	g.dirty = true
	return true, ""
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
func (g *replayGuard) load(st ReplayState, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range st.Engines {
		if len(g.engines) >= maxEngines {
			break
		}
		g.engines[string(e.EngineID)] = engineNotion{boots: e.Boots, time: e.Time, at: e.At}
	}
	for _, s := range st.Seen {
		if len(g.seen) >= maxDigests {
			break
		}
		if now.Sub(s.At) <= timeWindow {
			g.seen[seenKey{string(s.EngineID), string(s.Digest)}] = s.At
		}
	}
}

// prune drops digests older than the window (the time check refuses their
// copies from then on), then any while still full.
func (g *replayGuard) prune(now time.Time) {
	for k, at := range g.seen {
		if now.Sub(at) > timeWindow {
			delete(g.seen, k)
		}
	}
	for k := range g.seen {
		if len(g.seen) < maxDigests {
			break
		}
		delete(g.seen, k)
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
