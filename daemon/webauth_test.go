package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

// The web's destination editor: SetAuth stores the auth with the rest of
// the destination unchanged (password included), the web destination shows
// it, and an unknown destination is web.ErrNotFound.
func TestWebSetAuth(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.UnlockKey(ctx, filepath.Join(dir, "secret.key")); err != nil {
		t.Fatal(err)
	}
	if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "krb", Host: "dc2.ntlmoff.test", Share: "scans",
		User: `NTLMOFF\kim`, Password: scanwarden.NewSecret("Pw-1")}); err != nil {
		t.Fatal(err)
	}
	b := webBackend{m: &Main{env: env{st: st}}}
	if d, err := b.Destination(ctx, "krb"); err != nil || d.Auth != "ntlm" {
		t.Fatalf("before: %+v %v", d, err)
	}
	if err := webRegistry(b).SetAuth(ctx, "krb", scanwarden.AuthKerberos); err != nil {
		t.Fatal(err)
	}
	got, err := st.Destinations().Destination(ctx, "krb")
	if err != nil || got.Auth != scanwarden.AuthKerberos || got.Password.Reveal() != "Pw-1" || got.User != `NTLMOFF\kim` {
		t.Fatalf("stored: %+v %v", got, err)
	}
	if d, err := b.Destination(ctx, "krb"); err != nil || d.Auth != "kerberos" {
		t.Fatalf("web destination: %+v %v", d, err)
	}
	if err := webRegistry(b).SetAuth(ctx, "nosuch", scanwarden.AuthAuto); !errors.Is(err, web.ErrNotFound) {
		t.Fatalf("unknown destination: %v", err)
	}
}
