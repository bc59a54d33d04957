package notify

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
)

// TestAttackWebhookRedirect: the webhook's receiving end (or whoever took
// over its name) answers with a redirect to another host. Nothing — not the
// body, not the secret header — may reach that host: the redirect is a
// failed delivery that names where it pointed, and is not retried.
func TestAttackWebhookRedirect(t *testing.T) {
	var elsewhere atomic.Int64
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		leaked.Store(r.Header.Get(DefaultSecretHeader))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer other.Close()
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		var hooked atomic.Int64
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hooked.Add(1)
			w.Header().Set("Location", other.URL+"/collect?k=loc-token")
			w.WriteHeader(code)
		}))
		// A client of the caller's that would follow redirects.
		follows := &http.Client{Timeout: 2 * time.Second}
		w, err := NewWebhook(WebhookConfig{URL: hook.URL + "/hook", Secret: scanwarden.NewSecret("hdr-secret"), Attempts: 3,
			Backoff: time.Millisecond, Timeout: 2 * time.Second, Client: follows})
		if err != nil {
			t.Fatal(err)
		}
		n, err := w.Send(context.Background(), TestMessage(time.Now()))
		hook.Close()
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("answered %d, a redirect to %s/collect ", code, other.URL)) ||
			strings.Contains(err.Error(), "loc-token") {
			t.Errorf("%d: err %v, want a failed delivery naming %s/collect (without its query)", code, err, other.URL)
		}
		if n != 1 || hooked.Load() != 1 {
			t.Errorf("%d: %d attempts, %d POSTs to the hook; want 1 (a redirect is not retried)", code, n, hooked.Load())
		}
		if follows.CheckRedirect != nil {
			t.Errorf("%d: the caller's client was changed", code)
		}
	}
	// Send has returned every time: a followed redirect would have reached
	// the other server before that.
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect was followed: %d requests reached the other host (secret header %q)", n, leaked.Load())
	}
}
