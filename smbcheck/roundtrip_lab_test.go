package smbcheck

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

// frameCounter is a TCP relay on loopback in front of one SMB server that
// counts the connections and the SMB messages (NetBIOS session frames)
// the client sends: a check's cost in requests.
type frameCounter struct {
	ln       net.Listener
	conns    atomic.Int64
	requests atomic.Int64
	closed   atomic.Int64 // connections whose client side has ended
	wg       sync.WaitGroup
	mu       sync.Mutex
	// before holds, for each connection in the order taken, how many
	// requests the relay had passed on when it was taken.
	before []int64
	// holdFirst, when set, holds the server's answers on the first
	// connection taken after a reset this long before passing them on: a
	// test of what happens while a request waits for its answer does not
	// hang on the scheduler's timing.
	holdFirst atomic.Int64
}

func startFrameCounter(t *testing.T, server string) *frameCounter {
	t.Helper()
	return startFrameCounterOn(t, "127.0.0.1:0", server)
}

// startFrameCounterOn is startFrameCounter listening on listen.
func startFrameCounterOn(t *testing.T, listen, server string) *frameCounter {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	fc := &frameCounter{ln: ln}
	fc.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fc.conns.Add(1)
			fc.mu.Lock()
			fc.before = append(fc.before, fc.requests.Load())
			var hold time.Duration
			if len(fc.before) == 1 {
				hold = time.Duration(fc.holdFirst.Load())
			}
			fc.mu.Unlock()
			fc.wg.Go(func() {
				defer fc.closed.Add(1)
				fc.relay(c, server, hold)
			})
		}
	})
	t.Cleanup(func() { ln.Close(); fc.wg.Wait() })
	return fc
}

func (fc *frameCounter) relay(c net.Conn, server string, hold time.Duration) {
	defer c.Close()
	s, err := net.DialTimeout("tcp", server, 5*time.Second)
	if err != nil {
		return
	}
	defer s.Close()
	go func() {
		time.Sleep(hold)
		io.Copy(c, s)
		c.Close()
	}()
	hdr := make([]byte, 4)
	for {
		if _, err := io.ReadFull(c, hdr); err != nil {
			return
		}
		n := int(hdr[1])<<16 | int(binary.BigEndian.Uint16(hdr[2:]))
		fc.requests.Add(1)
		if _, err := s.Write(hdr); err != nil {
			return
		}
		if _, err := io.CopyN(s, c, int64(n)); err != nil {
			return
		}
	}
}

func (fc *frameCounter) port() int { return fc.ln.Addr().(*net.TCPAddr).Port }

// reset zeroes the counters; call it once the previous counts are read.
func (fc *frameCounter) reset() {
	fc.conns.Store(0)
	fc.requests.Store(0)
	fc.closed.Store(0)
	fc.mu.Lock()
	fc.before = nil
	fc.mu.Unlock()
}

// requestsBefore is, for each connection taken since reset, how many
// requests had been passed on when it was taken.
func (fc *frameCounter) requestsBefore() []int64 {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]int64(nil), fc.before...)
}

// settled waits until every connection the relay took has been closed by
// the client — a check's log-off may still be on its way when Run returns
// — and returns the counts; it fails the test after 5 s. A relayed
// connection is taken before the server sees a byte of it, so once every
// connection that was answered has closed, nothing more is counted.
func (fc *frameCounter) settled(t *testing.T) (conns, requests int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for fc.closed.Load() < fc.conns.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("the relay still has %d of %d connections open after 5 s", fc.conns.Load()-fc.closed.Load(), fc.conns.Load())
		}
		time.Sleep(time.Millisecond)
	}
	return fc.conns.Load(), fc.requests.Load()
}

// TestLabDeviceCostsNoMoreRequests: a check that replays a device profile
// sends no more SMB requests, over no more connections, than a check with
// scanwarden's own client, on a destination where both pass, leaving out
// what only a check without a profile asks (the server's lowest dialect:
// one NEGOTIATE on a connection of its own per dialect asked). The figures
// are logged: go test -v -run TestLabDeviceCostsNoMoreRequests.
func TestLabDeviceCostsNoMoreRequests(t *testing.T) {
	lab := testlab.Require(t)
	fc := startFrameCounter(t, net.JoinHostPort(lab.SMB2IP, "445"))
	tg := scanwarden.Target{Host: "127.0.0.1", Port: fc.port(), Share: "scans", User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}
	cost := func(d Device) (conns, requests int64, r Report) {
		fc.reset()
		r = Run(context.Background(), tg, Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second, Device: d})
		if r.Verdict.Cause != scanwarden.CauseOK {
			t.Fatalf("device %+v: verdict %s%s", d, r.Verdict.Cause, stepsString(r))
		}
		conns, requests = fc.settled(t)
		return conns, requests, r
	}
	c0, r0, rep := cost(Device{})
	asked, _ := rep.Step(StepNegotiate).Evidence["lowest_dialect_asked"].(int)
	if asked != 1 || rep.Step(StepNegotiate).Evidence["lowest_dialect"] != "2.0.2" {
		t.Errorf("no device: negotiate evidence %v, want the lowest dialect 2.0.2 found with one question", rep.Step(StepNegotiate).Evidence)
	}
	t.Logf("no device: %d connections, %d requests, of which the lowest dialect %d, %d", c0, r0, asked, asked)
	c0 -= int64(asked)
	r0 -= int64(asked)
	// Today's figure, from before the lowest dialect was asked.
	if c0 != 1 || r0 != 13 {
		t.Errorf("no device, without the lowest dialect: %d connections, %d requests; want 1, 13", c0, r0)
	}
	for _, d := range []Device{
		{MaxDialect: DialectSMB21, NoEncryption: true, FileType: FileTypePDF},
		{MinDialect: DialectSMB21, MaxDialect: DialectSMB311, NoKerberos: true, FileType: FileTypeTIFF},
		{MaxDialect: DialectSMB302, NoEncryption: true, NoSigning: true, FileType: FileTypeJPEG},
	} {
		c, r, _ := cost(d)
		t.Logf("device max %s, %s: %d connections, %d requests (no device: %d, %d)", d.MaxDialect, d.FileType, c, r, c0, r0)
		if c > c0 || r > r0 {
			t.Errorf("device %+v costs %d connections, %d requests; without a device %d, %d", d, c, r, c0, r0)
		}
	}
}

// TestLabLowestDialectCost: on smb3only (nothing below 3.1.1) the lowest
// dialect costs a check without a profile four connections of one
// NEGOTIATE each, and nothing else; a 3.1.1 device's check asks none.
func TestLabLowestDialectCost(t *testing.T) {
	lab := testlab.Require(t)
	fc := startFrameCounter(t, net.JoinHostPort(lab.SMB2IP, "1445"))
	tg := scanwarden.Target{Host: "127.0.0.1", Port: fc.port(), Share: "scans", User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}
	cost := func(d Device) (int64, int64) {
		fc.reset()
		r := Run(context.Background(), tg, Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second, Device: d})
		if r.Verdict.Cause != scanwarden.CauseOK {
			t.Fatalf("device %+v: verdict %s%s", d, r.Verdict.Cause, stepsString(r))
		}
		return fc.settled(t)
	}
	c0, r0 := cost(Device{})
	c1, r1 := cost(Device{MaxDialect: DialectSMB311})
	t.Logf("smb3only: no device %d connections, %d requests; device max 3.1.1 %d, %d", c0, r0, c1, r1)
	if c0-c1 != 4 || r0-r1 != 4 {
		t.Errorf("the lowest dialect cost %d connections, %d requests; want 4, 4", c0-c1, r0-r1)
	}
}
