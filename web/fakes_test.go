package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/bridge"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/summary"
)

// memAuth is an in-memory AuthStore (the store's own tests cover SQL).
type memAuth struct {
	mu       sync.Mutex
	hash     string
	sessions map[string]scanwarden.Session
	tokens   map[string]scanwarden.APIToken
	audit    []scanwarden.AuditEntry
}

func newMemAuth() *memAuth {
	return &memAuth{sessions: map[string]scanwarden.Session{}, tokens: map[string]scanwarden.APIToken{}}
}

func (m *memAuth) AdminPassword(context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hash, nil
}
func (m *memAuth) SetAdminPassword(_ context.Context, h string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
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
func (m *memAuth) TouchSession(_ context.Context, h string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sessions[h]; ok {
		s.LastSeen = at
		m.sessions[h] = s
	}
	return nil
}
func (m *memAuth) DeleteSession(_ context.Context, h string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, h)
	return nil
}
func (m *memAuth) DeleteSessions(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.sessions)
	return nil
}
func (m *memAuth) DeleteTokens(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.tokens)
	clear(m.tokens)
	return n, nil
}
func (m *memAuth) CreateToken(_ context.Context, t scanwarden.APIToken) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.tokens[t.Name]; dup {
		return fmt.Errorf("duplicate")
	}
	m.tokens[t.Name] = t
	return nil
}
func (m *memAuth) TokenByHash(_ context.Context, h string) (scanwarden.APIToken, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.tokens {
		if t.Hash == h {
			return t, true, nil
		}
	}
	return scanwarden.APIToken{}, false, nil
}
func (m *memAuth) TouchToken(_ context.Context, name string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tokens[name]
	t.LastUsed = at
	m.tokens[name] = t
	return nil
}
func (m *memAuth) Tokens(context.Context) ([]scanwarden.APIToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []scanwarden.APIToken
	for _, t := range m.tokens {
		out = append(out, t)
	}
	return out, nil
}
func (m *memAuth) DeleteToken(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tokens, name)
	return nil
}
func (m *memAuth) AddAudit(_ context.Context, e scanwarden.AuditEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.ID = int64(len(m.audit) + 1)
	m.audit = append(m.audit, e)
	return nil
}
func (m *memAuth) Audit(_ context.Context, limit int) ([]scanwarden.AuditEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []scanwarden.AuditEntry
	for i := len(m.audit) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, m.audit[i])
	}
	return out, nil
}

// fakeFleet is a struct-of-funcs fake over fixed data.
type fakeFleet struct {
	devices      []registry.DeviceView
	destinations []registry.DestinationView
	history      map[string][]registry.ReportView
	profiles     map[string]*registry.Device // SetDeviceProfile's
}

func (f *fakeFleet) Devices(context.Context) ([]registry.DeviceView, error) { return f.devices, nil }
func (f *fakeFleet) Device(_ context.Context, name string) (registry.DeviceView, error) {
	for _, d := range f.devices {
		if d.Name == name {
			for _, x := range f.destinations {
				if x.Device == name {
					d.Destinations = append(d.Destinations, x)
				}
			}
			return d, nil
		}
	}
	return registry.DeviceView{}, ErrNotFound
}
func (f *fakeFleet) Destinations(context.Context) ([]registry.DestinationView, error) {
	return f.destinations, nil
}
func (f *fakeFleet) Destination(_ context.Context, name string) (registry.DestinationView, error) {
	for _, d := range f.destinations {
		if d.Name == name {
			return d, nil
		}
	}
	return registry.DestinationView{}, ErrNotFound
}

// SetDeviceProfile implements ProfileEditor over the registry's own
// profile rules (what the daemon stores), keeping the admin's settings.
func (f *fakeFleet) SetDeviceProfile(_ context.Context, name string, set map[registry.ProfileField]string, clear []registry.ProfileField) error {
	for i := range f.devices {
		if f.devices[i].Name != name {
			continue
		}
		if f.profiles == nil {
			f.profiles = map[string]*registry.Device{}
		}
		d := f.profiles[name]
		if d == nil {
			d = &registry.Device{Name: name}
			f.profiles[name] = d
		}
		if d.Profile.Admin == nil {
			d.Profile.Admin = map[registry.ProfileField]string{}
		}
		for _, k := range clear {
			delete(d.Profile.Admin, k)
		}
		if err := d.ClientWith(set).Validate(); err != nil {
			return err
		}
		for k, v := range set {
			d.Profile.Admin[k] = v
		}
		p := d.ProfileJSON()
		f.devices[i].SMBProfile = &p
		return nil
	}
	return ErrNotFound
}

// SetAuth implements Editor.
func (f *fakeFleet) SetAuth(_ context.Context, name string, auth scanwarden.Auth) error {
	for i := range f.destinations {
		if f.destinations[i].Name == name {
			f.destinations[i].Auth = string(auth)
			return nil
		}
	}
	return ErrNotFound
}

// SetBridged bridges a destination as the daemon does: since now, its
// bridge's health made of a share serving and nothing delivered yet.
func (f *fakeFleet) SetBridged(_ context.Context, name string, on bool) (bool, error) {
	for i := range f.destinations {
		d := &f.destinations[i]
		if d.Name != name {
			continue
		}
		if (d.Bridge != nil) == on {
			return false, nil
		}
		d.BridgedAt, d.Bridge = nil, nil
		if on {
			at := time.Now()
			d.BridgedAt = &at
			d.Bridge = &bridge.Health{State: bridge.StateOK, ShareServing: true, ShareDetail: "logged on and listed", OwnCheck: scanwarden.CauseOK}
		}
		return true, nil
	}
	return false, ErrNotFound
}

func (f *fakeFleet) History(_ context.Context, name string, limit int) ([]registry.ReportView, error) {
	h := f.history[name]
	if len(h) > limit {
		h = h[:limit]
	}
	return h, nil
}

// funcChecker runs fn as the check.
type funcChecker func(ctx context.Context, dest string, progress func(smbcheck.Step)) (smbcheck.Report, error)

func (f funcChecker) Check(ctx context.Context, dest string, progress func(smbcheck.Step)) (smbcheck.Report, error) {
	return f(ctx, dest, progress)
}

type fakeIncidents struct{ list []incident.View }

func (f *fakeIncidents) Incidents(_ context.Context, state string, limit int) ([]incident.View, error) {
	var out []incident.View
	for _, in := range f.list {
		if state == "" || in.State == state {
			in.Timeline = nil
			out = append(out, in)
		}
	}
	return out, nil
}
func (f *fakeIncidents) Incident(_ context.Context, id int64) (incident.View, error) {
	for _, in := range f.list {
		if in.ID == id {
			return in, nil
		}
	}
	return incident.View{}, ErrNotFound
}

type fakeEvents struct{ list []incident.EventView }

func (f *fakeEvents) Events(_ context.Context, q EventQuery) ([]incident.EventView, error) {
	var out []incident.EventView
	for _, e := range f.list {
		if q.Which == EventsVerified && e.Unverified || q.Which == EventsUnverified && !e.Unverified {
			continue
		}
		if (q.Device == "" || e.Device == q.Device) && len(out) < q.Limit {
			out = append(out, e)
		}
	}
	return out, nil
}

type fakeReceiver struct {
	mu        sync.Mutex
	scans     []receiver.ScanView
	content   map[int64][]byte
	delivered []int64
	forced    []int64
}

func (f *fakeReceiver) Status(context.Context) (receiver.StatusView, error) {
	c := map[string]int{}
	for _, s := range f.scans {
		c[s.State]++
	}
	return receiver.StatusView{Enabled: true, Counts: c, Allow: []string{"10.1.2.7/32", "10.1.3.0/24"}, Warnings: []string{"SMB1 is on for old firmware"}}, nil
}
func (f *fakeReceiver) Scans(_ context.Context, state string, limit int) ([]receiver.ScanView, error) {
	var out []receiver.ScanView
	for _, s := range f.scans {
		if (state == "" || s.State == state) && len(out) < limit {
			out = append(out, s)
		}
	}
	return out, nil
}
func (f *fakeReceiver) Scan(_ context.Context, id int64) (receiver.ScanView, error) {
	for _, s := range f.scans {
		if s.ID == id {
			return s, nil
		}
	}
	return receiver.ScanView{}, ErrNotFound
}
func (f *fakeReceiver) Open(_ context.Context, id int64) (io.ReadCloser, error) {
	b, ok := f.content[id]
	if !ok {
		return nil, ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}
func (f *fakeReceiver) Deliver(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delivered = append(f.delivered, id)
	return nil
}
func (f *fakeReceiver) Force(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forced = append(f.forced, id)
	return nil
}

// fakeImporter "parses" a file of lines NAME,//HOST/SHARE/PATH,USER and adds
// destinations to the fleet when not a dry run.
type fakeImporter struct {
	fleet *fakeFleet
	calls []bool
}

func (f *fakeImporter) Import(_ context.Context, device string, data []byte, dryRun bool) (registry.ImportView, error) {
	f.calls = append(f.calls, dryRun)
	res := registry.ImportView{Device: device, DryRun: dryRun}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		p := strings.Split(line, ",")
		if len(p) != 3 {
			return registry.ImportView{}, fmt.Errorf("line %q: want NAME,TARGET,USER", line)
		}
		res.Entries = append(res.Entries, registry.ImportRowView{Name: p[0], DisplayName: p[0], Target: p[1], User: p[2], Action: "add"})
		if !dryRun {
			u, _ := url.Parse("smb:" + p[1])
			share, path, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
			f.fleet.destinations = append(f.fleet.destinations, registry.DestinationView{Name: p[0], Device: device, DisplayName: p[0],
				Host: u.Hostname(), Port: 445, Share: share, Path: path, User: p[2], PasswordSet: true, Source: "imported"})
		}
	}
	return res, nil
}

type fakeSettings struct {
	mu     sync.Mutex
	values map[string]string // section.key
	secret map[string]bool
}

func (f *fakeSettings) Settings(context.Context) ([]config.SettingsSection, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	field := func(sec, key, label string, secret bool) config.SettingField {
		v := f.values[sec+"."+key]
		if secret {
			return config.SettingField{Key: key, Label: label, Secret: true, Set: v != ""}
		}
		return config.SettingField{Key: key, Label: label, Value: v}
	}
	return []config.SettingsSection{
		{Name: "ad", Title: "Active Directory", Fields: []config.SettingField{field("ad", "url", "URL", false), field("ad", "bind_user", "Bind user", false),
			field("ad", "password", "Bind password", true)}},
		{Name: "notify", Title: "Notifications", Fields: []config.SettingField{field("notify", "webhook_url", "Webhook URL", false)},
			Tests: []string{"webhook"}},
	}, nil
}
func (f *fakeSettings) Set(_ context.Context, section string, values map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, v := range values {
		if k == "url" && !strings.HasPrefix(v, "ldap") {
			return BadSetting(section, k, v, "must start with ldap:// or ldaps://")
		}
	}
	for k, v := range values {
		f.values[section+"."+k] = v
	}
	return nil
}
func (f *fakeSettings) SendTest(_ context.Context, ch string) (string, error) {
	return "posted to the webhook: 204", nil
}

// --- the test site ---------------------------------------------------------

const hostile = `<img src=x onerror=alert(1)>`

// site is a Server over fakes, served by httptest, with a fixed password.
type site struct {
	t     *testing.T
	srv   *Server
	ts    *httptest.Server
	auth  *memAuth
	fleet *fakeFleet
	recv  *fakeReceiver
	imp   *fakeImporter
	sets  *fakeSettings
	clock *fakeClock
	check funcChecker
	// checkAll counts "Check all now" requests.
	checkAll *fakeCheckAll
}

// fakeSummary builds the headline over the fake fleet, incidents and
// receiver, as the daemon does over the store.
type fakeSummary struct{ s *site }

func (f fakeSummary) Summary(ctx context.Context) (summary.Summary, error) {
	in := summary.Input{Now: f.s.clock.Now()}
	var incs []incident.View
	if in := f.s.srv.cfg.Incidents; in != nil {
		incs, _ = in.Incidents(ctx, "open", 100)
	}
	opened := map[string]time.Time{}
	for _, i := range incs {
		opened[i.Destination] = i.OpenedAt
		in.OpenIncidents = append(in.OpenIncidents, summary.Incident{ID: i.ID, Destination: i.Destination, Cause: i.Cause, OpenedAt: i.OpenedAt})
	}
	held := map[string]int{}
	for _, sc := range f.s.recv.scans {
		if sc.State == string(receiver.Held) {
			held[sc.Destination]++
			in.Held++
		}
	}
	for _, d := range f.s.fleet.destinations {
		sd := summary.Destination{Name: d.Name, Held: held[d.Name], FailingSince: opened[d.Name]}
		if d.Last != nil {
			sd.Checked, sd.Cause, sd.LastCheck = true, d.Last.Verdict.Cause, d.Last.At
		}
		in.Destinations = append(in.Destinations, sd)
	}
	return summary.Build(in), nil
}

type fakeCheckAll struct {
	mu sync.Mutex
	n  int
}

func (f *fakeCheckAll) CheckAll(context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return 2, nil
}

func (f *fakeCheckAll) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

const testPassword = "correct horse battery"

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func sampleReport(dest string) smbcheck.Report {
	return smbcheck.Report{
		Target:  scanwarden.TargetInfo{Host: "fs1.kyolab.test", Port: 445, Share: "scans", Path: "m1", User: `KYOLAB\scan`, Workstation: "MFP01"},
		Started: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
		Steps: []smbcheck.Step{
			{ID: "name", Status: smbcheck.StatusOK, Detail: "fs1.kyolab.test is 10.77.0.10", Evidence: smbcheck.Evidence{"addrs": []string{"10.77.0.10"}}, Duration: 3 * time.Millisecond},
			{ID: "tcp", Status: smbcheck.StatusOK, Detail: "port 445 answers", Duration: 1 * time.Millisecond},
			{ID: "session", Status: smbcheck.StatusFail, Detail: "logon refused: " + hostile, Cause: scanwarden.CauseBadCredentials,
				Evidence: smbcheck.Evidence{"nt_status": "STATUS_LOGON_FAILURE"}, Duration: 40 * time.Millisecond},
		},
		Verdict: smbcheck.Verdict{Cause: scanwarden.CauseBadCredentials, KyoceraCode: "1102", Summary: "The server refused the password.",
			Fix: "Store the right password in the address book."},
	}
}

func newSite(t *testing.T, mod ...func(*Config)) *site {
	t.Helper()
	s := &site{t: t, checkAll: &fakeCheckAll{}, auth: newMemAuth(), clock: &fakeClock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}}
	rep := sampleReport("reception")
	last := &registry.ReportView{At: s.clock.t.Add(-5 * time.Minute), Verdict: rep.Verdict, Trigger: "schedule"}
	s.fleet = &fakeFleet{
		devices: []registry.DeviceView{
			{Name: "mfp01", Address: "10.77.0.50:161", SysName: "MFP01", Model: "TASKalfa 2553ci", Serial: "W4X0A20001", Reachable: true, Status: "idle"},
			{Name: "evil", Address: "10.77.0.51:161", SysName: hostile, Model: `"><script>alert(2)</script>`, Serial: "X'Y", Reachable: true},
		},
		destinations: []registry.DestinationView{
			{Name: "reception", Device: "mfp01", DisplayName: hostile, Host: "fs1.kyolab.test", Port: 445, Share: "scans", Path: "m1",
				User: `KYOLAB\scan`, Workstation: "MFP01", PasswordSet: true, Source: "imported", Last: last, Report: &rep, OpenIncident: 7},
			{Name: "accounts", Device: "evil", Host: "fs1.kyolab.test", Port: 445, Share: "finance", User: "acc", Source: "added"},
		},
		history: map[string][]registry.ReportView{"reception": {*last}},
	}
	s.recv = &fakeReceiver{
		scans: []receiver.ScanView{
			{ID: 1, Destination: "reception", Name: hostile + ".pdf", Size: 11, State: string(receiver.Held), ReceivedAt: s.clock.t},
			{ID: 2, Destination: "reception", Name: "part.pdf", Size: 5, State: string(receiver.Incomplete), ReceivedAt: s.clock.t},
			{ID: 3, Destination: "reception", Name: "done.pdf", Size: 5, State: string(receiver.Delivered), ReceivedAt: s.clock.t, DeliveredAt: s.clock.t},
		},
		content: map[int64][]byte{1: []byte("%PDF-1.4 hi"), 2: []byte("%PDF-")},
	}
	s.imp = &fakeImporter{fleet: s.fleet}
	s.sets = &fakeSettings{values: map[string]string{"ad.url": "ldaps://dc1.kyolab.test", "ad.password": "s3cret-bind-pw"}, secret: map[string]bool{}}
	opened := s.clock.t.Add(-time.Hour)
	s.check = func(ctx context.Context, dest string, progress func(smbcheck.Step)) (smbcheck.Report, error) {
		if _, err := s.fleet.Destination(ctx, dest); err != nil {
			return smbcheck.Report{}, err
		}
		r := sampleReport(dest)
		for _, st := range r.Steps {
			progress(st)
		}
		return r, nil
	}
	cfg := Config{
		Auth:  s.auth,
		Fleet: s.fleet,
		Checker: funcChecker(func(ctx context.Context, dest string, p func(smbcheck.Step)) (smbcheck.Report, error) {
			return s.check(ctx, dest, p)
		}),
		Incidents: &fakeIncidents{list: []incident.View{{ID: 7, Destination: "reception", Device: "mfp01", State: "open",
			Cause: scanwarden.CauseBadCredentials, KyoceraCode: "1102", Summary: "The server refused the password.", OpenedAt: opened,
			UpdatedAt: opened, AffectedJobs: 2, Timeline: []incident.ViewEntry{{At: opened, Kind: "event", Text: "1102 from " + hostile}}}}},
		Events: &fakeEvents{list: []incident.EventView{{ID: 1, Device: "evil", FirstSeen: opened, LastSeen: opened, Count: 1, Code: "1102",
			Text: "Send error 1102 " + hostile, Destination: `\\fs1\scans`, Source: "job"}}},
		Receiver: s.recv,
		Importer: s.imp,
		Settings: s.sets,
		Editor:   s.fleet,
		Profiles: s.fleet,
		Status: statusFunc(func() []scanwarden.Fault {
			return []scanwarden.Fault{{Part: "snmp.trap", Message: "udp :162: address in use", Since: opened}}
		}),
		Summary:  fakeSummary{s},
		CheckAll: s.checkAll,
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "scanwarden_open_incidents 1\n")
		}),
		Now: s.clock.Now,
	}
	for _, m := range mod {
		m(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := HashPassword(testPassword)
	if err != nil {
		t.Fatal(err)
	}
	s.auth.hash = h
	s.srv = srv
	s.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(func() { s.ts.Close(); srv.Close() })
	return s
}

type statusFunc func() []scanwarden.Fault

func (f statusFunc) Faults(context.Context) ([]scanwarden.Fault, error) { return f(), nil }

// anon is a client that follows no redirects and keeps no cookies.
func (s *site) anon() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login returns a client with a session cookie (following no redirects).
func (s *site) login() *http.Client {
	s.t.Helper()
	return s.loginWith(testPassword)
}

// loginWith logs in with password.
func (s *site) loginWith(password string) *http.Client {
	s.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(s.ts.URL+"/login", url.Values{"user": {"admin"}, "password": {password}, "next": {"/"}})
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		s.t.Fatalf("login: %s", resp.Status)
	}
	return c
}

func (s *site) get(c *http.Client, path string) (*http.Response, string) {
	s.t.Helper()
	resp, err := c.Get(s.ts.URL + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (s *site) post(c *http.Client, path string, form url.Values, hdr map[string]string) (*http.Response, string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}
