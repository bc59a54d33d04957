package store

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/web"
)

// The store is the web server's AuthStore.
var _ web.AuthStore = (*Auth)(nil)

func TestWebAuthTables(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return t0 }

	if h, err := s.Auth().AdminPassword(ctx); err != nil || h != "" {
		t.Fatalf("no admin yet: %q %v", h, err)
	}
	for _, h := range []string{"$argon2id$one", "$argon2id$two"} {
		if err := s.Auth().SetAdminPassword(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if h, _ := s.Auth().AdminPassword(ctx); h != "$argon2id$two" {
		t.Fatalf("admin password %q", h)
	}

	old := scanwarden.Session{IDHash: "old", Created: t0.Add(-48 * time.Hour), Expires: t0.Add(-time.Hour), LastSeen: t0.Add(-2 * time.Hour)}
	live := scanwarden.Session{IDHash: "live", Created: t0, Expires: t0.Add(24 * time.Hour), LastSeen: t0, Client: "10.0.0.1"}
	for _, se := range []scanwarden.Session{old, live} {
		if err := s.Auth().CreateSession(ctx, se); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := s.Auth().Session(ctx, "old"); ok {
		t.Error("an expired session is not pruned when a new one starts")
	}
	got, ok, err := s.Auth().Session(ctx, "live")
	if err != nil || !ok || !got.Expires.Equal(live.Expires) || got.Client != "10.0.0.1" {
		t.Fatalf("session %+v %v %v", got, ok, err)
	}
	if err := s.Auth().TouchSession(ctx, "live", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _, _ = s.Auth().Session(ctx, "live"); !got.LastSeen.Equal(t0.Add(time.Hour)) {
		t.Errorf("touch: %v", got.LastSeen)
	}
	if err := s.Auth().DeleteSession(ctx, "live"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Auth().Session(ctx, "live"); ok {
		t.Error("deleted session still there")
	}
	s.Auth().CreateSession(ctx, live)
	if err := s.Auth().DeleteSessions(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Auth().Session(ctx, "live"); ok {
		t.Error("DeleteSessions left one")
	}

	if err := s.Auth().CreateToken(ctx, scanwarden.APIToken{Name: "prom", Hash: "h1", Created: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.Auth().CreateToken(ctx, scanwarden.APIToken{Name: "prom", Hash: "h2", Created: t0}); !errors.Is(err, ErrTokenExists) {
		t.Errorf("duplicate name: %v", err)
	}
	tok, ok, err := s.Auth().TokenByHash(ctx, "h1")
	if err != nil || !ok || tok.Name != "prom" || !tok.LastUsed.IsZero() {
		t.Fatalf("token %+v %v %v", tok, ok, err)
	}
	s.Auth().TouchToken(ctx, "prom", t0.Add(time.Minute))
	toks, err := s.Auth().Tokens(ctx)
	if err != nil || len(toks) != 1 || !toks[0].LastUsed.Equal(t0.Add(time.Minute)) {
		t.Fatalf("tokens %+v %v", toks, err)
	}
	if err := s.Auth().DeleteToken(ctx, "prom"); err != nil {
		t.Fatal(err)
	}
	if err := s.Auth().DeleteToken(ctx, "prom"); !errors.Is(err, ErrNoToken) {
		t.Errorf("revoke twice: %v", err)
	}
	if _, ok, _ := s.Auth().TokenByHash(ctx, "h1"); ok {
		t.Error("revoked token still found")
	}

	hostile := `<img src=x onerror=alert(1)>'; DROP TABLE audit_log; --`
	for i := 0; i < 3; i++ {
		if err := s.Auth().AddAudit(ctx, scanwarden.AuditEntry{At: t0.Add(time.Duration(i) * time.Second), Actor: "admin", Client: "127.0.0.1",
			Action: "scan.download", Target: hostile}); err != nil {
			t.Fatal(err)
		}
	}
	log, err := s.Auth().Audit(ctx, 2)
	if err != nil || len(log) != 2 || log[0].ID != 3 || log[0].Target != hostile || !log[0].At.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("audit %+v %v", log, err)
	}

	if err := s.Settings().SetSettings(ctx, []config.Saved{{Section: "ad", Key: "url", Value: "ldaps://dc1"}, {Section: "ad", Key: "password", Value: "sealed:xyz", Secret: true}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Settings().SetSettings(ctx, []config.Saved{{Section: "ad", Key: "url", Value: "ldaps://dc2"}}); err != nil {
		t.Fatal(err)
	}
	set, err := s.Settings().StoredSettings(ctx)
	if err != nil || len(set) != 2 || set[0].Key != "password" || !set[0].Secret || set[1].Value != "ldaps://dc2" {
		t.Fatalf("settings %+v %v", set, err)
	}
	if err := s.Settings().DeleteSetting(ctx, "ad", "url"); err != nil {
		t.Fatal(err)
	}
	if set, _ = s.Settings().StoredSettings(ctx); len(set) != 1 {
		t.Errorf("after delete: %+v", set)
	}
}

func TestAuditPruned(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 10099)
		INSERT INTO audit_log(id, at, actor, action) SELECT i, '2026-01-01T00:00:00Z', 'admin', 'x' FROM n`); err != nil {
		t.Fatal(err)
	}
	if err := s.Auth().AddAudit(ctx, scanwarden.AuditEntry{Actor: "admin", Action: "y"}); err != nil { // id 10100
		t.Fatal(err)
	}
	var n int
	s.db.QueryRowContext(ctx, "SELECT count(*) FROM audit_log").Scan(&n)
	if n != auditKeep {
		t.Errorf("audit rows %d, want %d", n, auditKeep)
	}
}

// Anonymous failed logins, however many, are counted per address and hour
// and never push the admin's actions out of the log (they did: after a
// flood only login.failed rows remained).
func TestAttackAuditFloodKeepsAdminActions(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, a := range []string{"login", "token.create", "settings.set"} {
		if err := s.Auth().AddAudit(ctx, scanwarden.AuditEntry{At: t0.Add(time.Duration(i) * time.Second), Actor: "admin", Client: "192.0.2.1", Action: a}); err != nil {
			t.Fatal(err)
		}
	}
	// 10,200 failures (the old log kept 10,000 rows of any kind): 200
	// addresses × 51, spread over about two hours.
	for i := 0; i < 10200; i++ {
		at := t0.Add(time.Minute + time.Duration(i)*700*time.Millisecond)
		client := "10.9." + strconv.Itoa(i%200/100) + "." + strconv.Itoa(i%100)
		if err := s.Auth().AddAudit(ctx, scanwarden.AuditEntry{At: at, Actor: scanwarden.AnonymousActor, Client: client, Action: "login.failed", Target: "admin"}); err != nil {
			t.Fatal(err)
		}
	}
	log, err := s.Auth().Audit(ctx, 10000)
	if err != nil {
		t.Fatal(err)
	}
	admin, anonRows, anonCount := 0, 0, 0
	for _, e := range log {
		if e.Actor == "admin" {
			admin++
			continue
		}
		anonRows++
		anonCount += e.Count
		// The first attempt is a time, not text in the detail (the page
		// printed the stored RFC 3339 string).
		if e.First.IsZero() || e.First.After(e.At) || e.Detail != "" {
			t.Fatalf("anonymous row: first %v at %v detail %q", e.First, e.At, e.Detail)
		}
	}
	t.Logf("audit after 10,200 anonymous failures: %d admin rows, %d anonymous rows counting %d", admin, anonRows, anonCount)
	if admin != 3 {
		t.Errorf("%d of the admin's 3 actions left after the flood", admin)
	}
	// 200 addresses over the hours 10:00 and 11:00 (and 12:00's first minute).
	if anonRows > 600 || anonCount != 10200 {
		t.Errorf("anonymous failures: %d rows counting %d, want ≤ 600 rows counting 10200", anonRows, anonCount)
	}
}
