package web

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pageCache keeps each rendered read-only page for a short time and renders
// a page once for all the requests that want it at the same moment. The
// office's admin sees data at most ttl old; anything done through the site
// (a POST, the end of a check started from it) drops the whole cache, so
// the admin's own changes show at once. With 300 destinations the dashboard
// is ~120 KB of template output: without this, 50 browsers refreshing it
// would each pay for the backend queries and the rendering.
type pageCache struct {
	mu      sync.Mutex
	ttl     time.Duration
	now     func() time.Time
	gen     uint64
	entries map[string]*cachedPage
}

type cachedPage struct {
	ready chan struct{} // closed when rendered
	done  bool          // rendered (under the cache's lock)
	// refreshing: past its time, one request is rendering its successor.
	refreshing bool
	gen        uint64
	at         time.Time
	status     int
	ctype      string
	body       []byte
	gz         []byte // body gzipped, nil when small
}

const maxCachedPages = 256

func newPageCache(ttl time.Duration, now func() time.Time) *pageCache {
	return &pageCache{ttl: ttl, now: now, entries: map[string]*cachedPage{}}
}

// invalidate drops every cached page.
func (c *pageCache) invalidate() {
	c.mu.Lock()
	c.gen++
	clear(c.entries)
	c.mu.Unlock()
}

// wrap serves GET h from the cache (keyed by path and query). A page past
// its time is rendered again by the one request that finds it so; the
// others meanwhile get the previous copy. After an invalidation nobody gets
// an old copy: the first request renders and the others wait for it.
func (c *pageCache) wrap(h func(http.ResponseWriter, *http.Request, actor)) func(http.ResponseWriter, *http.Request, actor) {
	if c.ttl <= 0 {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request, a actor) {
		key := r.URL.RequestURI()
		now := c.now()
		c.mu.Lock()
		e := c.entries[key]
		if e != nil && e.gen == c.gen {
			if !e.done || now.Sub(e.at) < c.ttl || e.refreshing {
				c.mu.Unlock()
				select {
				case <-e.ready:
				case <-r.Context().Done():
					return
				}
				if e.status != http.StatusOK {
					h(w, r, a) // that render failed: do our own
					return
				}
				e.serve(w, r)
				return
			}
			e.refreshing = true // stale: this request renders, the others keep the old copy
		} else {
			e = nil
		}
		ne := &cachedPage{ready: make(chan struct{}), gen: c.gen, at: now}
		if e == nil {
			if len(c.entries) >= maxCachedPages {
				clear(c.entries)
			}
			c.entries[key] = ne // the others wait for this render
		}
		c.mu.Unlock()

		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		func() {
			defer close(ne.ready)
			h(rec, r, a)
			ne.status, ne.ctype, ne.body = rec.status, rec.header.Get("Content-Type"), rec.buf.Bytes()
			if ne.status == http.StatusOK && len(ne.body) > 2048 {
				ne.gz = gzipped(ne.body)
			}
		}()
		c.mu.Lock()
		ne.done = true
		switch {
		case ne.status == http.StatusOK && ne.gen == c.gen:
			c.entries[key] = ne
		case c.entries[key] == ne:
			delete(c.entries, key)
		}
		if e != nil {
			e.refreshing = false
		}
		c.mu.Unlock()
		if ne.status == http.StatusOK {
			ne.serve(w, r)
		} else {
			rec.copyTo(w)
		}
	}
}

// serve writes the page, gzipped when the browser takes it (pages carry no
// secret and no token, so compression reveals nothing).
func (e *cachedPage) serve(w http.ResponseWriter, r *http.Request) {
	body := e.body
	h := w.Header()
	h.Set("Content-Type", e.ctype)
	h.Set("Vary", "Accept-Encoding")
	if e.gz != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		body = e.gz
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.status)
	w.Write(body)
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// recorder keeps a handler's answer to store and replay it.
type recorder struct {
	header http.Header
	status int
	buf    bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if !r.wrote {
		r.status, r.wrote = s, true
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.buf.Write(b)
}

func (r *recorder) copyTo(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.WriteHeader(r.status)
	w.Write(r.buf.Bytes())
}
