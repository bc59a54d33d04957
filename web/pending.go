package web

import (
	"sync"
	"time"
)

// pendingImports keeps an uploaded address book between its preview and
// the admin's confirmation, server-side (the export holds passwords: it
// does not travel back through the browser).
type pendingImports struct {
	mu   sync.Mutex
	now  func() time.Time
	byID map[string]pendingImport
}

type pendingImport struct {
	device string
	data   []byte
	at     time.Time
}

const (
	pendingKeep = 30 * time.Minute
	maxPending  = 20
)

func newPendingImports(now func() time.Time) *pendingImports {
	return &pendingImports{now: now, byID: map[string]pendingImport{}}
}

// put keeps an upload and returns its id; the oldest goes when full.
func (p *pendingImports) put(device string, data []byte) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	var oldest string
	for id, e := range p.byID {
		if now.Sub(e.at) > pendingKeep {
			delete(p.byID, id)
		} else if oldest == "" || e.at.Before(p.byID[oldest].at) {
			oldest = id
		}
	}
	if len(p.byID) >= maxPending {
		delete(p.byID, oldest)
	}
	id := randomString(16)
	p.byID[id] = pendingImport{device: device, data: data, at: now}
	return id
}

// take removes and returns an upload.
func (p *pendingImports) take(id string) (pendingImport, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.byID[id]
	delete(p.byID, id)
	if !ok || p.now().Sub(e.at) > pendingKeep {
		return pendingImport{}, false
	}
	return e, true
}
