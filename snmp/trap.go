package snmp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"github.com/scanwarden/scanwarden"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Trap is one decoded SNMP notification (v1 trap, v2c trap or inform).
type Trap struct {
	Peer      netip.AddrPort
	Version   Version
	Community scanwarden.Secret // checked against the allowed list, never logged
	Inform    bool
	TrapOID   string // snmpTrapOID.0, or enterprise.0.specific for v1
	UpTime    int64  // sysUpTime.0 / v1 timestamp
	Vars      []TrapVar
	packet    *gosnmp.SnmpPacket // for the inform response
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

// DecodeTrap parses one UDP payload from peer. Bad input (truncated, not
// BER, not a notification, too many variables, an SNMPv3 message we hold no
// user for) is an error naming the peer and what was wrong; it never
// panics.
func DecodeTrap(b []byte, peer netip.AddrPort) (tr Trap, err error) {
	if len(b) == 0 {
		return Trap{}, fmt.Errorf("trap from %s: empty packet", peer)
	}
	if len(b) > maxTrapPacket {
		return Trap{}, fmt.Errorf("trap from %s: packet of %d bytes exceeds %d", peer, len(b), maxTrapPacket)
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
		return Trap{}, fmt.Errorf("trap from %s: SNMP version %d not accepted (v1 and v2c only)", peer, pkt.Version)
	}
	switch pkt.PDUType {
	case gosnmp.Trap:
		if tr.Version != V1 {
			return Trap{}, fmt.Errorf("trap from %s: v1 trap PDU in a v2c message", peer)
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
	var out []Event
	seen := map[string]bool{}
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
		m, ok := rules.Match(Observation{Source: SourceTrap, OID: v.OID, Text: text, Int: v.Int})
		if !ok || m.Ignore || seen[m.Code] {
			continue
		}
		seen[m.Code] = true
		out = append(out, Event{
			Device: device, Time: now, Code: m.Code, Text: text, Source: SourceTrap, Rule: m.Rule,
			Destination: findDestination(text),
			Key:         eventKey(device, SourceTrap, tr.TrapOID, strconv.FormatInt(tr.UpTime, 10), m.Code),
			Detail:      detail,
		})
	}
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

// TrapListenerConfig configures the trap listener.
type TrapListenerConfig struct {
	Addr        string              `json:"addr"`        // e.g. ":162" or "127.0.0.1:1162"
	Communities []scanwarden.Secret `json:"communities"` // accepted communities; empty accepts any
	// DeviceFor maps a sender address to the device key used in events
	// (default: the sender's IP with port 161, matching Target.Addr).
	DeviceFor func(netip.Addr) string `json:"-"`
}

// TrapStats are the listener's counters.
type TrapStats struct {
	Packets   int64 `json:"packets"`
	Malformed int64 `json:"malformed"` // not a notification we can decode
	Refused   int64 `json:"refused"`   // a community not accepted
	Events    int64 `json:"events"`
	NewEvents int64 `json:"new_events"`
}

// TrapListener receives traps on UDP and records their events.
type TrapListener struct {
	cfg   TrapListenerConfig
	rules *Rules
	sink  Sink
	log   *slog.Logger
	now   func() time.Time

	conn   *net.UDPConn
	cancel context.CancelFunc
	wg     sync.WaitGroup

	packets, malformed, refused, events, fresh atomic.Int64
}

// NewTrapListener returns a listener; Open binds it.
func NewTrapListener(cfg TrapListenerConfig, rules *Rules, sink Sink, log *slog.Logger) (*TrapListener, error) {
	if cfg.Addr == "" {
		return nil, errors.New("trap listener: addr is empty")
	}
	if rules == nil || sink == nil {
		return nil, errors.New("trap listener: rules and sink are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.DeviceFor == nil {
		cfg.DeviceFor = func(a netip.Addr) string { return netip.AddrPortFrom(a, DefaultPort).String() }
	}
	return &TrapListener{cfg: cfg, rules: rules, sink: sink, log: log.With("component", "snmp.traps"), now: time.Now}, nil
}

// Open binds the UDP socket and starts receiving.
func (l *TrapListener) Open(ctx context.Context) error {
	if l.cancel != nil {
		return errors.New("trap listener already open")
	}
	var lc net.ListenConfig
	pc, err := lc.ListenPacket(ctx, "udp", l.cfg.Addr)
	if err != nil {
		return fmt.Errorf("trap listener: listen %s: %w", l.cfg.Addr, err)
	}
	l.conn = pc.(*net.UDPConn)
	ctx, l.cancel = context.WithCancel(ctx)
	l.wg.Add(2)
	go func() {
		defer l.wg.Done()
		<-ctx.Done()
		l.conn.Close()
	}()
	go func() {
		defer l.wg.Done()
		l.serve(ctx)
	}()
	return nil
}

// Addr is the bound address (useful with port 0).
func (l *TrapListener) Addr() net.Addr { return l.conn.LocalAddr() }

// Stats returns the counters.
func (l *TrapListener) Stats() TrapStats {
	return TrapStats{Packets: l.packets.Load(), Malformed: l.malformed.Load(), Refused: l.refused.Load(),
		Events: l.events.Load(), NewEvents: l.fresh.Load()}
}

// Close stops the listener.
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
			l.log.Warn("read", "err", err)
			continue
		}
		l.packets.Add(1)
		l.handle(ctx, buf[:n], peer)
	}
}

// handle processes one datagram; it is what the fuzz target drives.
func (l *TrapListener) handle(ctx context.Context, b []byte, peer netip.AddrPort) {
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	tr, err := DecodeTrap(b, peer)
	if err != nil {
		l.malformed.Add(1)
		l.log.Warn("dropped trap", "peer", peer.String(), "err", err)
		return
	}
	if !l.communityOK(tr.Community) {
		l.refused.Add(1)
		l.log.Warn("trap with a community not accepted", "peer", peer.String())
		return
	}
	if tr.Inform {
		l.respond(tr, peer)
	}
	device := l.cfg.DeviceFor(peer.Addr())
	for _, ev := range TrapEvents(tr, device, l.rules, l.now()) {
		l.events.Add(1)
		fresh, err := l.sink.RecordEvent(ctx, ev)
		if err != nil {
			l.log.Error("record trap event", "device", device, "err", err)
			continue
		}
		if fresh {
			l.fresh.Add(1)
		}
	}
}

func (l *TrapListener) communityOK(c scanwarden.Secret) bool {
	if len(l.cfg.Communities) == 0 {
		return true
	}
	for _, ok := range l.cfg.Communities {
		if subtle.ConstantTimeCompare([]byte(ok.Reveal()), []byte(c.Reveal())) == 1 {
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
		l.log.Warn("inform response", "peer", peer.String(), "err", err)
		return
	}
	if _, err := l.conn.WriteToUDPAddrPort(b, peer); err != nil {
		l.log.Warn("inform response", "peer", peer.String(), "err", err)
	}
}
