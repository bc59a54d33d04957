package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/argon2"

	scanwarden "github.com/scanwarden/scanwarden"
)

// argon2id parameters (OWASP's first choice: 19 MiB, 2 passes, 1 lane).
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	// MinPasswordLength is the shortest admin password accepted.
	MinPasswordLength = 10
)

// hashSlots bounds the argon2 computations running at once (19 MiB each):
// a flood of logins waits instead of taking the machine's memory.
var hashSlots = make(chan struct{}, 2)

// HashPassword hashes an admin password with argon2id into a PHC string.
func HashPassword(password string) (string, error) {
	if len(password) < MinPasswordLength {
		return "", fmt.Errorf("the password must have at least %d characters", MinPasswordLength)
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	hashSlots <- struct{}{}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	<-hashSlots
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

var phc = regexp.MustCompile(`^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$`)

// checkPassword reports whether password matches the PHC hash.
func checkPassword(hash, password string) bool {
	var m, t uint32
	var p uint8
	g := phc.FindStringSubmatch(hash)
	if g == nil {
		return false
	}
	if _, err := fmt.Sscanf(g[1]+" "+g[2]+" "+g[3], "%d %d %d", &m, &t, &p); err != nil || m > 1<<20 || t > 16 || p == 0 {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(g[4])
	want, err2 := base64.RawStdEncoding.DecodeString(g[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	hashSlots <- struct{}{}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	<-hashSlots
	return subtle.ConstantTimeCompare(got, want) == 1
}

// SetPassword sets the admin password and ends every session; with
// revokeTokens it also revokes every API token and says how many.
func SetPassword(ctx context.Context, st AuthStore, password string, revokeTokens bool) (int, error) {
	h, err := HashPassword(password)
	if err != nil {
		return 0, err
	}
	if err := st.SetAdminPassword(ctx, h); err != nil {
		return 0, fmt.Errorf("store the admin password: %w", err)
	}
	if err := st.DeleteSessions(ctx); err != nil {
		return 0, fmt.Errorf("end the sessions: %w", err)
	}
	if !revokeTokens {
		return 0, nil
	}
	n, err := st.DeleteTokens(ctx)
	if err != nil {
		return 0, fmt.Errorf("revoke the API tokens: %w", err)
	}
	return n, nil
}

// tokenPrefix marks scanwarden API tokens (easy to find in a leaked file).
const tokenPrefix = "swt_"

var tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CreateToken makes an API token called name with a scope ("" is read),
// stores its hash and returns the token: the only time it is seen.
func CreateToken(ctx context.Context, st AuthStore, name, scope string, now time.Time) (string, error) {
	if !tokenName.MatchString(name) {
		return "", errors.New("a token name is 1–64 letters, digits, '.', '_' or '-'")
	}
	if scope == "" {
		scope = string(scanwarden.ScopeRead)
	}
	sc, ok := scanwarden.ParseTokenScope(scope)
	if !ok {
		return "", fmt.Errorf("scope %q: metrics, read or admin", scope)
	}
	existing, err := st.Tokens(ctx)
	if err != nil {
		return "", fmt.Errorf("read tokens: %w", err)
	}
	for _, t := range existing {
		if t.Name == name {
			return "", fmt.Errorf("a token called %s exists; revoke it first", name)
		}
	}
	tok := tokenPrefix + randomString(32)
	if err := st.CreateToken(ctx, scanwarden.APIToken{Name: name, Hash: hashSecret(tok), Scope: sc, Created: now}); err != nil {
		return "", fmt.Errorf("store token %s: %w", name, err)
	}
	return tok, nil
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashSecret is how session ids and tokens are kept: both are 256 random
// bits, so one SHA-256 suffices (no dictionary to resist).
func hashSecret(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:])
}

// actor is who makes a request: "admin" (a session) or "token:NAME".
type actor struct {
	name    string
	session string // the session's hash, "" for a token
}

func auditEntry(at time.Time, a actor, client, action, target, detail string) scanwarden.AuditEntry {
	name := a.name
	if name == "" {
		name = scanwarden.AnonymousActor
	}
	return scanwarden.AuditEntry{At: at, Actor: name, Client: client, Action: action, Target: target, Detail: detail}
}

// authenticated tells Config.Authenticated about r's client.
func (s *gate) authenticated(r *http.Request) {
	if s.onAuthenticated == nil {
		return
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		s.onAuthenticated(ap.Addr().Unmap())
	}
}

// peerAddr is the peer's IP as an address (the zero Addr when RemoteAddr
// does not parse: all such requests then share one limiter entry).
func peerAddr(r *http.Request) netip.Addr {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	a, _ := netip.ParseAddr(r.RemoteAddr)
	return a.Unmap()
}

// clientAddr is the peer's IP (proxies' headers are not trusted).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *gate) cookieName() string {
	if s.tls {
		return "__Host-scanwarden"
	}
	return "scanwarden"
}

// session returns the request's live session, or ok false.
func (s *gate) session(r *http.Request) (actor, bool) {
	c, err := r.Cookie(s.cookieName())
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return actor{}, false
	}
	h := hashSecret(c.Value)
	now := s.now()
	sess, ok := s.sessions.get(h, now)
	if !ok {
		sess, ok, err = s.auth.Session(r.Context(), h)
		if err != nil {
			s.log.Error("read session", "err", err)
			return actor{}, false
		}
		if ok {
			s.sessions.put(h, sess, now)
		}
	}
	if !ok || !now.Before(sess.Expires) || now.Sub(sess.LastSeen) > s.sessionIdle {
		return actor{}, false
	}
	s.authenticated(r)
	s.limiter.trust(peerAddr(r))
	// Refresh the idle clock at most once a minute: a page view is no write.
	if now.Sub(sess.LastSeen) > time.Minute {
		if err := s.auth.TouchSession(r.Context(), h, now); err != nil {
			s.log.Error("touch session", "err", err)
		}
		s.sessions.drop(h)
	}
	return actor{name: "admin", session: h}, true
}

// sessionCache keeps a looked-up session for a second, so that a burst of
// requests from one browser reads the store once. Logout and a password
// change through the site drop it at once; a session ended from another
// process (the CLI) is refused at most sessionCacheTTL later.
type sessionCache struct {
	mu sync.Mutex
	m  map[string]cachedSession
}

type cachedSession struct {
	s  scanwarden.Session
	at time.Time
}

const sessionCacheTTL = time.Second

func (c *sessionCache) get(h string, now time.Time) (scanwarden.Session, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[h]
	if !ok || now.Sub(e.at) >= sessionCacheTTL || now.Before(e.at) {
		return scanwarden.Session{}, false
	}
	return e.s, true
}

func (c *sessionCache) put(h string, s scanwarden.Session, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= 1000 {
		c.m = map[string]cachedSession{}
	}
	c.m[h] = cachedSession{s: s, at: now}
}

func (c *sessionCache) drop(h string) {
	c.mu.Lock()
	delete(c.m, h)
	c.mu.Unlock()
}

func (c *sessionCache) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// startSession logs the browser in.
func (s *gate) startSession(w http.ResponseWriter, r *http.Request) error {
	id := randomString(32)
	now := s.now()
	err := s.auth.CreateSession(r.Context(), scanwarden.Session{
		IDHash: hashSecret(id), Created: now, Expires: now.Add(s.sessionMax), LastSeen: now, Client: clientAddr(r),
	})
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(), Value: id, Path: "/", HttpOnly: true, Secure: s.tls,
		SameSite: http.SameSiteStrictMode, MaxAge: int(s.sessionMax / time.Second),
	})
	return nil
}

func (s *gate) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", HttpOnly: true, Secure: s.tls,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

// requireSession lets a logged-in admin through; others go to /login.
func (s *gate) requireSession(h func(http.ResponseWriter, *http.Request, actor)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := s.session(r)
		if !ok {
			to := "/login"
			if r.Method == http.MethodGet {
				to += "?next=" + url.QueryEscape(r.URL.RequestURI())
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r, a)
	})
}

// requireToken lets a session, or a bearer token whose scope allows need,
// through; others get 401 (no or a wrong token) or 403 (too narrow a scope).
func (s *gate) requireToken(need scanwarden.TokenScope, h func(http.ResponseWriter, *http.Request, actor)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if auth := r.Header.Get("Authorization"); auth != "" {
			tok, ok := strings.CutPrefix(auth, "Bearer ")
			if !ok || len(tok) > 200 {
				s.unauthorized(w)
				return
			}
			t, found, err := s.auth.TokenByHash(r.Context(), hashSecret(strings.TrimSpace(tok)))
			if err != nil {
				s.log.Error("read token", "err", err)
			}
			if !found || err != nil {
				s.unauthorized(w)
				return
			}
			s.touchToken(r.Context(), t.Name)
			s.authenticated(r)
			if !t.Scope.Allows(need) {
				writeAPIError(w, http.StatusForbidden, "token "+t.Name+" has scope "+string(t.Scope)+"; this needs "+string(need))
				return
			}
			h(w, r, actor{name: "token:" + t.Name})
			return
		}
		if a, ok := s.session(r); ok {
			h(w, r, a)
			return
		}
		s.unauthorized(w)
	})
}

func (s *gate) unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="scanwarden"`)
	writeAPIError(w, http.StatusUnauthorized, "a session or an Authorization: Bearer token is required")
}

// touchToken records a token's use at most once a minute.
func (s *gate) touchToken(ctx context.Context, name string) {
	now := s.now()
	if v, ok := s.touched.Load(name); ok && now.Sub(v.(time.Time)) < time.Minute {
		return
	}
	s.touched.Store(name, now)
	if err := s.auth.TouchToken(ctx, name, now); err != nil {
		s.log.Error("touch token", "token", name, "err", err)
	}
}

// setupToken is the one-time link printed when no admin password exists.
type setupToken struct {
	mu      sync.Mutex
	hash    string
	expires time.Time
}

// setupLink makes the one-time setup link (Server.SetupLink).
func (s *gate) setupLink(ctx context.Context) (string, error) {
	h, err := s.auth.AdminPassword(ctx)
	if err != nil {
		return "", fmt.Errorf("read the admin password: %w", err)
	}
	if h != "" {
		return "", nil
	}
	tok := randomString(24)
	s.setup.mu.Lock()
	s.setup.hash, s.setup.expires = hashSecret(tok), s.now().Add(24*time.Hour)
	s.setup.mu.Unlock()
	return "/setup?token=" + tok, nil
}

// takeSetup checks a setup token; with use it also voids it.
func (s *gate) checkSetup(tok string, use bool) bool {
	s.setup.mu.Lock()
	defer s.setup.mu.Unlock()
	if s.setup.hash == "" || tok == "" || !s.now().Before(s.setup.expires) {
		return false
	}
	if subtle.ConstantTimeCompare([]byte(hashSecret(tok)), []byte(s.setup.hash)) != 1 {
		return false
	}
	if use {
		s.setup.hash = ""
	}
	return true
}

// AuditCLI records an admin action made on the server's command line.
func AuditCLI(ctx context.Context, st AuthStore, at time.Time, action, target string) error {
	return st.AddAudit(ctx, auditEntry(at, actor{name: "cli"}, "local", action, target, ""))
}
