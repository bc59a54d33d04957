// Package localname asks the local network for a host name the way a
// Windows PC does when DNS has no answer: a NetBIOS name query (RFC 1002)
// broadcast to the subnet and sent to WINS servers, and an LLMNR query
// (RFC 4795) to the link-local multicast groups. The wire encoding is this
// package's own; the parsers take any bytes and return an error naming the
// field that is wrong.
//
// A lookup is bounded: each query is sent at most twice, answers are
// awaited for Wait at most, and each socket reads at most MaxPackets
// answers and MaxJunk replies that answer nothing asked; a WINS server
// has a socket of its own, so a flood from the segment cannot spend what
// its answer needs. Any UDP datagram is read whole (up to 64 KiB).
// Nothing is sent anywhere but the Scope's destinations.
package localname

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"
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
	DefaultMaxJunk    = 64
)

// Answer is one responder's positive answer.
type Answer struct {
	Protocol Protocol
	// Via is how it was asked: "broadcast", "wins", "multicast" or "unicast".
	Via   string
	From  netip.AddrPort // the responder
	Addrs []netip.Addr   // the name's addresses it gave
	// Note is what the answer flagged: a NetBIOS group name, an LLMNR
	// conflict or a tentative name, more addresses than were kept ("" when
	// nothing).
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

// Addr is the address to name: a WINS server's answer first — a Windows
// PC with a WINS server asks it before it broadcasts (h-node), and any
// host on the segment can answer a broadcast or multicast — then the
// first answered; IPv4 first.
func (r Result) Addr() (netip.Addr, Answer, bool) {
	for _, wins := range []bool{true, false} {
		for _, want4 := range []bool{true, false} {
			for _, a := range r.Answers {
				if (a.Via == "wins") != wins {
					continue
				}
				for _, x := range a.Addrs {
					if x.Is4() == want4 {
						return x, a, true
					}
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
	// MaxPackets bounds the answers read from each socket: replies to
	// this lookup's question, positive or negative (0: DefaultMaxPackets).
	MaxPackets int
	// MaxJunk bounds the other replies read from each socket — bytes that
	// are no reply, another question's id, another name, a sender that
	// was not asked (0: DefaultMaxJunk). A socket that has read either is
	// read no more; the others are.
	MaxJunk int
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
	wait := a.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()

	// Three ids drawn apart: the broadcast's, which every host on the
	// segment sees, must not tell the WINS query's.
	nbID, winsID := uint16(rand.Uint32()), uint16(rand.Uint32())
	for winsID == nbID {
		winsID = uint16(rand.Uint32())
	}
	l := &lookup{name: name, res: &res, nbID: nbID, winsID: winsID, llID: uint16(rand.Uint32()),
		maxPackets: cmp.Or(max(a.MaxPackets, 0), DefaultMaxPackets), maxJunk: cmp.Or(max(a.MaxJunk, 0), DefaultMaxJunk)}
	if err = l.open(a.Scope); err != nil {
		l.close()
		return res, err
	}
	if len(l.socks) == 0 {
		res.NotAsked = strings.Join(res.Skipped, "; ")
		return res, nil
	}
	l.listen(ctx, wait)
	return res, nil
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
