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
	"sync"
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
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	views    *views
	limiter  *limiter
	runs     *runs
	imports  *pendingImports
	cache    *pageCache
	setup    setupToken
	sessions sessionCache
	touched  sync.Map  // token name → time.Time of the last stored use
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
	s := &Server{
		cfg:   cfg,
		log:   cfg.Logger.With("component", "web"),
		now:   cfg.Now,
		views: v,
		limiter: newLimiter(limits{perAddr: cfg.LoginFailures, perPrefix: cfg.LoginPrefixFailures,
			perMinute: cfg.LoginPerMinute, window: cfg.LoginWindow}, cfg.Now),
		runs:    newRuns(cfg.Now),
		imports: newPendingImports(cfg.Now),
		cache:   newPageCache(cfg.PageCache, cfg.Now),
	}
	s.runs.done = s.cache.invalidate
	s.handler = s.routes()
	return s, nil
}

// Handler is the whole site.
func (s *Server) Handler() http.Handler { return s.handler }

// Close stops the checks started from the page and waits for them.
func (s *Server) Close() { s.runs.close() }

func (s *Server) routes() http.Handler {
	mux := &recordingMux{ServeMux: http.NewServeMux()}
	s.patterns = &mux.patterns
	s.anonymousRoutes(mux)
	s.pageRoutes(mux)
	s.apiRoutes(mux)

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
	}))
	h := securityHeaders(s.cfg.TLS, s.limitBodies(cop.Handler(mux)))
	if s.cfg.Hosts != nil {
		h = hostGuard(s.cfg.Hosts, h)
	}
	return h
}

// anonymousRoutes: what needs no login.
func (s *Server) anonymousRoutes(mux *recordingMux) {
	mux.Handle("GET /static/", staticHandler())
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /login", s.loginForm)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("GET /setup", s.setupForm)
	mux.HandleFunc("POST /setup", s.setupSubmit)
}

// pageRoutes: the admin's pages, behind a session.
func (s *Server) pageRoutes(mux *recordingMux) {
	page := func(pattern string, h func(http.ResponseWriter, *http.Request, actor)) {
		if strings.HasPrefix(pattern, "POST ") {
			h = s.invalidating(h)
		}
		mux.Handle(pattern, s.requireSession(h))
	}
	// cached: read-only pages, served from the page cache.
	cached := func(pattern string, h func(http.ResponseWriter, *http.Request, actor)) {
		page(pattern, s.cache.wrap(h))
	}
	page("POST /logout", s.logout)
	cached("GET /{$}", s.dashboard)
	page("POST /check-all", s.checkAll)
	// "_new" and "_test" are never a name (ValidName starts with a
	// letter or digit).
	cached("GET /devices", s.devicesPage)
	page("GET /devices/_new", s.deviceNew)
	page("POST /devices", s.deviceSave)
	cached("GET /devices/{name}", s.devicePage)
	page("GET /devices/{name}/edit", s.deviceEdit)
	page("POST /devices/{name}/edit", s.deviceSave)
	page("GET /devices/{name}/remove", s.deviceRemoveForm)
	page("POST /devices/{name}/remove", s.deviceRemove)
	cached("GET /destinations", s.destinationsPage)
	page("GET /destinations/_new", s.destinationNew)
	page("POST /destinations", s.destinationSave)
	page("POST /destinations/_test", s.destinationTry)
	cached("GET /destinations/{name}", s.destinationPage)
	page("GET /destinations/{name}/edit", s.destinationEdit)
	page("POST /destinations/{name}/edit", s.destinationSave)
	page("GET /destinations/{name}/remove", s.destinationRemoveForm)
	page("POST /destinations/{name}/remove", s.destinationRemove)
	page("POST /destinations/{name}/check", s.checkNow)
	page("POST /destinations/{name}/auth", s.destinationAuth)
	page("POST /devices/{name}/profile", s.deviceProfile)
	page("GET /runs/{id}/events", s.runEvents)
	cached("GET /incidents", s.incidentsPage)
	cached("GET /incidents/{id}", s.incidentPage)
	cached("GET /events", s.eventsPage)
	cached("GET /receiver", s.receiverPage)
	page("GET /receiver/scans/{id}/download", s.scanDownload)
	page("POST /receiver/scans/{id}/deliver", s.scanDeliver)
	page("POST /receiver/scans/{id}/force", s.scanForce)
	page("GET /import", s.importForm)
	page("POST /import", s.importPreview)
	page("POST /import/confirm", s.importConfirm)
	page("GET /settings", s.settingsPage)
	page("POST /settings/{section}", s.settingsSave)
	page("POST /settings/test/{channel}", s.settingsTest)
	page("POST /settings/tokens", s.tokenCreate)
	page("POST /settings/tokens/{name}/delete", s.tokenDelete)
	page("POST /settings/password", s.passwordChange)
	// A reload or a bookmark of a form's address (after "Make a token",
	// the address bar shows /settings/tokens) lands on the settings page,
	// not on 405.
	page("GET /settings/", func(w http.ResponseWriter, r *http.Request, _ actor) {
		http.Redirect(w, r, "/settings", http.StatusSeeOther)
	})
	cached("GET /audit", s.auditPage)
	page("GET /debug/pprof/", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Index(w, r) })
	page("GET /debug/pprof/cmdline", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Cmdline(w, r) })
	page("GET /debug/pprof/profile", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Profile(w, r) })
	page("GET /debug/pprof/symbol", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Symbol(w, r) })
	page("GET /debug/pprof/trace", func(w http.ResponseWriter, r *http.Request, _ actor) { pprof.Trace(w, r) })
}

// apiRoutes: the API and metrics, behind a session or a bearer token.
func (s *Server) apiRoutes(mux *recordingMux) {
	// A token's scope decides: /metrics needs metrics, reading needs read,
	// anything that acts (a check: SMB and AD logons) needs admin.
	api := func(pattern string, h func(http.ResponseWriter, *http.Request, actor)) {
		need := scanwarden.ScopeRead
		if strings.HasPrefix(pattern, "POST ") {
			h = s.invalidating(h)
			need = scanwarden.ScopeAdmin
		}
		mux.Handle(pattern, s.requireToken(need, h))
	}
	mux.Handle("GET /metrics", s.requireToken(scanwarden.ScopeMetrics, s.metrics))
	api("GET /api/v1/devices", s.apiDevices)
	api("POST /api/v1/devices", s.apiDevicePut)
	api("GET /api/v1/devices/{name}", s.apiDevice)
	api("POST /api/v1/devices/{name}", s.apiDevicePut)
	api("POST /api/v1/devices/{name}/remove", s.apiDeviceRemove)
	api("GET /api/v1/destinations", s.apiDestinations)
	api("POST /api/v1/destinations", s.apiDestinationPut)
	api("GET /api/v1/destinations/{name}", s.apiDestination)
	api("POST /api/v1/destinations/{name}", s.apiDestinationPut)
	api("POST /api/v1/destinations/{name}/remove", s.apiDestinationRemove)
	api("POST /api/v1/destinations/{name}/check", s.apiCheck)
	api("POST /api/v1/destinations/{name}/auth", s.apiDestinationAuth)
	api("POST /api/v1/devices/{name}/profile", s.apiDeviceProfile)
	api("GET /api/v1/incidents", s.apiIncidents)
	api("GET /api/v1/incidents/{id}", s.apiIncident)
	api("GET /api/v1/events", s.apiEvents)
	api("GET /api/v1/scans", s.apiScans)
	api("GET /api/v1/audit", s.apiAudit)
	api("GET /api/v1/summary", s.apiSummary)
	api("GET /api/v1/warnings", s.apiWarnings)
	api("POST /api/v1/check-all", s.apiCheckAll)
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
func (s *Server) invalidating(h func(http.ResponseWriter, *http.Request, actor)) func(http.ResponseWriter, *http.Request, actor) {
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
func (s *Server) audit(ctx context.Context, a actor, r *http.Request, action, target, detail string) {
	e := auditEntry(s.now(), a, clientAddr(r), action, target, detail)
	if err := s.cfg.Auth.AddAudit(context.WithoutCancel(ctx), e); err != nil {
		s.log.Error("audit", "action", action, "err", err)
	}
}
