// Package localname asks the local network for a host name the way a
// Windows PC does when DNS has no answer: a NetBIOS name query (RFC 1002)
// broadcast to the subnet and sent to WINS servers, and an LLMNR query
// (RFC 4795) to the link-local multicast groups. The wire encoding is this
// package's own; the parsers take any bytes and return an error naming the
// field that is wrong.
//
// A lookup is bounded: each query is sent at most twice, answers are
// awaited for Wait at most, and at most MaxPackets replies are read.
// Nothing is sent anywhere but the Scope's destinations.
package localname

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
)

// Protocol names the protocol that answered.
type Protocol string

// The protocols asked.
const (
	NetBIOS Protocol = "netbios"
	LLMNR   Protocol = "llmnr"
)

// Defaults of an Asker.
const (
	DefaultWait       = 400 * time.Millisecond
	DefaultMaxPackets = 16
)

// Answer is one responder's positive answer.
type Answer struct {
	Protocol Protocol
	// Via is how it was asked: "broadcast", "wins", "multicast" or "unicast".
	Via   string
	From  netip.AddrPort // the responder
	Addrs []netip.Addr   // the name's addresses it gave
	// Note is what the answer flagged: a NetBIOS group name, an LLMNR
	// conflict or a tentative name ("" when nothing).
	Note string
}

func (a Answer) String() string {
	addrs := make([]string, len(a.Addrs))
	for i, x := range a.Addrs {
		addrs[i] = x.String()
	}
	s := fmt.Sprintf("%s %s from %s: %s", a.Protocol, a.Via, a.From, strings.Join(addrs, ", "))
	if a.Note != "" {
		s += " (" + a.Note + ")"
	}
	return s
}

// Result is what one lookup asked and heard.
type Result struct {
	Name string
	// NotAsked says why nothing was sent ("" when something was).
	NotAsked string
	// Asked lists each destination asked ("netbios broadcast
	// 10.77.0.255:137", "llmnr 224.0.0.252:5355 on eth0"), and Skipped
	// what was not asked and why (a name too long for NetBIOS).
	Asked   []string
	Skipped []string
	Answers []Answer
	// Negative are answers that the name is not there (a WINS server's
	// NAM_ERR), Invalid replies that could not be read or do not answer
	// this question, Failed sends the system refused.
	Negative []string
	Invalid  []string
	Failed   []string
	// Waited is how long the lookup took.
	Waited time.Duration
}

// Found reports whether any responder gave an address.
func (r Result) Found() bool { return len(r.Answers) > 0 }

// Addr is the first address answered (IPv4 first).
func (r Result) Addr() (netip.Addr, Answer, bool) {
	for _, want4 := range []bool{true, false} {
		for _, a := range r.Answers {
			for _, x := range a.Addrs {
				if x.Is4() == want4 {
					return x, a, true
				}
			}
		}
	}
	return netip.Addr{}, Answer{}, false
}

// Asker asks the destinations of one Scope.
type Asker struct {
	Scope Scope
	// Wait bounds the whole lookup (0: DefaultWait); each query is sent
	// again at half of it when nothing has answered yet.
	Wait time.Duration
	// MaxPackets bounds the replies read (0: DefaultMaxPackets).
	MaxPackets int
}

// Lookup asks for name. The error is only for a lookup that could not run
// (no socket); what was asked and heard is the Result.
func (a *Asker) Lookup(ctx context.Context, name string) (res Result, err error) {
	start := time.Now()
	res.Name = name
	defer func() { res.Waited = time.Since(start) }()
	if why := SingleLabel(name); why != "" {
		res.NotAsked = why
		return res, nil
	}
	if a.Scope.Empty() {
		res.NotAsked = "no network to ask: no interface with an IPv4 broadcast or multicast address, and no WINS server"
		return res, nil
	}
	wait, maxPackets := a.Wait, a.MaxPackets
	if wait <= 0 {
		wait = DefaultWait
	}
	if maxPackets <= 0 {
		maxPackets = DefaultMaxPackets
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()

	id := uint16(rand.Uint32())
	l := &lookup{name: name, res: &res, nbID: id, winsID: id + 1, llID: uint16(rand.Uint32())}
	if err = l.open(a.Scope); err != nil {
		l.close()
		return res, err
	}
	if len(l.socks) == 0 {
		res.NotAsked = strings.Join(res.Skipped, "; ")
		return res, nil
	}
	deadline, _ := ctx.Deadline()
	pkts := make(chan packet, maxPackets)
	var wg sync.WaitGroup
	for _, s := range l.socks {
		_ = s.conn.SetReadDeadline(deadline)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.read(ctx, pkts)
		}()
	}
	defer func() { l.close(); wg.Wait() }()

	l.send()
	resend := time.NewTimer(wait / 2)
	defer resend.Stop()
	var grace <-chan time.Time
	for read := 0; read < maxPackets; {
		select {
		case <-ctx.Done():
			return res, nil
		case <-grace:
			return res, nil
		case <-resend.C:
			if !res.Found() {
				l.send()
			}
		case p := <-pkts:
			read++
			if l.take(p) && grace == nil {
				// other responders on the segment answer within
				// milliseconds: a short grace hears them too
				grace = time.After(wait / 8)
			}
		}
	}
	res.Invalid = append(res.Invalid, fmt.Sprintf("stopped after reading %d replies", maxPackets))
	return res, nil
}

// lookup is one Lookup's sockets and state.
type lookup struct {
	name string
	res  *Result
	// nbID asks the broadcast, winsID the WINS servers: an answer's id
	// tells which it answers (a host can be both).
	nbID, winsID, llID uint16
	asksWINS           bool
	socks              []*sock
	nbQuery            []byte // broadcast form
	winsQuery          []byte
	llQuery            []byte
}

// sock is one socket and the destinations it asks.
type sock struct {
	proto   Protocol
	conn    *net.UDPConn
	p4      *ipv4.PacketConn // for choosing the multicast interface
	targets []dest
}

type dest struct {
	addr  netip.AddrPort
	iface string
	via   string // "broadcast", "wins", "multicast", "unicast"
}

type packet struct {
	s    *sock
	from netip.AddrPort
	b    []byte
}

func (l *lookup) open(sc Scope) error {
	var err error
	nb := len(sc.Broadcast)+len(sc.WINS) > 0
	if nb && len(strings.TrimSuffix(l.name, ".")) > NetBIOSNameLen {
		l.res.Skipped = append(l.res.Skipped, fmt.Sprintf("netbios: %s is longer than %d characters, the longest NetBIOS name", l.name, NetBIOSNameLen))
		nb = false
	}
	if nb {
		if l.nbQuery, err = nbnsQuery(l.nbID, l.name, ServerSuffix, true); err != nil {
			return err
		}
		if l.winsQuery, err = nbnsQuery(l.winsID, l.name, ServerSuffix, false); err != nil {
			return err
		}
		s := &sock{proto: NetBIOS}
		for _, a := range sc.Broadcast {
			s.targets = append(s.targets, dest{addr: a, via: "broadcast"})
		}
		for _, a := range sc.WINS {
			s.targets = append(s.targets, dest{addr: a, via: "wins"})
			l.asksWINS = true
		}
		if s.conn, err = net.ListenUDP("udp4", &net.UDPAddr{}); err != nil {
			return fmt.Errorf("netbios: open a UDP socket: %w", err)
		}
		l.socks = append(l.socks, s)
	}
	if len(sc.LLMNR) == 0 {
		return nil
	}
	if l.llQuery, err = llmnrQuery(l.llID, l.name, typeA); err != nil {
		return err
	}
	var s4, s6 *sock
	for _, t := range sc.LLMNR {
		via := "unicast"
		if t.Addr.Addr().IsMulticast() {
			via = "multicast"
		}
		d := dest{addr: netip.AddrPortFrom(t.Addr.Addr().Unmap(), t.Addr.Port()), iface: t.Interface, via: via}
		if d.addr.Addr().Is4() {
			if s4 == nil {
				s4 = &sock{proto: LLMNR}
				if s4.conn, err = net.ListenUDP("udp4", &net.UDPAddr{}); err != nil {
					return fmt.Errorf("llmnr: open a UDP socket: %w", err)
				}
				s4.p4 = ipv4.NewPacketConn(s4.conn)
				l.socks = append(l.socks, s4)
			}
			s4.targets = append(s4.targets, d)
			continue
		}
		if s6 == nil {
			s6 = &sock{proto: LLMNR}
			if s6.conn, err = net.ListenUDP("udp6", &net.UDPAddr{}); err != nil {
				// a box without IPv6 asks over IPv4 only
				l.res.Failed = append(l.res.Failed, fmt.Sprintf("llmnr over IPv6: open a UDP socket: %v", err))
				s6 = nil
				continue
			}
			l.socks = append(l.socks, s6)
		}
		s6.targets = append(s6.targets, d)
	}
	return nil
}

// send sends every query once; the first time, it lists what was asked.
func (l *lookup) send() {
	first := len(l.res.Asked) == 0
	for _, s := range l.socks {
		for _, d := range s.targets {
			q := l.llQuery
			if s.proto == NetBIOS {
				q = l.nbQuery
				if d.via == "wins" {
					q = l.winsQuery
				}
			}
			label := fmt.Sprintf("%s %s %s", s.proto, d.via, d.addr)
			if d.iface != "" {
				label += " on " + d.iface
			}
			if first {
				l.res.Asked = append(l.res.Asked, label)
			}
			if err := s.write(q, d); err != nil && first {
				l.res.Failed = append(l.res.Failed, fmt.Sprintf("%s: %v", label, err))
			}
		}
	}
}

func (s *sock) write(q []byte, d dest) error {
	ua := net.UDPAddrFromAddrPort(d.addr)
	if d.iface != "" && d.addr.Addr().IsMulticast() {
		if s.p4 != nil {
			ifi, err := net.InterfaceByName(d.iface)
			if err != nil {
				return fmt.Errorf("interface %s: %w", d.iface, err)
			}
			if err := s.p4.SetMulticastInterface(ifi); err != nil {
				return fmt.Errorf("choose interface %s for multicast: %w", d.iface, err)
			}
		} else {
			ua.Zone = d.iface
		}
	}
	_, err := s.conn.WriteToUDP(q, ua)
	return err
}

// read passes the socket's datagrams on until the socket is closed or
// its deadline passes.
func (s *sock) read(ctx context.Context, out chan<- packet) {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		p := packet{s: s, from: netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), b: append([]byte(nil), buf[:n]...)}
		select {
		case out <- p:
		case <-ctx.Done():
			return
		}
	}
}

func (l *lookup) close() {
	for _, s := range l.socks {
		if s.conn != nil {
			s.conn.Close()
		}
	}
}

// take records one reply; true when it is a positive answer.
func (l *lookup) take(p packet) bool {
	if p.s.proto == NetBIOS {
		return l.takeNBNS(p)
	}
	return l.takeLLMNR(p)
}

func (l *lookup) via(s *sock, from netip.AddrPort) string {
	for _, d := range s.targets {
		if d.addr == from && d.via != "broadcast" && d.via != "multicast" {
			return d.via
		}
	}
	for _, d := range s.targets {
		if d.via == "broadcast" || d.via == "multicast" {
			return d.via
		}
	}
	return "unicast"
}

func (l *lookup) takeNBNS(p packet) bool {
	r, err := ParseNBNSResponse(p.b)
	via := "broadcast"
	if err == nil || errors.Is(err, ErrNegative) {
		switch r.ID {
		case l.nbID:
		case l.winsID:
			if l.asksWINS {
				via = "wins"
				break
			}
			fallthrough
		default:
			l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("netbios from %s: transaction id 0x%04x answers another question (ours 0x%04x, 0x%04x)", p.from, r.ID, l.nbID, l.winsID))
			return false
		}
	}
	want := strings.ToUpper(strings.TrimSuffix(l.name, "."))
	switch {
	case errors.Is(err, ErrNegative):
		l.res.Negative = appendNew(l.res.Negative, fmt.Sprintf("netbios %s from %s: %v", via, p.from, err))
		return false
	case err != nil:
		l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("netbios from %s: %v", p.from, err))
		return false
	case r.Name != want || r.Suffix != ServerSuffix:
		l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("netbios from %s: answers for %s<%02X>, not %s<%02X>", p.from, r.Name, r.Suffix, want, ServerSuffix))
		return false
	}
	a := Answer{Protocol: NetBIOS, Via: via, From: p.from}
	for _, e := range r.Entries {
		a.Addrs = append(a.Addrs, e.Addr)
		if e.Group {
			a.Note = "a group name"
		}
	}
	l.addAnswer(a)
	return true
}

func (l *lookup) takeLLMNR(p packet) bool {
	r, err := ParseLLMNRResponse(p.b)
	if err == nil || errors.Is(err, ErrNegative) {
		if r.ID != l.llID {
			l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("llmnr from %s: transaction id 0x%04x answers another question (ours 0x%04x)", p.from, r.ID, l.llID))
			return false
		}
		if !strings.EqualFold(r.Name, strings.TrimSuffix(l.name, ".")) {
			l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("llmnr from %s: answers for %s, not %s", p.from, r.Name, l.name))
			return false
		}
	}
	switch {
	case errors.Is(err, ErrNegative):
		l.res.Negative = appendNew(l.res.Negative, fmt.Sprintf("llmnr %s from %s: %v", l.via(p.s, p.from), p.from, err))
		return false
	case err != nil:
		l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("llmnr from %s: %v", p.from, err))
		return false
	case len(r.Addrs) == 0:
		l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("llmnr from %s: a response without an address for %s", p.from, l.name))
		return false
	}
	a := Answer{Protocol: LLMNR, Via: l.via(p.s, p.from), From: p.from, Addrs: r.Addrs}
	var notes []string
	if r.Conflict {
		notes = append(notes, "conflict: more than one host claims the name")
	}
	if r.Tentative {
		notes = append(notes, "tentative")
	}
	if r.Truncated {
		notes = append(notes, "truncated")
	}
	a.Note = strings.Join(notes, ", ")
	l.addAnswer(a)
	return true
}

// Local asks the networks of this machine's own interfaces (read at each
// lookup, so an interface that came up later is asked) and the WINS
// servers given. In a test binary it asks nothing — a test must never
// broadcast on the machine's real networks; it gives an Asker a Scope of
// loopback addresses or of a network namespace it made.
type Local struct {
	WINS []netip.Addr
	Wait time.Duration
}

// Lookup asks for name on this machine's networks.
func (lo Local) Lookup(ctx context.Context, name string) (Result, error) {
	if testing.Testing() {
		return Result{Name: name, NotAsked: "not asked: a test binary never asks the machine's own networks (a test gives its own scope)"}, nil
	}
	ifs, err := Interfaces()
	if err != nil {
		return Result{Name: name}, err
	}
	a := Asker{Scope: ScopeOf(ifs).WithWINS(lo.WINS...), Wait: lo.Wait}
	return a.Lookup(ctx, name)
}

// addAnswer records a unless the same responder gave the same addresses
// already (a resent query, or nmbd answering a broadcast on two sockets).
func (l *lookup) addAnswer(a Answer) {
	for _, b := range l.res.Answers {
		if b.String() == a.String() {
			return
		}
	}
	l.res.Answers = append(l.res.Answers, a)
}

// appendNew appends s unless list has it (the same reply to a resent query).
func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
