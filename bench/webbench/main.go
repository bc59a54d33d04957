// Command webbench serves the web admin with the data (300
// destinations with reports, 100 devices, 100k events, 10k scans) and prints
// its URL and a session cookie, for bench/web.sh to point wrk at the
// dashboard and a destination page. -daemon DIR fills a real data dir and
// runs the whole daemon (the store's queries included); without it, web
// runs over the same data held in memory (templates, auth, headers only).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/web"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address")
	dests := flag.Int("destinations", 300, "destinations")
	devices := flag.Int("devices", 100, "devices")
	events := flag.Int("events", 100000, "events")
	scans := flag.Int("scans", 10000, "scans")
	daemonDir := flag.String("daemon", "", "fill a data dir here and run the whole daemon on it (else: web over memory)")
	flag.Parse()
	if *daemonDir != "" {
		runDaemon(*daemonDir, *devices, *dests, *events, *scans)
		return
	}

	now := time.Now()
	f := &fleet{byName: map[string]registry.DestinationView{}, devByName: map[string]registry.DeviceView{}}
	for i := 0; i < *devices; i++ {
		d := registry.DeviceView{Name: fmt.Sprintf("mfp%03d", i), Address: fmt.Sprintf("10.1.%d.%d:161", i/250, i%250+1),
			SysName: fmt.Sprintf("MFP%03d", i), Model: "TASKalfa 3253ci", Serial: fmt.Sprintf("W4X0A%05d", i), Reachable: i%10 != 0,
			Status: "idle", LastSeen: now.Add(-time.Minute)}
		f.devices = append(f.devices, d)
		f.devByName[d.Name] = d
	}
	for i := 0; i < *dests; i++ {
		rep := report(i, now)
		d := registry.DestinationView{Name: fmt.Sprintf("dest-%03d", i), Device: f.devices[i%*devices].Name, DisplayName: fmt.Sprintf("User %d", i),
			Host: fmt.Sprintf("fs%d.example.test", i%7), Port: 445, Share: "scans", Path: fmt.Sprintf("users/u%d", i), User: fmt.Sprintf(`EXAMPLE\u%d`, i),
			Workstation: "MFP", PasswordSet: true, Source: "imported",
			Last: &registry.ReportView{At: rep.Started, Verdict: rep.Verdict, Trigger: "schedule"}, Report: &rep}
		f.dests = append(f.dests, d)
		f.byName[d.Name] = d
	}
	ev := &eventLog{byDevice: map[string][]incident.EventView{}}
	for i := 0; i < *events; i++ {
		e := incident.EventView{ID: int64(i + 1), Device: f.devices[i%*devices].Name, FirstSeen: now.Add(-time.Duration(*events-i) * time.Second),
			Count: 1, Code: "1102", Text: "Send error 1102", Destination: `\\fs1\scans`, Source: "job"}
		e.LastSeen = e.FirstSeen
		ev.all = append(ev.all, e)
		ev.byDevice[e.Device] = append(ev.byDevice[e.Device], e)
	}
	rc := &memReceiver{}
	states := []string{string(receiver.Delivered), string(receiver.Delivered), string(receiver.Delivered), string(receiver.Held), string(receiver.Incomplete)}
	for i := 0; i < *scans; i++ {
		rc.scans = append(rc.scans, receiver.ScanView{ID: int64(i + 1), Destination: f.dests[i%*dests].Name, Name: fmt.Sprintf("doc%05d.pdf", i),
			Size: 200 << 10, State: states[i%len(states)], ReceivedAt: now.Add(-time.Duration(i) * time.Minute)})
	}
	auth := &memAuth{sessions: map[string]scanwarden.Session{}}
	srv, err := web.New(web.Config{Auth: auth, Fleet: f, Events: ev, Receiver: rc, Incidents: incidents{}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := web.SetPassword(context.Background(), auth, "benchmark password", false); err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(ln, srv.Handler())
	base := "http://" + ln.Addr().String()
	serveLoggedIn(base)
}

// serveLoggedIn logs in as the admin, prints the base URL and the session
// cookie for wrk, and serves until killed.
func serveLoggedIn(base string) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(base+"/login", url.Values{"user": {"admin"}, "password": {"benchmark password"}})
	if err != nil || len(resp.Cookies()) == 0 {
		log.Fatalf("login: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	fmt.Printf("%s %s=%s\n", base, resp.Cookies()[0].Name, resp.Cookies()[0].Value)
	os.Stdout.Sync()
	select {}
}

func report(i int, now time.Time) smbcheck.Report {
	st := []smbcheck.Step{
		{ID: "name", Status: smbcheck.StatusOK, Detail: "resolves", Evidence: smbcheck.Evidence{"addrs": []string{"10.0.0.1"}}, Duration: 2 * time.Millisecond},
		{ID: "tcp", Status: smbcheck.StatusOK, Detail: "port 445 answers", Duration: time.Millisecond},
		{ID: "negotiate", Status: smbcheck.StatusOK, Detail: "SMB 3.1.1", Evidence: smbcheck.Evidence{"dialect": "3.1.1"}, Duration: 3 * time.Millisecond},
		{ID: "session", Status: smbcheck.StatusOK, Detail: "logged on", Duration: 20 * time.Millisecond},
		{ID: "tree", Status: smbcheck.StatusOK, Detail: "share opens", Duration: 2 * time.Millisecond},
		{ID: "path", Status: smbcheck.StatusOK, Detail: "folder exists", Duration: 2 * time.Millisecond},
		{ID: "write", Status: smbcheck.StatusOK, Detail: "wrote 8 KiB", Duration: 9 * time.Millisecond},
	}
	v := smbcheck.Verdict{Cause: scanwarden.CauseOK, Summary: "The destination works."}
	if i%9 == 0 {
		st[3] = smbcheck.Step{ID: "session", Status: smbcheck.StatusFail, Detail: "logon refused", Cause: scanwarden.CauseBadCredentials, Duration: 30 * time.Millisecond}
		st = st[:4]
		v = smbcheck.Verdict{Cause: scanwarden.CauseBadCredentials, KyoceraCode: "1102", Summary: "The server refused the password.", Fix: "Store the right password."}
	}
	return smbcheck.Report{Started: now.Add(-time.Duration(i) * time.Minute), Steps: st, Verdict: v}
}

type fleet struct {
	devices   []registry.DeviceView
	devByName map[string]registry.DeviceView
	dests     []registry.DestinationView
	byName    map[string]registry.DestinationView
}

func (f *fleet) Devices(context.Context) ([]registry.DeviceView, error) { return f.devices, nil }
func (f *fleet) Device(_ context.Context, n string) (registry.DeviceView, error) {
	d, ok := f.devByName[n]
	if !ok {
		return d, web.ErrNotFound
	}
	return d, nil
}
func (f *fleet) Destinations(context.Context) ([]registry.DestinationView, error) {
	out := make([]registry.DestinationView, len(f.dests))
	for i, d := range f.dests {
		d.Report = nil
		out[i] = d
	}
	return out, nil
}
func (f *fleet) Destination(_ context.Context, n string) (registry.DestinationView, error) {
	d, ok := f.byName[n]
	if !ok {
		return d, web.ErrNotFound
	}
	return d, nil
}
func (f *fleet) History(_ context.Context, n string, limit int) ([]registry.ReportView, error) {
	d := f.byName[n]
	out := make([]registry.ReportView, 0, limit)
	for i := 0; i < limit; i++ {
		r := *d.Last
		r.At = r.At.Add(-time.Duration(i) * 15 * time.Minute)
		out = append(out, r)
	}
	return out, nil
}

type eventLog struct {
	all      []incident.EventView
	byDevice map[string][]incident.EventView
}

func (e *eventLog) Events(_ context.Context, q web.EventQuery) ([]incident.EventView, error) {
	src := e.all
	if q.Device != "" {
		src = e.byDevice[q.Device]
	}
	out := make([]incident.EventView, 0, q.Limit)
	for i := len(src) - 1; i >= 0 && len(out) < q.Limit; i-- {
		if q.Which == web.EventsUnverified && !src[i].Unverified || q.Which == web.EventsVerified && src[i].Unverified {
			continue
		}
		out = append(out, src[i])
	}
	return out, nil
}

type memReceiver struct{ scans []receiver.ScanView }

func (r *memReceiver) Status(context.Context) (receiver.StatusView, error) {
	c := map[string]int{}
	for _, s := range r.scans {
		c[s.State]++
	}
	return receiver.StatusView{Enabled: true, Counts: c}, nil
}
func (r *memReceiver) Scans(_ context.Context, state string, limit int) ([]receiver.ScanView, error) {
	var out []receiver.ScanView
	for _, s := range r.scans {
		if (state == "" || s.State == state) && len(out) < limit {
			out = append(out, s)
		}
	}
	return out, nil
}
func (r *memReceiver) Scan(_ context.Context, id int64) (receiver.ScanView, error) {
	return r.scans[id-1], nil
}
func (r *memReceiver) Open(context.Context, int64) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("")), nil
}
func (r *memReceiver) Deliver(context.Context, int64) error { return nil }
func (r *memReceiver) Force(context.Context, int64) error   { return nil }

type incidents struct{}

func (incidents) Incidents(context.Context, string, int) ([]incident.View, error) { return nil, nil }
func (incidents) Incident(context.Context, int64) (incident.View, error) {
	return incident.View{}, web.ErrNotFound
}

// memAuth keeps sessions in memory.
type memAuth struct {
	mu       sync.Mutex
	hash     string
	sessions map[string]scanwarden.Session
}

func (m *memAuth) AdminPassword(context.Context) (string, error) { return m.hash, nil }
func (m *memAuth) SetAdminPassword(_ context.Context, h string) error {
	m.hash = h
	return nil
}
func (m *memAuth) CreateSession(_ context.Context, s scanwarden.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions[s.IDHash] = s
	return nil
}
func (m *memAuth) Session(_ context.Context, h string) (scanwarden.Session, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[h]
	return s, ok, nil
}
func (m *memAuth) TouchSession(context.Context, string, time.Time) error  { return nil }
func (m *memAuth) DeleteSession(context.Context, string) error            { return nil }
func (m *memAuth) DeleteSessions(context.Context) error                   { return nil }
func (m *memAuth) CreateToken(context.Context, scanwarden.APIToken) error { return nil }
func (m *memAuth) TokenByHash(context.Context, string) (scanwarden.APIToken, bool, error) {
	return scanwarden.APIToken{}, false, nil
}
func (m *memAuth) TouchToken(context.Context, string, time.Time) error         { return nil }
func (m *memAuth) Tokens(context.Context) ([]scanwarden.APIToken, error)       { return nil, nil }
func (m *memAuth) DeleteToken(context.Context, string) error                   { return nil }
func (m *memAuth) DeleteTokens(context.Context) (int, error)                   { return 0, nil }
func (m *memAuth) AddAudit(context.Context, scanwarden.AuditEntry) error       { return nil }
func (m *memAuth) Audit(context.Context, int) ([]scanwarden.AuditEntry, error) { return nil, nil }
