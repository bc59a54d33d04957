package localname

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/ipv4"
)

// lookup is one Lookup's sockets and state.
type lookup struct {
	name string
	res  *Result
	// nbID asks the broadcast, winsID the WINS servers: an answer's id
	// tells which it answers (a host can be both).
	nbID, winsID, llID uint16
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

// open makes the queries and the sockets that ask sc's destinations. A
// socket that cannot be opened is an error, but for IPv6 (a box without
// it asks over IPv4 only).
func (l *lookup) open(sc Scope) error {
	if err := l.openNBNS(sc); err != nil {
		return err
	}
	return l.openLLMNR(sc)
}

// openNBNS makes the NetBIOS queries (broadcast and WINS) and their
// socket, unless sc has no NetBIOS destination or the name is too long.
func (l *lookup) openNBNS(sc Scope) error {
	if len(sc.Broadcast)+len(sc.WINS) == 0 {
		return nil
	}
	if len(strings.TrimSuffix(l.name, ".")) > NetBIOSNameLen {
		l.res.Skipped = append(l.res.Skipped, fmt.Sprintf("netbios: %s is longer than %d characters, the longest NetBIOS name", l.name, NetBIOSNameLen))
		return nil
	}
	var err error
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
	}
	if s.conn, err = net.ListenUDP("udp4", &net.UDPAddr{}); err != nil {
		return fmt.Errorf("netbios: open a UDP socket: %w", err)
	}
	l.socks = append(l.socks, s)
	return nil
}

// openLLMNR makes the LLMNR query and a socket for each address family
// of sc's LLMNR targets.
func (l *lookup) openLLMNR(sc Scope) error {
	if len(sc.LLMNR) == 0 {
		return nil
	}
	var err error
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

// listen reads the sockets until ctx ends, maxPackets replies have been
// read, or a short grace has passed after the first positive answer. It
// sends the queries, and sends them again at half of wait while nothing
// has answered.
func (l *lookup) listen(ctx context.Context, wait time.Duration, maxPackets int) {
	deadline, _ := ctx.Deadline()
	// Leaving ends the readers too: one blocked handing on a packet the
	// loop will never read would otherwise hold the return until the
	// deadline (a flood that hits maxPackets early).
	ctx, stop := context.WithCancel(ctx)
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
	defer func() { stop(); l.close(); wg.Wait() }()

	l.send()
	resend := time.NewTimer(wait / 2)
	defer resend.Stop()
	var grace <-chan time.Time
	for read := 0; read < maxPackets; {
		select {
		case <-ctx.Done():
			return
		case <-grace:
			return
		case <-resend.C:
			if !l.res.Found() {
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
	l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("stopped after reading %d replies", maxPackets))
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
