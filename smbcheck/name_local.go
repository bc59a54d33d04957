package smbcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/localname"
)

// LocalNames asks the local network for a host name DNS does not know, as
// a Windows PC does (NetBIOS name service, LLMNR); localname.Local (the
// default) and localname.Asker are two.
type LocalNames interface {
	Lookup(ctx context.Context, name string) (localname.Result, error)
}

// askLocal is the name step's last question after DNS said the name does
// not exist: does a host on this box's segments (or a WINS server) answer
// for it? The PC where the admin "sees" the name asks the same. It records
// what was asked and heard under netbios_llmnr_*, and returns the answer
// when one came. A DNS server that did not answer is not followed by it:
// then DNS itself is the fault, not a missing record.
func (c nameStep) askLocal(ctx context.Context, s *stepState, host string, dnsErr error) (localname.Result, bool) {
	if de := (*net.DNSError)(nil); errors.As(dnsErr, &de) && !de.IsNotFound {
		s.Evidence["netbios_llmnr_not_asked"] = "DNS did not say the name does not exist (" + de.Err + ")"
		return localname.Result{}, false
	}
	r, err := c.o.LocalNames.Lookup(ctx, host)
	if err != nil {
		s.Evidence["netbios_llmnr_error"] = err.Error()
		return r, false
	}
	if r.NotAsked != "" {
		s.Evidence["netbios_llmnr_not_asked"] = r.NotAsked
		return r, false
	}
	s.Evidence["netbios_llmnr_asked"] = r.Asked
	s.Evidence["netbios_llmnr_ms"] = r.Waited.Milliseconds()
	for key, list := range map[string][]string{"skipped": r.Skipped, "negative": r.Negative, "invalid": r.Invalid, "failed": r.Failed} {
		if len(list) > 0 {
			s.Evidence["netbios_llmnr_"+key] = list
		}
	}
	if !r.Found() {
		return r, false
	}
	answers := make([]string, len(r.Answers))
	for i, a := range r.Answers {
		answers[i] = a.String()
	}
	s.Evidence["netbios_llmnr_answers"] = answers
	return r, true
}

// failNotInDNS fails the step with name-not-in-dns: who answered, over
// which protocol, and the address to store or to put in DNS — after a
// nested check at that address has said whether the MFP's logon works
// there (replayAt).
func (c nameStep) failNotInDNS(ctx context.Context, s *stepState, host string, r localname.Result) {
	addr, first, _ := c.firstAnswer(r)
	s.Evidence["answered_by"] = string(first.Protocol)
	s.Evidence["answer_address"] = addr
	var protos []string
	for _, p := range []localname.Protocol{localname.NetBIOS, localname.LLMNR} {
		for _, a := range r.Answers {
			if a.Protocol == p {
				protos = append(protos, protoName(p))
				break
			}
		}
	}
	detail := fmt.Sprintf("%s is not in DNS, but %s answers for it over %s (%s from %s): Windows PCs find it that way, the MFP does not",
		host, addr, strings.Join(protos, " and "), first.Via, first.From.Addr())
	zone := ""
	if len(c.o.DNSDomains) > 0 {
		zone = fmt.Sprintf(" (zone %s)", strings.Trim(c.o.DNSDomains[0], "."))
	}
	fix := fmt.Sprintf("The MFP looks the Host Name up in DNS only, not over NetBIOS or LLMNR as Windows does: add an A record %s → %s in DNS%s on the domain controller's DNS server, or store the server's full DNS name or its address %s as the destination's Host Name on the MFP (Command Center RX → Address Book → Host Name). %s answered just now: storing it helps at once, but only a DNS name keeps working when the server's address changes.",
		host, addr, zone, addr, addr)
	if at, ran := c.replayAt(ctx, s, host, addr, first.Via); ran {
		if at.Verdict.Cause == scanwarden.CauseOK {
			detail += fmt.Sprintf("; at %s the MFP's logon would succeed", addr)
			fix = fmt.Sprintf("At %s the MFP's logon would succeed (checked just now as this MFP would, with the same account): store that address or add the A record. ", addr) + fix
		} else {
			detail += fmt.Sprintf("; at %s the check fails too: %s", addr, at.Verdict.Cause)
			fix = fmt.Sprintf("Storing %s or adding the A record is not enough: checked there as this MFP would, the check fails at %s too — %s %s Then: ",
				addr, addr, at.Verdict.Summary, at.Verdict.Fix) + fix
			c.also = append(c.also, at.Verdict.Cause)
		}
	}
	c.fail(s, scanwarden.CauseNameNotInDNS, detail, fix)
}

// replayAt runs the rest of the check at the address that answered for
// host, as a nested check (nested.go), and records its result under
// answer_address_result; ran is false when it did not run (the check is
// itself nested) or was stopped.
//
// Only an answer from a WINS server the admin configured is logged on to:
// any host on the segment can answer a broadcast or multicast first, and a
// logon there would hand it the MFP's NTLM response to crack offline (the
// Responder attack), on every scheduled check.
func (c nameStep) replayAt(ctx context.Context, s *stepState, host, addr, via string) (Report, bool) {
	if c.o.nested != "" {
		s.Evidence["answer_address_result"] = "not checked: this is the check of " + c.o.nested
		return Report{}, false
	}
	if via != "wins" {
		s.Evidence["answer_address_result"] = fmt.Sprintf("not checked: %s answered a %s, which any host on the segment can do; a logon there would send it the MFP's credentials (check it by hand: scanwarden check %s)",
			addr, via, scanwarden.UNC(addr, c.t.Share, c.t.Path))
		return Report{}, false
	}
	at := c.t
	at.Host = addr
	r := c.nested(ctx, at, "the address that answered for "+host)
	if r.Interrupted || r.Verdict.Cause == "" {
		s.Evidence["answer_address_result"] = "not checked: the check was interrupted"
		return r, false
	}
	s.Evidence["answer_address_result"] = string(r.Verdict.Cause)
	return r, true
}

// firstAnswer is the address to name: IPv4 first, as an MFP's stack
// prefers it.
func (nameStep) firstAnswer(r localname.Result) (string, localname.Answer, bool) {
	a, ans, ok := r.Addr()
	if !ok {
		return "", localname.Answer{}, false
	}
	return a.String(), ans, true
}

func protoName(p localname.Protocol) string {
	if p == localname.NetBIOS {
		return "NetBIOS"
	}
	return "LLMNR"
}
