package snmp

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/scanwarden/scanwarden"
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
