package daemon

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/registry"
)

// procFigures are the test process's resident memory and descriptors.
func procFigures() (rssKB, fds int) {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "VmRSS:" {
			rssKB, _ = strconv.Atoi(f[1])
		}
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	return rssKB, len(ents)
}

// An attacker on the LAN opens 500 connections to the web listener from one
// address and sends nothing. The listener keeps WebMaxConnsPerAddr of them
// (cut by ReadHeaderTimeout after 10 s) and answers the rest 503 at once;
// meanwhile the admin logs on from another address and loads the dashboard.
// Bounded: 500 connections, 30 s.
func TestAttackWebIdleFlood(t *testing.T) {
	m, base := openWebDaemon(t, registry.Destination{})
	port := m.Addr().(*net.TCPAddr).Port
	attacker := &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}
	rss0, fds0 := procFigures()

	const n = 500
	start := time.Now()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n && time.Since(start) < 20*time.Second; i++ {
		d := net.Dialer{LocalAddr: attacker, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	dialled := time.Since(start)
	waitUntil(t, 10*time.Second, "the listener to take every connection", func() bool {
		return m.web.limit.Refused() >= n-WebMaxConnsPerAddr
	})
	rss1, fds1 := procFigures()

	// Which connections the server keeps: the refused ones read a 503 and EOF.
	held, refused := 0, 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		b, err := io.ReadAll(c)
		switch {
		case strings.HasPrefix(string(b), "HTTP/1.1 503 ") && err == nil:
			refused++
		case len(b) == 0 && err != nil && strings.Contains(err.Error(), "timeout"):
			held++
		default:
			t.Errorf("connection read %q, %v", b, err)
		}
	}
	if held != WebMaxConnsPerAddr || refused != n-WebMaxConnsPerAddr {
		t.Errorf("held %d, refused %d; want %d held", held, refused, WebMaxConnsPerAddr)
	}

	// The admin, from 127.0.0.1, while the flood holds its slots.
	jar, _ := cookiejar.New(nil)
	admin := &http.Client{Jar: jar, Timeout: 5 * time.Second}
	t0 := time.Now()
	resp, err := admin.PostForm(base+"/login", url.Values{"user": {"admin"}, "password": {"web test password"}})
	if err != nil {
		t.Fatalf("admin login during the flood: %v", err)
	}
	resp.Body.Close()
	resp, err = admin.Get(base + "/")
	if err != nil {
		t.Fatalf("dashboard during the flood: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(t0)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "mfp-evil") {
		t.Fatalf("dashboard during the flood: %s %.300s", resp.Status, body)
	}
	t.Logf("%d connections from %s dialled in %v: %d held, %d answered 503 at accept; admin login + dashboard from 127.0.0.1 in %v",
		n, attacker.IP, dialled.Round(time.Millisecond), held, refused, took.Round(time.Millisecond))
	// The client's own 500 sockets are in the descriptor count too.
	t.Logf("test process (daemon + the attacker's %d client sockets): RSS %.1f → %.1f MiB, descriptors %d → %d (server side: %d more)",
		n, float64(rss0)/1024, float64(rss1)/1024, fds0, fds1, fds1-fds0-n)
	if extra := fds1 - fds0 - n; extra > WebMaxConnsPerAddr+16 {
		t.Errorf("the server holds %d more descriptors under the flood", extra)
	}

	// Now from many addresses (127.0.0.10–17, 32 each: within the
	// per-address cap) until the total cap is full.
	refusedBefore := m.web.limit.Refused()
	for a := 10; a < 18; a++ {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(a))}, Timeout: 2 * time.Second}
		for range WebMaxConnsPerAddr {
			c, err := d.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatalf("from 127.0.0.%d: %v", a, err)
			}
			conns = append(conns, c)
		}
	}
	waitUntil(t, 10*time.Second, "the total cap to fill", func() bool { return m.web.limit.open() >= WebMaxConns })
	rss2, fds2 := procFigures()
	// A newcomer that never authenticated is refused while it is full...
	// (Read on a raw socket: the 503 is written at accept, before any
	// request, which Go's client may report as an unsolicited answer.)
	nd := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.50")}, Timeout: 2 * time.Second}
	if c, err := nd.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Errorf("an unknown address while the cap is full: %v", err)
	} else {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		b, _ := io.ReadAll(c)
		c.Close()
		if !strings.HasPrefix(string(b), "HTTP/1.1 503 ") {
			t.Errorf("an unknown address while the cap is full: %.60q, want a 503", b)
		}
	}
	// ...the admin, whose address made authenticated requests, is not
	// (a fresh connection: the reserve).
	admin.CloseIdleConnections()
	t0 = time.Now()
	resp, err = admin.Get(base + "/")
	if err != nil {
		t.Fatalf("dashboard during the many-address flood: %v", err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "mfp-evil") {
		t.Fatalf("dashboard during the many-address flood: %s %.300s", resp.Status, body)
	}
	t.Logf("then 8 addresses × %d: total cap full at %d open, %d more refused; unknown 127.0.0.50 → 503; the admin's dashboard (reserve) in %v; RSS %.1f MiB, descriptors %d (%d client sockets)",
		WebMaxConnsPerAddr, m.web.limit.open(), m.web.limit.Refused()-refusedBefore-1, time.Since(t0).Round(time.Millisecond),
		float64(rss2)/1024, fds2, len(conns))

	// The held ones never sent a request: ReadHeaderTimeout (10 s) cuts them.
	waitUntil(t, 15*time.Second, "the idle connections to be cut", func() bool { return m.web.limit.open() <= 2 })
	t.Logf("idle holders cut %v after they connected", time.Since(start).Round(100*time.Millisecond))
}
