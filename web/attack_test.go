package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Request bodies attacked as a host on the LAN would: bodies far over the
// limit (declared and chunked), and a body trickled a byte at a time.

// endless is an io.Reader of n bytes of 'x' that counts what was read from it.
type endless struct {
	n, read atomic.Int64
}

func newEndless(n int64) *endless { e := &endless{}; e.n.Store(n); return e }

func (e *endless) Read(p []byte) (int, error) {
	left := e.n.Load() - e.read.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	for i := range p {
		p[i] = 'x'
	}
	e.read.Add(int64(len(p)))
	return len(p), nil
}

// multipartHead is the start of an import form whose file part runs on.
func multipartHead() (head, ctype string) {
	var b strings.Builder
	mw := multipart.NewWriter(&b)
	mw.WriteField("device", "mfp01")
	mw.CreateFormFile("export", "book.xml")
	return b.String(), mw.FormDataContentType()
}

func (s *site) failedLogins() int {
	n := 0
	for _, a := range s.auth.audit {
		if a.Action == "login.failed" {
			n++
		}
	}
	return n
}

func TestAttackOversizeBody(t *testing.T) {
	s := newSite(t)
	c := s.login()
	const huge = 64 << 20
	head, ctype := multipartHead()
	settingsBefore := fmt.Sprint(s.sets.values)
	for _, tc := range []struct {
		name     string
		client   *http.Client
		path     string
		ctype    string
		prefix   string
		declared bool // Content-Length given (else chunked)
		status   int
		says     string
	}{
		{"import, 64 MiB declared", c, "/import", ctype, head, true, http.StatusRequestEntityTooLarge, "larger than 9216 KiB"},
		{"import, 64 MiB chunked", c, "/import", ctype, head, false, http.StatusBadRequest, "larger than 8 MiB"},
		{"anonymous login, 64 MiB declared", s.anon(), "/login", "application/x-www-form-urlencoded", "user=admin&password=", true, http.StatusRequestEntityTooLarge, "larger than 64 KiB"},
		{"anonymous login, 64 MiB chunked", s.anon(), "/login", "application/x-www-form-urlencoded", "user=admin&password=", false, http.StatusRequestEntityTooLarge, "larger than 64 KiB"},
		{"anonymous setup, 64 MiB chunked", s.anon(), "/setup", "application/x-www-form-urlencoded", "token=", false, http.StatusRequestEntityTooLarge, "larger than 64 KiB"},
		{"settings, 64 MiB chunked", c, "/settings/notify", "application/x-www-form-urlencoded", "webhook_url=", false, http.StatusBadRequest, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failed := s.failedLogins()
			body := newEndless(huge)
			var r io.Reader = io.MultiReader(strings.NewReader(tc.prefix), body)
			if !tc.declared {
				r = struct{ io.Reader }{r} // no length known: chunked
			}
			req, _ := http.NewRequest(http.MethodPost, s.ts.URL+tc.path, r)
			if tc.declared {
				req.ContentLength = int64(len(tc.prefix)) + huge
			}
			req.Header.Set("Content-Type", tc.ctype)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			resp, err := c.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatalf("no answer: %v (server read %d bytes)", err, body.read.Load())
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(start)
			t.Logf("%s: %s after %v, %q; %.1f MiB had left the client", tc.name, resp.Status, took.Round(time.Millisecond),
				trunc(tagless(string(got))), float64(body.read.Load())/(1<<20))
			if resp.StatusCode != tc.status || !strings.Contains(string(got), tc.says) {
				t.Errorf("got %s %q, want %d saying %q", resp.Status, trunc(string(got)), tc.status, tc.says)
			}
			// what left the client: what the server read plus the sockets' buffers
			if body.read.Load() > maxUpload+16<<20 {
				t.Errorf("%d bytes of a refused body were taken", body.read.Load())
			}
			if s.failedLogins() != failed {
				t.Errorf("an oversize body counted as a failed login")
			}
		})
	}
	if len(s.imp.calls) != 0 {
		t.Errorf("the importer saw an oversize upload: %v", s.imp.calls)
	}
	if n := len(s.srv.imports.byID); n != 0 {
		t.Errorf("%d uploads pending", n)
	}
	if fmt.Sprint(s.sets.values) != settingsBefore {
		t.Errorf("settings changed by an oversize body: %v", s.sets.values)
	}
}

// A client that sends its headers and then its body a byte at a time is cut
// when BodyTimeout is up, whatever it keeps sending; it is nobody's failed
// login. A request whose body arrived in time is not cut by that deadline,
// however long its handler runs (a check, an event stream).
func TestAttackSlowBody(t *testing.T) {
	s := newSite(t, func(c *Config) { c.BodyTimeout = time.Second })
	failed := s.failedLogins()
	addr := strings.TrimPrefix(s.ts.URL, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 4000\r\n\r\nuser=admin&password=", addr)
	start := time.Now()
	stop := make(chan struct{})
	sent := atomic.Int64{}
	go func() { // a byte every 100 ms, for at most 10 s
		for i := 0; i < 100; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := conn.Write([]byte("x")); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	defer close(stop)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("no answer to a trickled body within 10 s: %v", err)
	}
	resp.Body.Close()
	t.Logf("trickled login body (a byte per 100 ms): %s after %v, %d bytes sent", resp.Status, took.Round(time.Millisecond), sent.Load())
	if resp.StatusCode != http.StatusRequestTimeout || took > 3*time.Second {
		t.Errorf("got %s after %v, want 408 after about 1 s", resp.Status, took)
	}
	if s.failedLogins() != failed {
		t.Errorf("a trickled body counted as a failed login")
	}

	// Body in time, handler runs 2.5 × BodyTimeout: its context lives on
	// (net/http lifts the read deadline when the body has been read).
	var cut atomic.Bool
	long := httptest.NewServer(s.srv.limitBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
			cut.Store(true)
		case <-time.After(2500 * time.Millisecond):
		}
		io.WriteString(w, "done")
	})))
	defer long.Close()
	r2, err := http.Post(long.URL, "application/x-www-form-urlencoded", strings.NewReader("a=b"))
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if cut.Load() {
		t.Errorf("a request whose body came in time was cut by the body deadline")
	}
}

// tagless drops HTML tags (the error pages are HTML).
func tagless(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func trunc(s string) string {
	if i := strings.Index(s, "larger than"); i > 40 {
		s = "…" + s[i-20:]
	}
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
