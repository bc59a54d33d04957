// Package web serves scanwarden's admin pages, its JSON API, the live stream
// of a running check (SSE), /metrics and /healthz.
//
// It is one http.Handler over small interfaces the daemon implements
// (backend.go); it never imports the store, the daemon or the CLI. Pages are
// html/template views from an embedded file system, every one parsed at
// start-up and rendered into a buffer before a byte is sent. Every route but
// /login, /setup, /healthz and /static/ needs the admin's session (pages) or
// a session or bearer token (API, /metrics); every state-changing request is
// refused when it comes from another origin.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"strings"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
)

// Config is what the server is built from. Auth is required; a nil backend
// makes its pages say the part is not running.
type Config struct {
	Auth      AuthStore
	Fleet     Fleet
	Checker   Checker
	Incidents Incidents
	Events    Events
	Receiver  Receiver
	Importer  Importer
	Settings  Settings
	Status    Status
	// Summary is the overview's headline (also GET /api/v1/summary);
	// CheckAll its "Check all now".
	Summary  Summarizer
	CheckAll AllChecker
	// Editor sets a destination's auth (nil: the page shows it read-only).
	Editor Editor
	// DeviceManager and DestinationManager add, change and remove devices
	// and destinations (nil: the lists are read-only).
	DeviceManager      DeviceManager
	DestinationManager DestinationManager
	// Profiles sets a device's SMB profile (nil: the page shows it
	// read-only).
	Profiles ProfileEditor
	// Warnings lists what will fail days ahead (GET /api/v1/warnings, the
	// destination page).
	Warnings WarningLister
	// Metrics is the Prometheus handler, mounted at /metrics behind auth.
	Metrics http.Handler

	// Hosts are the names and addresses the site answers to (the Host
	// header; a port is not compared): the box's and those the admin
	// listed. Loopback addresses and localhost always pass. nil: any name.
	Hosts []string

	// TLS says the site is reached over HTTPS only (plain HTTP at most
	// redirects there): the session cookie is Secure and __Host-, and every
	// answer carries Strict-Transport-Security.
	TLS bool
	// SessionIdle ends a session unused this long (default 2 h);
	// SessionMax ends any session this long after login (default 24 h).
	SessionIdle, SessionMax time.Duration
	// PageCache is how long a rendered read-only page is served again
	// (default 2 s; negative: never). Anything done through the site
	// drops the cache at once.
	PageCache time.Duration
	// LoginFailures password guesses per client address within
	// LoginWindow (default 5 per 15 min) lock that address out until the
	// window ends; LoginPrefixFailures (default 20) do the same for an
	// IPv6 /64. LoginPerMinute (default 30) bounds the guesses evaluated
	// per minute for the whole box; addresses the admin used in the last
	// 24 h are exempt from the /64 and the global limits. A guess counts
	// from before its hash is computed; only the right password gives it
	// back.
	LoginFailures       int
	LoginPrefixFailures int
	LoginPerMinute      int
	LoginWindow         time.Duration
	// BodyTimeout is how long a request's body may take to arrive once
	// its headers are in (default 30 s); bodies are also capped in size
	// (64 KiB, an address-book upload 9 MiB).
	BodyTimeout time.Duration

	// SetupDone, when set, is called once the setup link has set the admin
	// password (the daemon removes the file that held the link).
	SetupDone func()

	// Authenticated, when set, is told the client address of every request
	// that carries a live session or a valid API token (the daemon keeps
	// connection slots in reserve for those addresses).
	Authenticated func(addr netip.Addr)

	Logger *slog.Logger
	Now    func() time.Time
}

// Server is the web server. Handler gives its http.Handler.
type Server struct {
	*base
	cfg      Config
	gate     *gate
	runs     *runs
	imports  *pendingImports
	patterns *[]string // every registered pattern
	handler  http.Handler
}

// New builds the server and parses every view; a template error is returned
// here, not at the first request.
func New(cfg Config) (*Server, error) {
	if cfg.Auth == nil {
		return nil, errors.New("web: Config.Auth is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = 2 * time.Hour
	}
	if cfg.SessionMax <= 0 {
		cfg.SessionMax = 24 * time.Hour
	}
	if cfg.LoginFailures <= 0 {
		cfg.LoginFailures = 5
	}
	if cfg.LoginPrefixFailures <= 0 {
		cfg.LoginPrefixFailures = 20
	}
	if cfg.LoginPerMinute <= 0 {
		cfg.LoginPerMinute = 30
	}
	if cfg.PageCache == 0 {
		cfg.PageCache = 2 * time.Second
	}
	if cfg.LoginWindow <= 0 {
		cfg.LoginWindow = 15 * time.Minute
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = 30 * time.Second
	}
	v, err := parseViews()
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	b := &base{log: cfg.Logger.With("component", "web"), now: cfg.Now, views: v, cache: newPageCache(cfg.PageCache, cfg.Now),
		auth: cfg.Auth}
	s := &Server{
		base: b,
		cfg:  cfg,
		gate: &gate{base: b, tls: cfg.TLS, sessionIdle: cfg.SessionIdle, sessionMax: cfg.SessionMax, onAuthenticated: cfg.Authenticated,
			limiter: newLimiter(limits{perAddr: cfg.LoginFailures, perPrefix: cfg.LoginPrefixFailures,
				perMinute: cfg.LoginPerMinute, window: cfg.LoginWindow}, cfg.Now)},
		runs:    newRuns(cfg.Now),
		imports: newPendingImports(cfg.Now),
	}
	s.runs.done = s.cache.invalidate
	s.handler = s.routes()
	return s, nil
}

// Handler is the whole site.
func (s *Server) Handler() http.Handler { return s.handler }

// Close stops the checks started from the page and waits for them.
func (s *Server) Close() { s.runs.close() }

// SetupLink returns the one-time path (/setup?token=…) that sets the admin
// password, or "" when one is already set. The daemon prints it (with its
// own address in front) on the console and the journal. The link works
// once, for 24 hours, and only while no password is set; a new call makes a
// new link and voids the old.
func (s *Server) SetupLink(ctx context.Context) (string, error) { return s.gate.setupLink(ctx) }

func (s *Server) routes() http.Handler {
	mux := &recordingMux{ServeMux: http.NewServeMux()}
	s.patterns = &mux.patterns
	h := s.handlers()
	s.anonymousRoutes(mux, h)
	s.pageRoutes(mux, h)
	s.apiRoutes(mux, h)

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
	}))
	top := securityHeaders(s.cfg.TLS, s.limitBodies(cop.Handler(mux)))
	if s.cfg.Hosts != nil {
		top = hostGuard(s.cfg.Hosts, top)
	}
	return top
}

// anonymousRoutes: what needs no login.
func (s *Server) anonymousRoutes(mux *recordingMux, h handlers) {
	mux.Handle("GET /static/", staticHandler())
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /login", h.account.loginForm)
	mux.HandleFunc("POST /login", h.account.login)
	mux.HandleFunc("GET /setup", h.account.setupForm)
	mux.HandleFunc("POST /setup", h.account.setupSubmit)
}

// pageRoutes: the admin's pages, behind a session.
func (s *Server) pageRoutes(mux *recordingMux, h handlers) {
	page := func(pattern string, f func(http.ResponseWriter, *http.Request, actor)) {
		if strings.HasPrefix(pattern, "POST ") {
			f = s.invalidating(f)
		}
		mux.Handle(pattern, s.gate.requireSession(f))
	}
	// cached: read-only pages, served from the page cache.
	cached := func(pattern string, f func(http.ResponseWriter, *http.Request, actor)) {
		page(pattern, s.cache.wrap(f))
	}
	page("POST /logout", h.account.logout)
	cached("GET /{$}", h.overview.dashboard)
	page("POST /check-all", h.overview.checkAll)
	// "_new" and "_test" are never a name (ValidName starts with a
	// letter or digit).
	cached("GET /devices", h.devices.devicesPage)
	page("GET /devices/_new", h.devices.deviceNew)
	page("POST /devices", h.devices.deviceSave)
	cached("GET /devices/{name}", h.devices.devicePage)
	page("GET /devices/{name}/edit", h.devices.deviceEdit)
	page("POST /devices/{name}/edit", h.devices.deviceSave)
	page("GET /devices/{name}/remove", h.devices.deviceRemoveForm)
	page("POST /devices/{name}/remove", h.devices.deviceRemove)
	cached("GET /destinations", h.destinations.destinationsPage)
	page("GET /destinations/_new", h.forms.destinationNew)
	page("POST /destinations", h.forms.destinationSave)
	page("POST /destinations/_test", h.forms.destinationTry)
	cached("GET /destinations/{name}", h.destinations.destinationPage)
	page("GET /destinations/{name}/edit", h.forms.destinationEdit)
	page("POST /destinations/{name}/edit", h.forms.destinationSave)
	page("GET /destinations/{name}/remove", h.forms.destinationRemoveForm)
	page("POST /destinations/{name}/remove", h.forms.destinationRemove)
	page("POST /destinations/{name}/check", h.destinations.checkNow)
	page("POST /destinations/{name}/auth", h.destinations.destinationAuth)
	page("POST /destinations/{name}/bridge", h.destinations.destinationBridge)
	page("POST /devices/{name}/profile", h.devices.deviceProfile)
	page("GET /runs/{id}/events", h.destinations.runEvents)
	cached("GET /incidents", h.history.incidentsPage)
	cached("GET /incidents/{id}", h.history.incidentPage)
	cached("GET /events", h.history.eventsPage)
	cached("GET /receiver", h.receiver.receiverPage)
	page("GET /receiver/scans/{id}/download", h.receiver.scanDownload)
	page("POST /receiver/scans/{id}/deliver", h.receiver.scanDeliver)
	page("POST /receiver/scans/{id}/force", h.receiver.scanForce)
	page("GET /import", h.imports.importForm)
	page("POST /import", h.imports.importPreview)
	page("POST /import/confirm", h.imports.importConfirm)
	page("GET /settings", h.settings.settingsPage)
	page("POST /settings/{section}", h.settings.settingsSave)
	page("POST /settings/test/{channel}", h.settings.settingsTest)
	page("POST /settings/tokens", h.settings.tokenCreate)
	page("POST /settings/tokens/{name}/delete", h.settings.tokenDelete)
	page("POST /settings/password", h.settings.passwordChange)
	// A reload or a bookmark of a form's address (after "Make a token",
	// the address bar shows /settings/tokens) lands on the settings page,
	// not on 405.
	page("GET /settings/", func(w http.ResponseWriter, r *http.Request, _ actor) {
		http.Redirect(w, r, "/settings", http.StatusSeeOther)
	})
	cached("GET /audit", h.history.auditPage)
	page("GET /debug/pprof/", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Index(w, r) })
	page("GET /debug/pprof/cmdline", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Cmdline(w, r) })
	page("GET /debug/pprof/profile", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Profile(w, r) })
	page("GET /debug/pprof/symbol", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Symbol(w, r) })
	page("GET /debug/pprof/trace", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Trace(w, r) })
}

// apiRoutes: the API and metrics, behind a session or a bearer token.
func (s *Server) apiRoutes(mux *recordingMux, h handlers) {
	// A token's scope decides: /metrics needs metrics, reading needs read,
	// anything that acts (a check: SMB and AD logons) needs admin.
	api := func(pattern string, f func(http.ResponseWriter, *http.Request, actor)) {
		need := scanwarden.ScopeRead
		if strings.HasPrefix(pattern, "POST ") {
			f = s.invalidating(f)
			need = scanwarden.ScopeAdmin
		}
		mux.Handle(pattern, s.gate.requireToken(need, f))
	}
	mux.Handle("GET /metrics", s.gate.requireToken(scanwarden.ScopeMetrics, s.metrics))
	api("GET /api/v1/devices", h.devices.apiDevices)
	api("POST /api/v1/devices", h.devices.apiDevicePut)
	api("GET /api/v1/devices/{name}", h.devices.apiDevice)
	api("POST /api/v1/devices/{name}", h.devices.apiDevicePut)
	api("POST /api/v1/devices/{name}/remove", h.devices.apiDeviceRemove)
	api("GET /api/v1/destinations", h.destinations.apiDestinations)
	api("POST /api/v1/destinations", h.destinations.apiDestinationPut)
	api("GET /api/v1/destinations/{name}", h.destinations.apiDestination)
	api("POST /api/v1/destinations/{name}", h.destinations.apiDestinationPut)
	api("POST /api/v1/destinations/{name}/remove", h.destinations.apiDestinationRemove)
	api("POST /api/v1/destinations/{name}/check", h.destinations.apiCheck)
	api("POST /api/v1/destinations/{name}/auth", h.destinations.apiDestinationAuth)
	api("POST /api/v1/destinations/{name}/bridge", h.destinations.apiDestinationBridge)
	api("POST /api/v1/devices/{name}/profile", h.devices.apiDeviceProfile)
	api("GET /api/v1/incidents", h.history.apiIncidents)
	api("GET /api/v1/incidents/{id}", h.history.apiIncident)
	api("GET /api/v1/events", h.history.apiEvents)
	api("GET /api/v1/scans", h.receiver.apiScans)
	api("GET /api/v1/audit", h.history.apiAudit)
	api("GET /api/v1/summary", h.overview.apiSummary)
	api("GET /api/v1/warnings", h.overview.apiWarnings)
	api("POST /api/v1/check-all", h.overview.apiCheckAll)
	api("/api/", func(w http.ResponseWriter, r *http.Request, _ actor) {
		writeAPIError(w, http.StatusNotFound, "no such API route")
	})
}

// recordingMux remembers its patterns (the route tests walk them).
type recordingMux struct {
	*http.ServeMux
	patterns []string
}

func (m *recordingMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

func (m *recordingMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// invalidating drops the page cache once a state-changing request is done.
func (s *base) invalidating(h func(http.ResponseWriter, *http.Request, actor)) func(http.ResponseWriter, *http.Request, actor) {
	return func(w http.ResponseWriter, r *http.Request, a actor) {
		defer s.cache.invalidate()
		h(w, r, a)
	}
}

// securityHeaders sets the headers every answer carries. Pages load only
// their own script and style files: no inline script, no frames. With hsts
// (HTTPS is the only way in) browsers are told to keep to HTTPS for a year
// (they ignore it for an IP address, and while the certificate is not
// trusted: a self-signed one stays reachable by its exception).
func securityHeaders(hsts bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if hsts {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
			"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// healthz answers 200 while the process serves; it names how many of the
// daemon's parts are at fault (their details need a login).
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.cfg.Status != nil {
		if f, err := s.cfg.Status.Faults(r.Context()); err == nil && len(f) > 0 {
			fmt.Fprintf(w, "ok, %d fault(s)\n", len(f))
			return
		}
	}
	fmt.Fprintln(w, "ok")
}

// audit records an admin action; a failure to record is logged, not shown.
func (s *base) audit(ctx context.Context, a actor, r *http.Request, action, target, detail string) {
	e := auditEntry(s.now(), a, clientAddr(r), action, target, detail)
	if err := s.auth.AddAudit(context.WithoutCancel(ctx), e); err != nil {
		s.log.Error("audit", "action", action, "err", err)
	}
}
