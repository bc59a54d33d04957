package snmp

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/loglimit"
)

// TrapListenerConfig configures the trap listener. Zero means zero:
// DefaultTrapListenerConfig gives the usual values.
type TrapListenerConfig struct {
	Addr        string              `json:"addr"`        // e.g. ":162" or "127.0.0.1:1162"
	Communities []scanwarden.Secret `json:"communities"` // accepted v1/v2c communities
	// Users are the SNMPv3 USM users whose traps are taken (authNoPriv, or
	// authPriv when PrivPass is set; never noAuth). At least one community
	// or user is required.
	Users []V3Auth `json:"v3_users"`
	// Allow are networks whose traps are taken besides AllowFrom's
	// addresses; a trap from an allowed address that is no watched device is
	// stored as unverified.
	Allow []netip.Prefix `json:"allow"`
	// AllowFrom says whether an address is a watched device (the Watcher
	// sets it); its traps are verified. nil: no device.
	AllowFrom func(netip.Addr) bool `json:"-"`
	// DeviceFor maps a sender address to the device key used in events
	// (nil: the sender's IP with port 161, matching Target.Addr).
	DeviceFor func(netip.Addr) string `json:"-"`
	// QueueSize events wait for the store at most; more are dropped and
	// counted. BatchSize events are stored in one write at most.
	QueueSize int `json:"queue_size"`
	BatchSize int `json:"batch_size"`
	// Replay keeps the SNMPv3 replay guard's state across restarts (read at
	// Open, saved at most a second after a change and at Close); nil: in
	// memory only.
	Replay ReplayStore `json:"-"`
	// LogEvery is the least time between two log lines about junk of one
	// kind (malformed, refused, not allowed, dropped); the lines carry how
	// many were not logged.
	LogEvery time.Duration `json:"log_every"`
}

// DefaultTrapListenerConfig returns the usual values for a listener on addr
// that accepts communities.
func DefaultTrapListenerConfig(addr string, communities ...scanwarden.Secret) TrapListenerConfig {
	return TrapListenerConfig{Addr: addr, Communities: communities, QueueSize: 8192, BatchSize: 256, LogEvery: 10 * time.Second}
}

// Validate names the first bad field.
func (c TrapListenerConfig) Validate() error {
	switch {
	case c.Addr == "":
		return errors.New("trap listener: addr is empty")
	case len(c.Communities) == 0 && len(c.Users) == 0:
		return errors.New("trap listener: communities or v3_users: at least one is required (traps with any community are not taken)")
	case c.QueueSize < 1:
		return fmt.Errorf("trap listener: queue_size %d: at least 1", c.QueueSize)
	case c.BatchSize < 1:
		return fmt.Errorf("trap listener: batch_size %d: at least 1", c.BatchSize)
	case c.LogEvery < 0:
		return fmt.Errorf("trap listener: log_every %s is negative", c.LogEvery)
	}
	for i, cm := range c.Communities {
		if cm.IsZero() {
			return fmt.Errorf("trap listener: communities[%d] is empty", i)
		}
	}
	for i := range c.Users {
		if err := c.Users[i].Validate(); err != nil {
			return fmt.Errorf("trap listener: v3_users[%d]: %w", i, err)
		}
	}
	return nil
}

// TrapStats are the listener's counters.
type TrapStats struct {
	Packets    int64 `json:"packets"`
	NotAllowed int64 `json:"not_allowed"` // from an address outside the allowlist: not decoded
	Malformed  int64 `json:"malformed"`   // not a notification we can decode
	Refused    int64 `json:"refused"`     // a community not accepted, a v3 message no user authenticates, or a replayed one
	Replayed   int64 `json:"replayed"`    // of Refused: authentic v3 traps out of their time window, or copies
	Rebased    int64 `json:"rebased"`     // v3 engines whose replay notion was re-based (restarted without incrementing their boots)
	Dropped    int64 `json:"dropped"`     // events lost to a full queue
	Events     int64 `json:"events"`
	NewEvents  int64 `json:"new_events"`
	Unverified int64 `json:"unverified"` // events from an allowed network that is no watched device
}

// TrapListener receives traps on UDP and records their events. One
// goroutine reads and decodes; a bounded queue carries the events to a
// second one that records them in batches, so a flood costs
// drops (counted), never memory, and a slow store never stalls the socket.
type TrapListener struct {
	cfg   TrapListenerConfig
	rules *Rules
	rec   *Recorder
	log   *slog.Logger
	junk  *loglimit.Limiter
	now   func() time.Time

	conn   *net.UDPConn
	queue  chan Event
	cancel context.CancelFunc
	wg     sync.WaitGroup

	replay *replayGuard

	packets, notAllowed, malformed, refused, replayed, rebased, dropped, events, fresh, unverified atomic.Int64
}

// NewTrapListener returns a listener; Open binds it.
func NewTrapListener(cfg TrapListenerConfig, rules *Rules, rec *Recorder, log *slog.Logger) (*TrapListener, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log, err := partLog("trap listener", "snmp.traps", rules, rec, log)
	if err != nil {
		return nil, err
	}
	if cfg.DeviceFor == nil {
		cfg.DeviceFor = func(a netip.Addr) string { return netip.AddrPortFrom(a, DefaultPort).String() }
	}
	return &TrapListener{cfg: cfg, rules: rules, rec: rec, log: log, junk: loglimit.New(log, cfg.LogEvery),
		now: time.Now, queue: make(chan Event, cfg.QueueSize), replay: newReplayGuard()}, nil
}

// trapReadBuffer is the socket receive buffer asked for: a burst of traps
// waits there while the reader decodes.
const trapReadBuffer = 16 << 20

// Open binds the UDP socket and starts receiving.
func (l *TrapListener) Open(ctx context.Context) error {
	if l.cancel != nil {
		return errors.New("trap listener already open")
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		c.Control(func(fd uintptr) { setReadBuffer(int(fd), trapReadBuffer) })
		return nil
	}}
	pc, err := lc.ListenPacket(ctx, "udp", l.cfg.Addr)
	if err != nil {
		return fmt.Errorf("trap listener: listen %s: %w", l.cfg.Addr, err)
	}
	l.conn = pc.(*net.UDPConn)
	if l.cfg.Replay != nil {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := l.cfg.Replay.LoadReplay(lctx)
		cancel()
		if err != nil {
			l.log.Error("SNMPv3 replay guard: saved state not read; a trap captured before this start may be taken once", "err", err)
		}
		l.replay.load(st, l.now())
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.wg.Add(4)
	go func() {
		defer l.wg.Done()
		<-ctx.Done()
		l.conn.Close()
	}()
	readerDone := make(chan struct{})
	go func() {
		defer l.wg.Done()
		defer close(readerDone)
		l.serve(ctx)
	}()
	go func() {
		defer l.wg.Done()
		l.write(ctx, readerDone)
	}()
	go func() {
		defer l.wg.Done()
		l.saveReplay(ctx, readerDone)
	}()
	return nil
}

// replaySave is how often the replay guard's state is saved when it changed.
const replaySave = time.Second

// saveReplay saves the replay guard's state when it changed, every
// replaySave, and once more after the reader stopped.
func (l *TrapListener) saveReplay(ctx context.Context, readerDone <-chan struct{}) {
	if l.cfg.Replay == nil {
		return
	}
	t := time.NewTicker(replaySave)
	defer t.Stop()
	save := func(ctx context.Context) {
		st, changed := l.replay.state(l.now())
		if !changed {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := l.cfg.Replay.SaveReplay(ctx, st); err != nil {
			l.replay.touch()
			l.junk.Warn("replay-save", "SNMPv3 replay guard: state not saved", "err", err)
		}
	}
	for {
		select {
		case <-t.C:
			save(ctx)
		case <-readerDone:
			save(context.WithoutCancel(ctx))
			return
		}
	}
}

// Addr is the bound address (useful with port 0).
func (l *TrapListener) Addr() net.Addr { return l.conn.LocalAddr() }

// Stats returns the counters.
func (l *TrapListener) Stats() TrapStats {
	return TrapStats{Packets: l.packets.Load(), NotAllowed: l.notAllowed.Load(), Malformed: l.malformed.Load(),
		Refused: l.refused.Load(), Replayed: l.replayed.Load(), Rebased: l.rebased.Load(), Dropped: l.dropped.Load(), Events: l.events.Load(), NewEvents: l.fresh.Load(),
		Unverified: l.unverified.Load()}
}

// Close stops the listener; events still queued get one second to reach
// the store.
func (l *TrapListener) Close() error {
	if l.cancel == nil {
		return nil
	}
	l.cancel()
	l.wg.Wait()
	l.cancel = nil
	return nil
}

func (l *TrapListener) serve(ctx context.Context) {
	buf := make([]byte, maxTrapPacket+1)
	for {
		n, peer, err := l.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			l.junk.Warn("read", "read", "err", err)
			continue
		}
		l.packets.Add(1)
		l.handle(ctx, buf[:n], peer)
	}
}

// allowed says whether traps from a are taken and whether a is a watched
// device (verified).
func (l *TrapListener) allowed(a netip.Addr) (ok, device bool) {
	if l.cfg.AllowFrom != nil && l.cfg.AllowFrom(a) {
		return true, true
	}
	for _, p := range l.cfg.Allow {
		if p.Contains(a) {
			return true, false
		}
	}
	return false, false
}

// handle processes one datagram; it is what the fuzz target drives. The
// sender's address is checked before anything is decoded.
func (l *TrapListener) handle(_ context.Context, b []byte, peer netip.AddrPort) {
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	ok, device := l.allowed(peer.Addr())
	if !ok {
		l.notAllowed.Add(1)
		l.junk.Warn("not allowed", "trap from an address not allowed", "peer", peer.String())
		return
	}
	if isV3Message(b) {
		l.handleV3(b, peer, device)
		return
	}
	// The community is read off the message's first bytes and checked
	// before the full decode: a flood of junk or guesses costs next to
	// nothing.
	comm, ok := peekCommunity(b)
	if !ok {
		l.malformed.Add(1)
		l.junk.Warn("malformed", "dropped trap", "peer", peer.String(), "err", "not an SNMPv1/v2c message")
		return
	}
	if !l.communityOK(comm) {
		l.refused.Add(1)
		l.junk.Warn("community", "trap with a community not accepted", "peer", peer.String())
		return
	}
	tr, err := DecodeTrap(b, peer)
	if err != nil {
		l.malformed.Add(1)
		l.junk.Warn("malformed", "dropped trap", "peer", peer.String(), "err", err)
		return
	}
	if !l.communityOK(tr.Community.Reveal()) {
		l.refused.Add(1)
		l.junk.Warn("community", "trap with a community not accepted", "peer", peer.String())
		return
	}
	if tr.Inform {
		l.respond(tr, peer)
	}
	l.enqueue(tr, peer, device)
}

// handleV3 takes an SNMPv3 message: it is stored only when a configured
// user authenticates it; anything else is counted refused, like a wrong
// community.
func (l *TrapListener) handleV3(b []byte, peer netip.AddrPort, device bool) {
	if len(l.cfg.Users) == 0 {
		l.refused.Add(1)
		l.junk.Warn("community", "SNMPv3 trap but no v3 user is configured", "peer", peer.String())
		return
	}
	tr, err := DecodeTrapV3(b, peer, l.cfg.Users)
	if errors.Is(err, ErrTrapNotAuthenticated) {
		l.refused.Add(1)
		l.junk.Warn("community", "SNMPv3 trap not authenticated by a configured user", "peer", peer.String())
		return
	}
	if err != nil {
		l.malformed.Add(1)
		l.junk.Warn("malformed", "dropped trap", "peer", peer.String(), "err", err)
		return
	}
	engine := hex.EncodeToString([]byte(tr.usm.engineID))
	v := l.replay.check(tr.usm, l.now())
	if !v.ok {
		l.refused.Add(1)
		l.replayed.Add(1)
		l.junk.Warn("replay", "SNMPv3 trap refused: "+v.why, "peer", peer.String(), "user", tr.User, "engine", engine,
			"boots", tr.usm.boots, "time", tr.usm.time)
		return
	}
	if v.rebased {
		l.rebased.Add(1)
		l.log.Error("SNMPv3 replay guard: engine "+engine+" sent "+strconv.Itoa(rebaseAfter)+
			" traps in a row behind what it said before, its clock advancing with ours: it restarted without incrementing snmpEngineBoots (or its boots/time were reset); its notion is re-based and its traps are taken again",
			"engine", engine, "peer", peer.String(), "user", tr.User, "boots", tr.usm.boots, "time", tr.usm.time,
			"was_boots", v.was.boots, "was_time", v.was.time)
	}
	l.enqueue(tr, peer, device)
}

// enqueue hands a trap's events to the writer.
func (l *TrapListener) enqueue(tr Trap, peer netip.AddrPort, device bool) {
	for _, ev := range TrapEvents(tr, l.cfg.DeviceFor(peer.Addr()), l.rules, l.now()) {
		ev.Unverified = !device
		select {
		case l.queue <- ev:
		default:
			l.dropped.Add(1)
			l.junk.Warn("dropped", "trap queue full: event dropped", "peer", peer.String())
		}
	}
}

// write takes events off the queue and records them in batches: it blocks
// for the first event, then takes whatever else is waiting, up to
// BatchSize. When the reader has stopped it flushes the rest with one
// second to spare.
func (l *TrapListener) write(ctx context.Context, readerDone <-chan struct{}) {
	batch := make([]Event, 0, l.cfg.BatchSize)
	for {
		select {
		case ev := <-l.queue:
			batch = append(batch[:0], ev)
		case <-readerDone:
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			for {
				batch = l.fill(batch[:0])
				if len(batch) == 0 {
					return
				}
				if !l.record(fctx, batch) {
					return
				}
			}
		}
		batch = l.fill(batch)
		l.record(ctx, batch)
	}
}

// fill adds waiting events to batch, up to BatchSize, without blocking.
func (l *TrapListener) fill(batch []Event) []Event {
	for len(batch) < l.cfg.BatchSize {
		select {
		case ev := <-l.queue:
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

func (l *TrapListener) record(ctx context.Context, batch []Event) bool {
	fresh, err := l.rec.Events(ctx, batch)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Error("record trap events", "events", len(batch), "err", err)
		}
		return false
	}
	l.events.Add(int64(len(batch)))
	for i, f := range fresh {
		if batch[i].Unverified {
			l.unverified.Add(1)
		}
		if f {
			l.fresh.Add(1)
		}
	}
	return true
}

func (l *TrapListener) communityOK(c string) bool {
	for _, ok := range l.cfg.Communities {
		if subtle.ConstantTimeCompare([]byte(ok.Reveal()), []byte(c)) == 1 {
			return true
		}
	}
	return false
}

// respond acknowledges an inform with the same variables.
func (l *TrapListener) respond(tr Trap, peer netip.AddrPort) {
	p := tr.packet
	p.PDUType = gosnmp.GetResponse
	p.Error, p.ErrorIndex = gosnmp.NoError, 0
	b, err := p.MarshalMsg()
	if err != nil {
		l.junk.Warn("inform", "inform response", "peer", peer.String(), "err", err)
		return
	}
	if _, err := l.conn.WriteToUDPAddrPort(b, peer); err != nil {
		l.junk.Warn("inform", "inform response", "peer", peer.String(), "err", err)
	}
}
