package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
)

func sampleIncident() incident.Incident {
	return incident.Incident{ID: 4, Destination: "reception", Device: "MFP02", State: incident.StateOpen,
		Cause: scanwarden.CauseBadCredentials, KyoceraCode: "1102", Summary: "The server refuses the user name and password.",
		Fix: "Re-enter the password.", OpenedAt: time.Date(2026, 3, 1, 10, 15, 2, 0, time.UTC), AffectedJobs: 1}
}

// The webhook body is a contract: exactly these keys.
func TestWebhookContract(t *testing.T) {
	m := FromIncident(incident.Opened, sampleIncident())
	b, _ := json.Marshal(m)
	var got map[string]map[string]any
	var top map[string]any
	json.Unmarshal(b, &top)
	json.Unmarshal(b, &got)
	if top["event"] != "incident.opened" {
		t.Fatalf("event %v", top["event"])
	}
	for _, k := range []string{"id", "destination", "device", "cause", "kyocera_code", "summary", "fix", "opened_at", "closed_at"} {
		if _, ok := got["incident"][k]; !ok {
			t.Errorf("incident.%s missing in %s", k, b)
		}
	}
	if got["incident"]["closed_at"] != nil {
		t.Errorf("closed_at of an open incident: %v", got["incident"]["closed_at"])
	}
	inc := sampleIncident()
	inc.State, inc.ClosedAt = incident.StateClosed, inc.OpenedAt.Add(4*time.Hour)
	b, _ = json.Marshal(FromIncident(incident.Closed, inc))
	if !strings.Contains(string(b), `"event":"incident.closed"`) || !strings.Contains(string(b), `"closed_at":"2026-03-01T14:15:02Z"`) {
		t.Fatalf("closed: %s", b)
	}
}

func TestWebhookRetries(t *testing.T) {
	var mu sync.Mutex
	var bodies []Message
	var secrets []string
	fails := 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var m Message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
			http.Error(w, "bad", 400)
			return
		}
		bodies = append(bodies, m)
		secrets = append(secrets, r.Header.Get("X-Hook-Token"))
		if fails > 0 {
			fails--
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	w, err := NewWebhook(WebhookConfig{URL: srv.URL + "/hook?token=s3cret-in-url", Secret: scanwarden.NewSecret("hdr-secret"),
		SecretHeader: "X-Hook-Token", Attempts: 4, Backoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	w.sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	n, err := w.Send(context.Background(), FromIncident(incident.Opened, sampleIncident()))
	if err != nil || n != 3 {
		t.Fatalf("attempts %d err %v", n, err)
	}
	if len(waits) != 2 || waits[0] != 10*time.Millisecond || waits[1] != 20*time.Millisecond {
		t.Fatalf("back-off %v", waits)
	}
	if len(bodies) != 3 || bodies[2].Event != EventOpened || bodies[2].Incident.Cause != "bad-credentials" || secrets[2] != "hdr-secret" {
		t.Fatalf("received %+v %v", bodies, secrets)
	}

	// A refusal that will not change: no retry.
	fails = 0
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such hook", 404) }))
	defer bad.Close()
	w2, _ := NewWebhook(WebhookConfig{URL: bad.URL, Attempts: 5, Backoff: time.Millisecond, Timeout: time.Second})
	n, err = w2.Send(context.Background(), TestMessage(time.Now()))
	var se *StatusError
	if n != 1 || !errors.As(err, &se) || se.Code != 404 {
		t.Fatalf("404: attempts %d err %v", n, err)
	}
}

// A peer that is not there: every attempt fails, the error names the host
// but not the URL's query (it may carry a token), and a cancelled context
// ends the back-off at once.
func TestWebhookDownAndCancel(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	w, _ := NewWebhook(WebhookConfig{URL: "http://" + addr + "/h?token=TOPSECRET", Attempts: 3, Backoff: time.Millisecond, Timeout: time.Second})
	n, err := w.Send(context.Background(), TestMessage(time.Now()))
	if n != 3 || err == nil || strings.Contains(err.Error(), "TOPSECRET") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("attempts %d err %v", n, err)
	}
	w, _ = NewWebhook(WebhookConfig{URL: "http://" + addr + "/h", Attempts: 3, Backoff: time.Hour, Timeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	n, err = w.Send(ctx, TestMessage(time.Now()))
	if n != 1 || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline") || time.Since(start) > 5*time.Second {
		t.Fatalf("cancel: attempts %d err %v after %v", n, err, time.Since(start))
	}
}

func TestWebhookValidate(t *testing.T) {
	for _, c := range []WebhookConfig{
		{URL: "ftp://x/", Attempts: 1, Timeout: time.Second},
		{URL: "http:///nohost", Attempts: 1, Timeout: time.Second},
		{URL: "http://x/", Attempts: 0, Timeout: time.Second},
		{URL: "http://x/", Attempts: 1},
	} {
		if _, err := NewWebhook(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// smtpPeer is a real SMTP server (emersion/go-smtp) on loopback that keeps
// what it receives.
type smtpPeer struct {
	mu   sync.Mutex
	msgs []string
	rcpt []string
}

func (p *smtpPeer) NewSession(*smtp.Conn) (smtp.Session, error) { return &smtpSess{p: p}, nil }

type smtpSess struct{ p *smtpPeer }

func (s *smtpSess) Reset()                               {}
func (s *smtpSess) Logout() error                        { return nil }
func (s *smtpSess) Mail(string, *smtp.MailOptions) error { return nil }
func (s *smtpSess) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.p.mu.Lock()
	s.p.rcpt = append(s.p.rcpt, to)
	s.p.mu.Unlock()
	return nil
}
func (s *smtpSess) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	s.p.mu.Lock()
	s.p.msgs = append(s.p.msgs, string(b))
	s.p.mu.Unlock()
	return err
}

func TestMail(t *testing.T) {
	peer := &smtpPeer{}
	srv := smtp.NewServer(peer)
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	m, err := NewMail(MailConfig{Host: "127.0.0.1", Port: port, TLS: MailPlain, From: "scanwarden@office.test",
		To: []string{"admin@office.test", "it@office.test"}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Send(context.Background(), FromIncident(incident.Opened, sampleIncident())); err != nil {
		t.Fatal(err)
	}
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if len(peer.msgs) != 1 || len(peer.rcpt) != 2 {
		t.Fatalf("got %d mails to %v", len(peer.msgs), peer.rcpt)
	}
	got := peer.msgs[0]
	for _, want := range []string{"Subject: [scanwarden] reception opened: bad-credentials (panel 1102)", "Re-enter the password.", "MFP02"} {
		if !strings.Contains(got, want) {
			t.Errorf("mail lacks %q:\n%s", want, got)
		}
	}

	// A relay that is not there: an error naming it, not a hang.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	p2 := ln2.Addr().(*net.TCPAddr).Port
	ln2.Close()
	m2, _ := NewMail(MailConfig{Host: "127.0.0.1", Port: p2, TLS: MailPlain, From: "a@b.test", To: []string{"c@d.test"}, Timeout: 2 * time.Second})
	if _, err := m2.Send(context.Background(), TestMessage(time.Now())); err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("down relay: %v", err)
	}
}

func TestMailValidate(t *testing.T) {
	ok := MailConfig{Host: "h", Port: 25, TLS: MailPlain, From: "a@b", To: []string{"c@d"}, Timeout: time.Second}
	if _, err := NewMail(ok); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*MailConfig){
		"smtp_host":          func(c *MailConfig) { c.Host = "" },
		"smtp_port":          func(c *MailConfig) { c.Port = 0 },
		"smtp_tls":           func(c *MailConfig) { c.TLS = "ssl3" },
		"smtp_from":          func(c *MailConfig) { c.From = "" },
		"mail_to":            func(c *MailConfig) { c.To = nil },
		"smtp_password_file": func(c *MailConfig) { c.User = "u" },
	} {
		c := ok
		mod(&c)
		if _, err := NewMail(c); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNotifierKeepsGoing(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	bad, _ := NewWebhook(WebhookConfig{URL: "http://127.0.0.1:1/", Attempts: 1, Timeout: time.Second})
	good, _ := NewWebhook(WebhookConfig{URL: srv.URL, Attempts: 1, Timeout: time.Second})
	n := New(bad, nil, good)
	outs := n.Send(context.Background(), TestMessage(time.Now()))
	if len(outs) != 2 || outs[0].Err == nil || outs[1].Err != nil || hits != 1 {
		t.Fatalf("%+v hits %d", outs, hits)
	}
	if err := Err(outs); err == nil || !strings.HasPrefix(err.Error(), "webhook: ") {
		t.Fatalf("Err: %v", err)
	}
}
