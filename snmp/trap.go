package snmp

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/loglimit"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Trap is one decoded SNMP notification (v1 trap, v2c trap or inform).
type Trap struct {
	Peer      netip.AddrPort
	Version   Version
	Community scanwarden.Secret // checked against the allowed list, never logged
	User      string            // SNMPv3: the USM user that authenticated it
	Inform    bool
	TrapOID   string // snmpTrapOID.0, or enterprise.0.specific for v1
	UpTime    int64  // sysUpTime.0 / v1 timestamp
	Vars      []TrapVar
	packet    *gosnmp.SnmpPacket // for the inform response
	usm       usmStamp           // SNMPv3: the sender's engine, boots, time and digest
}

// TrapVar is one variable of a trap, rendered as data.
type TrapVar struct {
	OID   string `json:"oid"`
	Type  string `json:"type"`
	Value string `json:"value"` // CleanText for strings
	Int   *int64 `json:"int,omitempty"`
}

// Bounds on what one trap may carry.
const (
	maxTrapPacket = 8192
	maxTrapVars   = 128
)

// checkTrapSize refuses an empty payload and one over maxTrapPacket.
func checkTrapSize(b []byte, peer netip.AddrPort) error {
	if len(b) == 0 {
		return fmt.Errorf("trap from %s: empty packet", peer)
	}
	if len(b) > maxTrapPacket {
		return fmt.Errorf("trap from %s: packet of %d bytes exceeds %d", peer, len(b), maxTrapPacket)
	}
	return nil
}

// DecodeTrap parses one UDP payload from peer. Bad input (truncated, not
// BER, not a notification, too many variables, an SNMPv3 message we hold no
// user for) is an error naming the peer and what was wrong; it never
// panics.
func DecodeTrap(b []byte, peer netip.AddrPort) (tr Trap, err error) {
	if err := checkTrapSize(b, peer); err != nil {
		return Trap{}, err
	}
	defer func() {
		// gosnmp's decoder is third-party code fed with hostile bytes: a
		// panic in it becomes an error for this packet, never a crash.
		if r := recover(); r != nil {
			tr, err = Trap{}, fmt.Errorf("trap from %s: malformed packet (decoder: %v)", peer, r)
		}
	}()
	g := &gosnmp.GoSNMP{}
	pkt, err := g.UnmarshalTrap(append([]byte(nil), b...), false)
	if err != nil {
		return Trap{}, fmt.Errorf("trap from %s: malformed packet: %w", peer, err)
	}
	if pkt == nil {
		return Trap{}, fmt.Errorf("trap from %s: malformed packet", peer)
	}
	tr = Trap{Peer: peer, Community: scanwarden.NewSecret(pkt.Community), packet: pkt}
	switch pkt.Version {
	case gosnmp.Version1:
		tr.Version = V1
	case gosnmp.Version2c:
		tr.Version = V2c
	default:
		return Trap{}, fmt.Errorf("trap from %s: SNMP version %d not accepted (v1 and v2c only; v3 needs a user: DecodeTrapV3)", peer, pkt.Version)
	}
	return trapFromPacket(tr, pkt)
}

// ErrTrapNotAuthenticated is what DecodeTrapV3 wraps when no configured
// user authenticates (and, for an authPriv user, decrypts) the message:
// unknown user, wrong key, noAuth, or authNoPriv for an authPriv user.
var ErrTrapNotAuthenticated = errors.New("not authenticated by any configured SNMPv3 user")

// DecodeTrapV3 parses one SNMPv3 UDP payload from peer, taking it only
// when one of users (USM, authNoPriv or authPriv) authenticates it; an
// authPriv user also requires the message to be encrypted. Informs are not
// taken (answering one needs this listener to be an authoritative engine).
// Like DecodeTrap it never panics.
func DecodeTrapV3(b []byte, peer netip.AddrPort, users []V3Auth) (tr Trap, err error) {
	if err := checkTrapSize(b, peer); err != nil {
		return Trap{}, err
	}
	defer func() {
		if r := recover(); r != nil {
			tr, err = Trap{}, fmt.Errorf("trap from %s: %w (decoder: %v)", peer, ErrTrapNotAuthenticated, r)
		}
	}()
	for i := range users {
		u := &users[i]
		if u.AuthPass.IsZero() {
			continue // noAuth users are never configured; belt and braces
		}
		usm, flags, err := usmFor(u)
		if err != nil {
			continue
		}
		g := &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel, MsgFlags: flags, SecurityParameters: usm}
		pkt, err := g.UnmarshalTrap(append([]byte(nil), b...), true)
		if err != nil || pkt == nil || pkt.Version != gosnmp.Version3 || pkt.SecurityModel != gosnmp.UserSecurityModel {
			continue
		}
		if pkt.MsgFlags&gosnmp.AuthNoPriv == 0 || (flags == gosnmp.AuthPriv && pkt.MsgFlags&gosnmp.AuthPriv != gosnmp.AuthPriv) {
			continue
		}
		if pu, ok := pkt.SecurityParameters.(*gosnmp.UsmSecurityParameters); !ok || pu.UserName != u.User {
			continue
		}
		if pkt.PDUType == gosnmp.InformRequest {
			return Trap{}, fmt.Errorf("trap from %s: SNMPv3 informs are not taken (send traps)", peer)
		}
		pu := pkt.SecurityParameters.(*gosnmp.UsmSecurityParameters)
		return trapFromPacket(Trap{Peer: peer, Version: V3, User: u.User, usm: usmStamp{engineID: pu.AuthoritativeEngineID,
			boots: pu.AuthoritativeEngineBoots, time: pu.AuthoritativeEngineTime, digest: pu.AuthenticationParameters}}, pkt)
	}
	return Trap{}, fmt.Errorf("trap from %s: %w", peer, ErrTrapNotAuthenticated)
}

// trapFromPacket fills tr from a decoded notification.
func trapFromPacket(tr Trap, pkt *gosnmp.SnmpPacket) (Trap, error) {
	peer := tr.Peer
	switch pkt.PDUType {
	case gosnmp.Trap:
		if tr.Version != V1 {
			return Trap{}, fmt.Errorf("trap from %s: v1 trap PDU in a v%s message", peer, tr.Version)
		}
		ent := trimDot(pkt.Enterprise)
		if !validOID(ent) {
			return Trap{}, fmt.Errorf("trap from %s: enterprise %q is not an OID", peer, CleanText([]byte(ent)))
		}
		if pkt.GenericTrap == 6 {
			tr.TrapOID = ent + ".0." + strconv.Itoa(pkt.SpecificTrap)
		} else if pkt.GenericTrap >= 0 && pkt.GenericTrap < 6 {
			tr.TrapOID = "1.3.6.1.6.3.1.1.5." + strconv.Itoa(pkt.GenericTrap+1) // RFC 3584 3.1
		} else {
			return Trap{}, fmt.Errorf("trap from %s: generic-trap %d out of range", peer, pkt.GenericTrap)
		}
		tr.UpTime = int64(pkt.Timestamp)
	case gosnmp.SNMPv2Trap, gosnmp.InformRequest:
		tr.Inform = pkt.PDUType == gosnmp.InformRequest
	default:
		return Trap{}, fmt.Errorf("trap from %s: PDU type %s is not a notification", peer, pkt.PDUType)
	}
	if len(pkt.Variables) > maxTrapVars {
		return Trap{}, fmt.Errorf("trap from %s: %d variables exceed %d", peer, len(pkt.Variables), maxTrapVars)
	}
	for i, v := range pkt.Variables {
		name := trimDot(v.Name)
		if !validOID(name) {
			return Trap{}, fmt.Errorf("trap from %s: variable %d: name is not an OID", peer, i+1)
		}
		tv := TrapVar{OID: name, Type: v.Type.String(), Value: pduValueString(v)}
		if n, ok := pduInt(v); ok {
			tv.Int = &n
		}
		switch {
		case name == oidSysUpTime:
			if tv.Int != nil {
				tr.UpTime = *tv.Int
			}
		case name == oidSnmpTrapOID:
			s, ok := v.Value.(string)
			if !ok || v.Type != gosnmp.ObjectIdentifier || !validOID(s) {
				return Trap{}, fmt.Errorf("trap from %s: snmpTrapOID.0 is not an OID", peer)
			}
			tr.TrapOID = trimDot(s)
		}
		tr.Vars = append(tr.Vars, tv)
	}
	if tr.TrapOID == "" {
		return Trap{}, fmt.Errorf("trap from %s: no snmpTrapOID.0 variable", peer)
	}
	return tr, nil
}

// TrapEvents turns a trap into events: one per Kyocera code found by the
// rules in its text (or integer) variables; a trap where no rule matches
// (printerV2Alert about toner, an unknown enterprise trap) is kept raw as
// one event without a code.
func TrapEvents(tr Trap, device string, rules *Rules, now time.Time) []Event {
	raw := renderVars(tr.Vars)
	detail := map[string]string{"trap_oid": tr.TrapOID, "vars": raw, "peer": tr.Peer.String()}
	if tr.User != "" {
		detail["v3_user"] = tr.User
	}
	if tr.TrapOID == oidPrinterV2Alert {
		detail["kind"] = "printerV2Alert"
		for _, v := range tr.Vars {
			if hasPrefix(v.OID, oidPrtAlertCode) && v.Int != nil {
				detail["prt_alert_code"] = strconv.FormatInt(*v.Int, 10)
				if n := prtAlertCodeNames[*v.Int]; n != "" {
					detail["prt_alert_code_name"] = n
				}
			}
			if hasPrefix(v.OID, oidPrtAlertSeverity) && v.Int != nil {
				detail["severity"] = alertSeverityNames[*v.Int]
			}
		}
	}
	evs := newReportEvents(device, rules, now)
	for _, v := range tr.Vars {
		if v.OID == oidSnmpTrapOID || v.OID == oidSysUpTime {
			continue
		}
		// Integer variables only match value rules (prtAlertCode is a
		// Printer-MIB code, never a Kyocera send code).
		text := ""
		if v.Int == nil {
			text = v.Value
		}
		if ev, ok := evs.match(Observation{Source: SourceTrap, OID: v.OID, Text: text, Int: v.Int}); ok {
			ev.Key, ev.Detail = eventKey(device, SourceTrap, tr.TrapOID, strconv.FormatInt(tr.UpTime, 10), ev.Code), detail
			evs.add(ev)
		}
	}
	out := evs.out
	if len(out) == 0 {
		text := "trap " + tr.TrapOID
		if d := detail["prt_alert_code_name"]; d != "" {
			text = "printerV2Alert " + d
		}
		out = append(out, Event{
			Device: device, Time: now, Text: text, Source: SourceTrap,
			Key:    eventKey(device, SourceTrap, tr.TrapOID, strconv.FormatInt(tr.UpTime, 10), raw),
			Detail: detail,
		})
	}
	return out
}

func renderVars(vars []TrapVar) string {
	var sb strings.Builder
	for i, v := range vars {
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(v.OID + "=" + v.Value)
		if sb.Len() > 2*maxText {
			sb.WriteString(" …")
			break
		}
	}
	return sb.String()
}

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
	if rules == nil || rec == nil {
		return nil, errors.New("trap listener: rules and recorder are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.DeviceFor == nil {
		cfg.DeviceFor = func(a netip.Addr) string { return netip.AddrPortFrom(a, DefaultPort).String() }
	}
	log = log.With("component", "snmp.traps")
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

// isV3Message says whether b starts like an SNMPv3 message (SEQUENCE {
// INTEGER 3, …}).
func isV3Message(b []byte) bool {
	body, ok := berTLV(b, 0x30)
	if !ok {
		return false
	}
	v, ok := berTLV(body, 0x02)
	return ok && len(v) == 1 && v[0] == 3
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

// peekCommunity reads the community of an SNMPv1/v2c message (SEQUENCE {
// INTEGER version 0|1, OCTET STRING community, …}) without decoding the
// rest; ok is false for anything else.
func peekCommunity(b []byte) (string, bool) {
	body, ok := berTLV(b, 0x30)
	if !ok {
		return "", false
	}
	v, ok := berTLV(body, 0x02)
	if !ok || len(v) != 1 || v[0] > 1 {
		return "", false
	}
	c, ok := berTLV(body[berHeaderLen(body):][len(v):], 0x04)
	return string(c), ok
}

// berTLV returns the value of the BER element at the start of b when its
// tag is tag and its (definite) length fits in b.
func berTLV(b []byte, tag byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != tag {
		return nil, false
	}
	h := berHeaderLen(b)
	if h == 0 {
		return nil, false
	}
	n := 0
	if b[1] < 0x80 {
		n = int(b[1])
	} else {
		for _, x := range b[2:h] {
			n = n<<8 | int(x)
		}
	}
	if n < 0 || n > len(b)-h {
		return nil, false
	}
	return b[h : h+n], true
}

// berHeaderLen is the length of the tag and length octets at the start of
// b (long form up to 3 length octets), or 0 when they do not fit.
func berHeaderLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	if b[1] < 0x80 {
		return 2
	}
	k := int(b[1] & 0x7f)
	if k == 0 || k > 3 || len(b) < 2+k {
		return 0
	}
	return 2 + k
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
