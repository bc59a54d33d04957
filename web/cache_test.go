package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A stale page is rendered again by one request while the others keep
// getting the previous copy; an invalidation makes everyone wait.
func TestPageCacheStaleWhileRendering(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	c := newPageCache(2*time.Second, clock.Now)
	var renders atomic.Int32
	gate := make(chan struct{})
	h := c.wrap(func(w http.ResponseWriter, r *http.Request, _ actor) {
		n := renders.Add(1)
		if n == 2 {
			<-gate // the second render is slow
		}
		fmt.Fprintf(w, "render %d", n)
	})
	get := func() string {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("GET", "/", nil), actor{})
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	if got := get(); got != "render 1" {
		t.Fatal(got)
	}
	clock.Add(3 * time.Second)
	slow := make(chan string)
	go func() { slow <- get() }() // finds it stale: renders (and blocks)
	for renders.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	if got := get(); got != "render 1" { // meanwhile: the old copy, at once
		t.Fatalf("during the refresh: %q", got)
	}
	close(gate)
	if got := <-slow; got != "render 2" {
		t.Fatalf("refreshing request: %q", got)
	}
	if got := get(); got != "render 2" {
		t.Fatalf("after the refresh: %q", got)
	}
	c.invalidate()
	if got := get(); got != "render 3" {
		t.Fatalf("after an invalidation: %q", got)
	}
}
