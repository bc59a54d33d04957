package smbcheck

import (
	"context"
	"fmt"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/smbconn"
)

// tcpStep connects to the first address on the stored port.
type tcpStep struct{ *checker }

func (tcpStep) ids() []string { return []string{StepTCP} }

func (c tcpStep) run(ctx context.Context) bool { return c.stepTCP(ctx, c.addrs) }

func (c tcpStep) stepTCP(ctx context.Context, addrs []string) bool {
	s := c.begin(StepTCP)
	port := c.t.DialPort()
	c.addr = addrs[0]
	s.Evidence["address"] = c.addr
	s.Evidence["port"] = port
	dctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	conn, err := smbconn.DialTCP(dctx, c.addr, port)
	cancel()
	if err == nil {
		c.conn = conn
		c.askFirst(ctx)
		c.ok(s, fmt.Sprintf("connected to %s port %d", c.addr, port))
		return true
	}
	cause, ev := classify(StepTCP, err)
	for k, v := range ev {
		s.Evidence[k] = v
	}
	// One extra connection: is the other SMB port open?
	other := 445
	if port == 445 {
		other = 139
	}
	octx, ocancel := context.WithTimeout(ctx, c.o.StepTimeout/2)
	oc, oerr := smbconn.DialTCP(octx, c.addr, other)
	ocancel()
	fix := ""
	if oerr == nil {
		oc.Close()
		s.Evidence[fmt.Sprintf("port_%d", other)] = "open"
		fix = fmt.Sprintf("The server answers on port %d, not %d: set the destination's Port Number to %d on the MFP, or open port %d on the server.", other, port, other, port)
	} else {
		s.Evidence[fmt.Sprintf("port_%d", other)] = smbclient.DescribeDialError(oerr)
	}
	if cause == scanwarden.CauseUnknown {
		cause = scanwarden.CauseHostUnreachable
	}
	c.fail(s, cause, fmt.Sprintf("%s port %d: %s", c.addr, port, smbclient.DescribeDialError(err)), fix)
	return false
}
