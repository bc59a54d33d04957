package smbcheck

import (
	"context"
	"fmt"
	"github.com/scanwarden/scanwarden/smbconn"
	"sync"
)

// smbPorts are the ports an SMB server answers on, most usual first.
var smbPorts = []int{445, 139}

// portAnswer is what one SMB port said to the negotiate probe.
type portAnswer struct {
	port int
	info *smbconn.ServerInfo // nil: no SMB there
	err  error
}

// huntSMB asks the SMB ports other than the stored one, at the same time,
// whether an SMB server answers there (the anonymous probe: no credentials
// leave). It returns the answers in smbPorts order.
func (c *checker) huntSMB(ctx context.Context) []portAnswer {
	var out []portAnswer
	for _, p := range smbPorts {
		if p != c.t.port() {
			out = append(out, portAnswer{port: p})
		}
	}
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
func (c *checker) failNotSMB(ctx context.Context, s *stepState, how string, answers []portAnswer) {
	if answers == nil {
		answers = c.huntSMB(ctx)
	}
	port := c.t.port()
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
	c.fail(s, CauseNotSMBPort, detail, fix)
}

// smbElsewhere is the first answer from an SMB port, if any.
func smbElsewhere(answers []portAnswer) bool {
	for _, a := range answers {
		if a.info != nil {
			return true
		}
	}
	return false
}
