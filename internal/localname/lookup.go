package localname

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/ipv4"
)

const (
	// maxDatagram holds any UDP datagram (its length field has 16 bits):
	// an answer is read whole, however large.
	maxDatagram = 64 << 10
	// maxListed bounds the replies that answer nothing asked which
	// Result.Invalid lists; the rest are counted.
	maxListed = 8
	// maxAddrs bounds the addresses kept of one answer: a 64 KiB datagram
	// can carry ten thousand, and a check's evidence lists them.
	maxAddrs = 32
)

// lookup is one Lookup's sockets and state.
type lookup struct {
	name string
	res  *Result
	// nbID asks the broadcast, winsID the WINS servers, llID LLMNR: an
	// answer must bear the id of the query its socket sent.
	nbID, winsID, llID  uint16
	socks               []*sock
	maxPackets, maxJunk int // per socket
	listed, unlisted    int // replies that answer nothing asked
}

// sock is one socket, the query it sends and the destinations it asks.
// Each socket has its own budget of replies, so a flood on one (the
// broadcast's, whose port every host on the segment sees) takes nothing
// from another. A WINS server has a socket of its own, connected to it:
// the kernel passes it only datagrams from the server's address and port.
type sock struct {
	proto     Protocol
	label     string // "netbios broadcast", "netbios wins 10.0.0.5:137", "llmnr over IPv4"
	conn      *net.UDPConn
	openErr   error // conn is nil: why
	connected bool
	p4        *ipv4.PacketConn // for choosing the multicast interface
	id        uint16
	query     []byte
	targets   []dest
	// read by listen's loop only
	answers, junk int
	replied       bool // its question was answered (positive or negative)
	done          bool // read no more: closed, its budget spent or reading failed
}

type dest struct {
	addr  netip.AddrPort
	iface string
	via   string // "broadcast", "wins", "multicast", "unicast"
}

// reply is one datagram a socket read, already parsed (the reader's
// buffer is reused at once), or the error that ended the reading.
type reply struct {
	s       *sock
	from    netip.AddrPort
	nb      NBNSResponse
	ll      LLMNRResponse
	err     error // the parser's
	readErr error
}

// open makes the queries and the sockets that ask sc's destinations. A
// socket that cannot be opened is an error, but for IPv6 (a box without
// it asks over IPv4 only) and a WINS server's (it is asked no more).
func (l *lookup) open(sc Scope) error {
	if err := l.openNBNS(sc); err != nil {
		return err
	}
	return l.openLLMNR(sc)
}

// openNBNS makes the NetBIOS queries and their sockets — one for the
// broadcasts, one for each WINS server — unless sc has no NetBIOS
// destination or the name is too long.
func (l *lookup) openNBNS(sc Scope) error {
	if len(sc.Broadcast)+len(sc.WINS) == 0 {
		return nil
	}
	if len(strings.TrimSuffix(l.name, ".")) > NetBIOSNameLen {
		l.res.Skipped = append(l.res.Skipped, fmt.Sprintf("netbios: %s is longer than %d characters, the longest NetBIOS name", l.name, NetBIOSNameLen))
		return nil
	}
	if len(sc.Broadcast) > 0 {
		q, err := nbnsQuery(l.nbID, l.name, ServerSuffix, true)
		if err != nil {
			return err
		}
		s := &sock{proto: NetBIOS, label: "netbios broadcast", id: l.nbID, query: q}
		for _, a := range sc.Broadcast {
			s.targets = append(s.targets, dest{addr: a, via: "broadcast"})
		}
		if s.conn, err = net.ListenUDP("udp4", &net.UDPAddr{}); err != nil {
			return fmt.Errorf("netbios: open a UDP socket: %w", err)
		}
		l.socks = append(l.socks, s)
	}
	if len(sc.WINS) == 0 {
		return nil
	}
	q, err := nbnsQuery(l.winsID, l.name, ServerSuffix, false)
	if err != nil {
		return err
	}
	for i, a := range sc.WINS {
		if i == MaxScope {
			l.res.Skipped = append(l.res.Skipped, fmt.Sprintf("netbios wins: %d servers after the first %d", len(sc.WINS)-MaxScope, MaxScope))
			break
		}
		s := &sock{proto: NetBIOS, label: "netbios wins " + a.String(), id: l.winsID, query: q, connected: true,
			targets: []dest{{addr: a, via: "wins"}}}
		if s.conn, err = net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(a)); err != nil {
			s.conn, s.openErr, s.done = nil, fmt.Errorf("open a UDP socket to it: %w", err), true
		}
		l.socks = append(l.socks, s)
	}
	return nil
}

// openLLMNR makes the LLMNR query and a socket for each address family
// of sc's LLMNR targets.
func (l *lookup) openLLMNR(sc Scope) error {
	if len(sc.LLMNR) == 0 {
		return nil
	}
	q, err := llmnrQuery(l.llID, l.name, typeA)
	if err != nil {
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
				s4 = &sock{proto: LLMNR, label: "llmnr over IPv4", id: l.llID, query: q}
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
			s6 = &sock{proto: LLMNR, label: "llmnr over IPv6", id: l.llID, query: q}
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

// listen reads the sockets until ctx ends, every socket is done, or a
// short grace has passed after the first positive answer and no WINS
// server asked is still to answer (a PC with a WINS server asks it
// first, and an answer from the segment may be anyone's). It sends the
// queries, and sends them again at half of wait while nothing has
// answered.
func (l *lookup) listen(ctx context.Context, wait time.Duration) {
	deadline, _ := ctx.Deadline()
	// Leaving ends the readers too: one blocked handing on a packet the
	// loop will never read would otherwise hold the return until the
	// deadline (a flood that spends every budget early).
	ctx, stop := context.WithCancel(ctx)
	replies := make(chan reply, 16)
	var wg sync.WaitGroup
	for _, s := range l.socks {
		if s.conn == nil {
			continue
		}
		_ = s.conn.SetReadDeadline(deadline)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.read(ctx, replies)
		}()
	}
	defer func() {
		stop()
		l.close()
		wg.Wait()
		if l.unlisted > 0 {
			l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("%d more replies that answer nothing asked, not listed", l.unlisted))
		}
	}()

	l.send(false)
	resend := time.NewTimer(wait / 2)
	defer resend.Stop()
	var grace <-chan time.Time
	graced := false // the grace after the first positive answer has passed
	for !l.settled(graced) {
		select {
		case <-ctx.Done():
			return
		case <-grace:
			grace, graced = nil, true
		case <-resend.C:
			// asked again where nothing answered yet: also a WINS
			// server whose query was lost while the broadcast answered
			// (its answer is the one named)
			l.send(true)
		case r := <-replies:
			if l.take(r) && grace == nil && !graced {
				// other responders on the segment answer within
				// milliseconds: a short grace hears them too
				grace = time.After(wait / 8)
			}
		}
	}
}

// settled reports whether nothing more is worth waiting for: every WINS
// server asked has answered (or cannot), and every other socket is done
// or the grace has passed.
func (l *lookup) settled(graced bool) bool {
	open := false
	for _, s := range l.socks {
		switch {
		case s.done:
		case s.connected && s.replied:
			// a WINS server says once what it knows
		case s.connected:
			return false
		default:
			open = true
		}
	}
	return !open || graced
}

// send sends every query once; the first time, it lists what was asked.
// again: only on the sockets nothing has answered yet.
func (l *lookup) send(again bool) {
	first := len(l.res.Asked) == 0
	for _, s := range l.socks {
		for _, d := range s.targets {
			label := fmt.Sprintf("%s %s %s", s.proto, d.via, d.addr)
			if d.iface != "" {
				label += " on " + d.iface
			}
			if first {
				l.res.Asked = append(l.res.Asked, label)
			}
			var err error
			switch {
			case s.conn == nil:
				err = s.openErr
			case s.done, again && s.replied:
				continue
			default:
				err = s.write(d)
			}
			if err != nil && first {
				l.res.Failed = append(l.res.Failed, fmt.Sprintf("%s: %v", label, err))
			}
		}
	}
}

func (s *sock) write(d dest) error {
	if s.connected {
		_, err := s.conn.Write(s.query)
		return err
	}
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
	_, err := s.conn.WriteToUDP(s.query, ua)
	return err
}

// read parses the socket's datagrams and passes them on until the socket
// is closed or its deadline passes. Its buffer holds any UDP datagram and
// is read into again at once: a reply keeps only what was parsed.
// Another read error (a WINS server's port unreachable, which the kernel
// reports on a connected socket) is passed on, and ends the reading.
func (s *sock) read(ctx context.Context, out chan<- reply) {
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
		r := reply{s: s, readErr: err}
		if err == nil {
			r.from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
			if s.proto == NetBIOS {
				r.nb, r.err = ParseNBNSResponse(buf[:n])
			} else {
				r.ll, r.err = ParseLLMNRResponse(buf[:n])
			}
		}
		select {
		case out <- r:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// finish reads s no more.
func (s *sock) finish() {
	s.done = true
	if s.conn != nil {
		s.conn.Close()
	}
}

func (l *lookup) close() {
	for _, s := range l.socks {
		if s.conn != nil {
			s.conn.Close()
		}
	}
}
