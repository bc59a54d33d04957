package localname

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"syscall"
)

// heard is what one reply was to the lookup.
type heard int

const (
	heardJunk heard = iota // it answers nothing asked
	heardNo                // a negative answer to the question
	heardYes               // a positive answer
)

// take records one reply and spends its socket's budget: an answer (yes
// or no) one of MaxPackets, anything else one of MaxJunk. A socket whose
// budget is spent is read no more. take is true for a positive answer.
func (l *lookup) take(r reply) bool {
	s := r.s
	if s.done {
		return false // read before its socket was finished
	}
	if r.readErr != nil {
		why := fmt.Sprintf("%s: %v", s.label, r.readErr)
		if errors.Is(r.readErr, syscall.ECONNREFUSED) {
			why = fmt.Sprintf("%s: port unreachable, nothing listens there (%v)", s.label, r.readErr)
		}
		l.res.Failed = append(l.res.Failed, why)
		s.finish()
		return false
	}
	var h heard
	if s.proto == NetBIOS {
		h = l.takeNBNS(r)
	} else {
		h = l.takeLLMNR(r)
	}
	if h == heardJunk {
		if s.junk++; s.junk >= l.maxJunk {
			l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("%s: stopped reading after %d replies that answer nothing asked", s.label, s.junk))
			s.finish()
		}
		return false
	}
	s.replied = true
	if s.answers++; s.answers >= l.maxPackets {
		l.res.Invalid = append(l.res.Invalid, fmt.Sprintf("%s: stopped reading after %d answers", s.label, s.answers))
		s.finish()
	}
	return h == heardYes
}

// junk lists a reply that answers nothing asked, the first maxListed of
// them; the rest are counted.
func (l *lookup) junk(format string, args ...any) heard {
	if l.listed < maxListed {
		l.listed++
		l.res.Invalid = append(l.res.Invalid, fmt.Sprintf(format, args...))
	} else {
		l.unlisted++
	}
	return heardJunk
}

// via is how the responder at from was asked.
func (s *sock) via(from netip.AddrPort) string {
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

// hears reports whether from may answer s's query: anyone on the segment
// answers a broadcast or multicast; a WINS server only from its own
// address and port (its socket is connected, so the kernel has checked
// it already), an LLMNR responder asked by unicast from its address.
func (s *sock) hears(from netip.AddrPort) bool {
	for _, d := range s.targets {
		switch {
		case d.via == "broadcast" || d.via == "multicast":
			return true
		case d.via == "wins" && d.addr == from:
			return true
		case d.via == "unicast" && d.addr.Addr() == from.Addr():
			return true
		}
	}
	return false
}

func (l *lookup) takeNBNS(r reply) heard {
	p, err, s := r.nb, r.err, r.s
	negative := errors.Is(err, ErrNegative)
	switch {
	case err != nil && !negative:
		return l.junk("netbios from %s: %v", r.from, err)
	case p.ID != s.id:
		return l.junk("netbios from %s: transaction id 0x%04x answers another question (ours 0x%04x)", r.from, p.ID, s.id)
	case !s.hears(r.from):
		// Only a WINS server asked may answer as one: a logon follows
		// a WINS answer, never a broadcast's (smbcheck's name step).
		return l.junk("netbios from %s: not a destination asked (%s)", r.from, s.label)
	}
	via := s.via(r.from)
	if negative {
		l.res.Negative = appendNew(l.res.Negative, fmt.Sprintf("netbios %s from %s: %v", via, r.from, err))
		return heardNo
	}
	if want := strings.ToUpper(strings.TrimSuffix(l.name, ".")); p.Name != want || p.Suffix != ServerSuffix {
		return l.junk("netbios from %s: answers for %s<%02X>, not %s<%02X>", r.from, p.Name, p.Suffix, want, ServerSuffix)
	}
	a := Answer{Protocol: NetBIOS, Via: via, From: r.from}
	var notes []string
	for _, e := range p.Entries {
		a.Addrs = append(a.Addrs, e.Addr)
		if e.Group && len(notes) == 0 {
			notes = append(notes, "a group name")
		}
	}
	l.addAnswer(a, notes)
	return heardYes
}

func (l *lookup) takeLLMNR(r reply) heard {
	p, err, s := r.ll, r.err, r.s
	negative := errors.Is(err, ErrNegative)
	switch {
	case err != nil && !negative:
		return l.junk("llmnr from %s: %v", r.from, err)
	case p.ID != s.id:
		return l.junk("llmnr from %s: transaction id 0x%04x answers another question (ours 0x%04x)", r.from, p.ID, s.id)
	case !strings.EqualFold(p.Name, strings.TrimSuffix(l.name, ".")):
		return l.junk("llmnr from %s: answers for %s, not %s", r.from, p.Name, l.name)
	case !s.hears(r.from):
		return l.junk("llmnr from %s: not a destination asked (%s)", r.from, s.label)
	case negative:
		l.res.Negative = appendNew(l.res.Negative, fmt.Sprintf("llmnr %s from %s: %v", s.via(r.from), r.from, err))
		return heardNo
	case len(p.Addrs) == 0:
		return l.junk("llmnr from %s: a response without an address for %s", r.from, l.name)
	}
	a := Answer{Protocol: LLMNR, Via: s.via(r.from), From: r.from, Addrs: p.Addrs}
	var notes []string
	if p.Conflict {
		notes = append(notes, "conflict: more than one host claims the name")
	}
	if p.Tentative {
		notes = append(notes, "tentative")
	}
	if p.Truncated {
		notes = append(notes, "truncated")
	}
	l.addAnswer(a, notes)
	return heardYes
}

// addAnswer records a, with notes and at most maxAddrs of its addresses,
// unless the same responder gave the same already (a resent query, or
// nmbd answering a broadcast on two sockets).
func (l *lookup) addAnswer(a Answer, notes []string) {
	if n := len(a.Addrs); n > maxAddrs {
		notes = append(notes, fmt.Sprintf("gave %d addresses, the first %d kept", n, maxAddrs))
		a.Addrs = append([]netip.Addr(nil), a.Addrs[:maxAddrs]...)
	}
	a.Note = strings.Join(notes, ", ")
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
