package daemon

import (
	"sort"
	"sync"
	"time"
)

// Fault is one part of the daemon that does not work (a listener that
// could not bind, the DC down, a store write that failed). The rest keeps
// running; faults show in the log, the status page and the metrics.
type Fault struct {
	Part    string    `json:"part"` // snmp.traps, snmp.mail, ad, store, notify.webhook, config, …
	Message string    `json:"message"`
	Since   time.Time `json:"since"`
}

type faults struct {
	mu  sync.Mutex
	m   map[string]Fault
	now func() time.Time
}

func newFaults(now func() time.Time) *faults { return &faults{m: map[string]Fault{}, now: now} }

// set records a fault (keeping its first time while the message is the same).
func (f *faults) set(part, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.m[part]; ok && old.Message == msg {
		return
	}
	f.m[part] = Fault{Part: part, Message: msg, Since: f.now()}
}

func (f *faults) clear(part string) {
	f.mu.Lock()
	delete(f.m, part)
	f.mu.Unlock()
}

// list returns the faults by part.
func (f *faults) list() []Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Fault, 0, len(f.m))
	for _, x := range f.m {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Part < out[j].Part })
	return out
}
