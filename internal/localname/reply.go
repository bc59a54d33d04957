package localname

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

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

// fromWINS: p came from one of the WINS servers p's socket asked.
func (l *lookup) fromWINS(p packet) bool {
	for _, d := range p.s.targets {
		if d.via == "wins" && d.addr == p.from {
			return true
		}
	}
	return false
}

func (l *lookup) takeNBNS(p packet) bool {
	r, err := ParseNBNSResponse(p.b)
	via := "broadcast"
	if err == nil || errors.Is(err, ErrNegative) {
		switch r.ID {
		case l.nbID:
		case l.winsID:
			// Only a WINS server asked may answer as one: a logon follows
			// a WINS answer, never a broadcast's (smbcheck's name step).
			if l.fromWINS(p) {
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
