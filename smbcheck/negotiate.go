package smbcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/smbwire"
	"github.com/scanwarden/scanwarden/smbconn"
)

// negotiateStep negotiates as an SMB1-only MFP does (SMB1 offered alone)
// and switches the check to SMB1; for every other MFP the negotiate step is
// taken inside the first logon (gatedLogon.afterNegotiate).
type negotiateStep struct{ *checker }

func (negotiateStep) ids() []string { return []string{StepNegotiate} }

func (c negotiateStep) run(ctx context.Context) bool {
	if !c.o.Device.SMB1Only {
		return true
	}
	if !c.stepProbe(ctx, nil) {
		return false
	}
	c.smb1 = true
	return true
}

// stepProbe is the negotiate step by the hand-written probe on one extra
// connection: for an SMB1-only MFP (SMB1 offered alone), and to explain a
// logon whose SMB2 negotiation failed (SMB1-only server, not SMB at all).
// cause is the SMB library's error when the probe explains one.
func (c negotiateStep) stepProbe(ctx context.Context, cause error) bool {
	s := c.begin(StepNegotiate)
	c.negotiated = true
	c.settleFloor(true) // one extra connection at a time
	pctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	conn, err := smbconn.DialTCP(pctx, c.addr, c.t.DialPort())
	var si *smbconn.ServerInfo
	if err == nil {
		si, err = smbconn.Probe(pctx, conn, c.t.DialPort(), c.t.Host, c.o.Device.SMB1Only)
		conn.Close()
	}
	if err != nil {
		if errors.Is(err, smbwire.ErrNoSMB1) {
			s.Evidence["smb1"] = false
			s.Evidence["error"] = err.Error()
			if !slices.Contains(smbPorts, c.t.DialPort()) {
				if answers := c.huntSMB(ctx); smbElsewhere(answers) {
					c.failNotSMB(ctx, s, "it hangs up on the SMB negotiate", answers)
					return false
				}
			}
			c.fail(s, scanwarden.CauseSMB1Refused, "the MFP speaks SMB1 only and the server refuses SMB1", "")
			return false
		}
		failed, ev := classify(StepNegotiate, err)
		for k, v := range ev {
			s.Evidence[k] = v
		}
		if errors.Is(err, smbwire.ErrNotSMB) {
			how := "it answers in another protocol"
			if smbwire.IsPeerClose(err) {
				how = "it hangs up on the SMB negotiate"
			}
			c.failNotSMB(ctx, s, how, nil)
			return false
		}
		if failed == scanwarden.CauseTimeout {
			c.negotiateTimeout(ctx, s)
			return false
		}
		c.fail(s, failed, "SMB negotiation failed: "+err.Error(), "")
		return false
	}
	c.server = si
	if !si.SMB2 && !c.o.Device.SMB1Only {
		c.negotiateEvidence(s, si)
		c.fail(s, scanwarden.CauseSMB1OnlyServer, fmt.Sprintf("the server offers only SMB1 (%s): an MFP using SMB2/3 cannot connect; the steps below replay the destination over SMB1, as an MFP with SMB1 enabled would", si.Dialect), "")
		return false
	}
	if cause != nil {
		// The probe saw a working SMB2 server, yet the library failed.
		c.negotiateEvidence(s, si)
		_, ev := classify(StepNegotiate, cause)
		for k, v := range ev {
			s.Evidence["library_"+k] = v
		}
		if c.dialectFloor(s, si) || c.dialectCeiling(s, si) {
			return false
		}
		c.fail(s, scanwarden.CauseUnknown, "the server negotiates SMB2 with a raw probe, but the SMB library's negotiation failed: "+cause.Error(), "")
		return false
	}
	return c.judgeNegotiate(ctx, s, si)
}

// dialectFloor tells a server that refused the MFP's highest dialect (the
// only one the logon offered, Device.MaxDialect) while it negotiates a
// higher one with a client that offers them all: its lowest dialect is
// above the MFP's highest. It ends the negotiate step and reports true
// when that is so.
func (c negotiateStep) dialectFloor(s *stepState, si *smbconn.ServerInfo) bool {
	highest := c.o.Device.MaxDialect
	chosen, err := ParseDialect(si.Dialect)
	if highest <= DialectSMB1 || err != nil || chosen <= highest {
		return false
	}
	s.Evidence["device_max_dialect"] = highest.String()
	c.fail(s, scanwarden.CauseDialectFloor, fmt.Sprintf("the server refuses SMB %s, the MFP's highest dialect (it negotiates SMB %s with a client that offers every dialect): its lowest dialect is above what the MFP speaks", highest, si.Dialect),
		fmt.Sprintf("Enable SMB 3 on the MFP if its firmware has it (Command Center RX → Network Settings → Protocol → SMB Client), or update the firmware; or let the server accept SMB %s (Samba: server min protocol = %s); or let the MFP scan to scanwarden's fallback share.", highest, sambaProtocol(highest)))
	return true
}

// dialectCeiling tells a server whose highest dialect — what it chose
// from a client that offers every dialect up to 3.1.1 — is below the MFP's
// lowest: the server is older than anything the MFP speaks. It ends the
// negotiate step and reports true when that is so.
func (c negotiateStep) dialectCeiling(s *stepState, si *smbconn.ServerInfo) bool {
	lowest := c.o.Device.MinDialect
	chosen, err := ParseDialect(si.Dialect)
	if lowest <= DialectSMB1 || err != nil || chosen == 0 || chosen >= lowest {
		return false
	}
	s.Evidence["device_min_dialect"] = lowest.String()
	c.fail(s, scanwarden.CauseDialectCeiling, fmt.Sprintf("the server's highest dialect is SMB %s, below the MFP's lowest (SMB %s): the server is older than anything the MFP speaks", si.Dialect, lowest),
		fmt.Sprintf("Enable SMB %s or later on the server (Samba: server max protocol = SMB3_11 or at least %s; Windows: update it, SMB 3 needs Windows 8 / Server 2012), or let the MFP speak SMB %s if its firmware has that setting (Command Center RX → Network Settings → Protocol → SMB Client); or let the MFP scan to scanwarden's fallback share.", lowest, sambaProtocol(lowest), si.Dialect))
	return true
}

// sambaProtocol is Samba's name of a dialect (server min protocol).
func sambaProtocol(d Dialect) string {
	switch d {
	case DialectSMB1:
		return "NT1"
	case DialectSMB202:
		return "SMB2_02"
	case DialectSMB21:
		return "SMB2_10"
	case DialectSMB30:
		return "SMB3_00"
	case DialectSMB302:
		return "SMB3_02"
	}
	return "SMB3_11"
}

func (c negotiateStep) negotiateEvidence(s *stepState, si *smbconn.ServerInfo) {
	s.Evidence["smb2"] = si.SMB2
	if si.SMB1 || c.o.Device.SMB1Only {
		s.Evidence["smb1"] = si.SMB1
	}
	s.Evidence["dialect"] = si.Dialect
	s.Evidence["signing_required"] = si.SigningRequired
	for k, v := range map[string]string{"netbios_computer": si.NetBIOSComputer, "netbios_domain": si.NetBIOSDomain,
		"dns_computer": si.DNSComputer, "dns_domain": si.DNSDomain, "os_version": si.OSVersion, "windows": si.Windows} {
		if v != "" {
			s.Evidence[k] = v
		}
	}
}

// judgeNegotiate ends the negotiate step from what the server told:
// signing, Windows edition, the MFP's own limits — and, for a check with
// no device profile, the server's lowest dialect (asked beside the later
// steps: askLowest).
func (c negotiateStep) judgeNegotiate(ctx context.Context, s *stepState, si *smbconn.ServerInfo) bool {
	c.negotiateEvidence(s, si)
	var warns []string
	what := fmt.Sprintf("SMB %s", si.Dialect)
	if si.NetBIOSComputer != "" {
		what += fmt.Sprintf(", server %s in %s", si.NetBIOSComputer, si.NetBIOSDomain)
	}
	if si.Windows != "" {
		what += ", " + si.Windows
	}
	if si.SMB2 && !c.smb1 && c.dialectCeiling(s, si) {
		return false
	}
	var tail string
	if si.SigningRequired {
		if c.o.Device.NoSigning {
			c.fail(s, scanwarden.CauseSigningRequired, "the server requires SMB signing and the MFP cannot sign", "")
			return false
		}
		// Information: an MFP that cannot sign is told with --device-no-signing.
		tail += ", signing required"
	}
	if si.ClientEdition {
		warns = append(warns, fmt.Sprintf("%s allows only 20 inbound SMB sessions: many MFPs and PCs connecting can exhaust it (lower AutoDisconnect, or move the folder to a server)", si.Windows))
	}
	if c.o.Device.SMB1Only {
		warns = append(warns, "the MFP uses SMB1, an unsafe protocol (update its firmware and use SMB2/3 when possible); the steps below replay it over SMB1 with an NTLMv2 logon (firmware that sends only NTLMv1 is refused by servers that require NTLMv2, as Samba does by default)")
	}
	// Nothing below fails the step: the lowest dialect is information.
	floor := c.askLowest(ctx, si)
	if len(warns) > 0 {
		c.warnings = append(c.warnings, strings.Join(warns, "; "))
		c.endFloor(s, StatusWarn, what, tail+"; "+strings.Join(warns, "; "), floor)
	} else {
		c.endFloor(s, StatusOK, what, tail, floor)
	}
	return true
}

// negotiateTimeout ends the negotiate step of a server that accepted TCP
// and said nothing: on a port that is not an SMB port, an SMB server
// answering on 445 or 139 shows the stored port is another service.
func (c negotiateStep) negotiateTimeout(ctx context.Context, s *stepState) {
	if !slices.Contains(smbPorts, c.t.DialPort()) {
		if answers := c.huntSMB(ctx); smbElsewhere(answers) {
			c.failNotSMB(ctx, s, fmt.Sprintf("it says nothing to the SMB negotiate within %s", c.o.StepTimeout), answers)
			return
		}
	}
	c.fail(s, scanwarden.CauseTimeout, fmt.Sprintf("the server accepted TCP but did not answer the SMB negotiate within %s", c.o.StepTimeout), "")
}

// huntSMB asks the SMB ports other than the stored one, at the same time,
// whether an SMB server answers there (the anonymous probe: no credentials
// leave). It returns the answers in smbPorts order.
func (c negotiateStep) huntSMB(ctx context.Context) []portAnswer {
	var out []portAnswer
	for _, p := range smbPorts {
		if p != c.t.DialPort() {
			out = append(out, portAnswer{port: p})
		}
	}
	c.settleFloor(true)
	hctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout/2)
	defer cancel()
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			a := &out[i]
			conn, err := smbconn.DialTCP(hctx, c.addr, a.port)
			if err != nil {
				a.err = err
				return
			}
			defer conn.Close()
			a.info, a.err = smbconn.Probe(hctx, conn, a.port, c.t.Host, false)
		})
	}
	wg.Wait()
	return out
}

// failNotSMB ends step s with not-smb-port: something answers on the stored
// port, in another protocol (or silently, when an SMB port answers
// instead). It names the SMB port that answers, if one does.
func (c negotiateStep) failNotSMB(ctx context.Context, s *stepState, how string, answers []portAnswer) {
	if answers == nil {
		answers = c.huntSMB(ctx)
	}
	port := c.t.DialPort()
	found := 0
	for _, a := range answers {
		key := fmt.Sprintf("port_%d", a.port)
		switch {
		case a.info != nil:
			s.Evidence[key] = "smb " + a.info.Dialect
			if found == 0 {
				found = a.port
			}
		case a.err != nil:
			s.Evidence[key] = a.err.Error()
		}
	}
	detail := fmt.Sprintf("%s answers on port %d, but not as an SMB server (%s)", c.addr, port, how)
	var fix string
	if found != 0 {
		detail += fmt.Sprintf("; an SMB server answers on port %d", found)
		fix = fmt.Sprintf("Set the destination's Port Number on the MFP to %d (Command Center RX → Address Book → the destination → Port Number): the server answers SMB there, not on %d.", found, port)
	} else {
		detail += "; no SMB server answers on 445 or 139 either"
		fix = fmt.Sprintf("Check that the destination's Host Name is the file server (nothing answers SMB on %s) and that its Port Number is 445 (or 139) — port %d is another service.", c.addr, port)
	}
	c.fail(s, scanwarden.CauseNotSMBPort, detail, fix)
}

// askLowest starts the lowest-dialect question of a check with no device
// profile whose server chose SMB2/3 dialect si.Dialect; nil when it does
// not apply. A remembered answer (Options.LowestDialects) learned since
// Options.LowestSince comes back done, with nothing asked; while another
// check of the server is asking, this one waits for that answer
// (LowestDialects.answer).
func (c negotiateStep) askLowest(ctx context.Context, si *smbconn.ServerInfo) *floorAsk {
	highest, err := ParseDialect(si.Dialect)
	if c.o.Device.Known() || c.smb1 || !si.SMB2 || err != nil || highest < DialectSMB202 {
		return nil
	}
	f := &floorAsk{done: make(chan struct{})}
	mem, key, now, since := c.o.LowestDialects, c.floorKey(), c.o.Now(), c.o.LowestSince
	if e, ok := mem.lookup(key, highest, now, since); ok {
		f.low, f.seen = e.low, e.at
		close(f.done)
		return f
	}
	// The goroutine reads none of the checker's fields.
	addr, port, host, timeout, first := c.addr, c.t.DialPort(), c.t.Host, c.o.StepTimeout, c.first
	go func() {
		defer close(f.done)
		f.low, f.asked, f.seen, f.err = mem.answer(ctx, key, highest, now, since, func(ctx context.Context) (Dialect, int, error) {
			return lowestDialect(ctx, addr, port, host, timeout, highest, first)
		})
	}()
	return f
}

// floorKey is the server address the lowest dialect is remembered under.
func (c negotiateStep) floorKey() string {
	return net.JoinHostPort(c.addr, strconv.Itoa(c.t.DialPort()))
}

// forgetFloor drops the remembered lowest dialect of a server whose
// negotiate step failed: it changed, or is not the server it was.
func (c negotiateStep) forgetFloor() {
	if s := c.r.Step(StepNegotiate); s != nil && s.Status == StatusFail && c.addr != "" {
		c.o.LowestDialects.forget(c.floorKey(), c.r.Started)
	}
}
