package daemon

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden"
)

// faults are the daemon's parts that do not work now, each a
// scanwarden.Fault (the status page and the metrics read them).
type faults struct {
	mu  sync.Mutex
	m   map[string]scanwarden.Fault
	now func() time.Time
}

func newFaults(now func() time.Time) *faults {
	return &faults{m: map[string]scanwarden.Fault{}, now: now}
}

// set records a fault (keeping its first time while the message is the same).
func (f *faults) set(part, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.m[part]; ok && old.Message == msg {
		return
	}
	f.m[part] = scanwarden.Fault{Part: part, Message: msg, Since: f.now()}
}

// from states part's fault when err is set, else clears it.
func (f *faults) from(part string, err error) {
	if err != nil {
		f.set(part, err.Error())
		return
	}
	f.clear(part)
}

func (f *faults) clear(part string) {
	f.mu.Lock()
	delete(f.m, part)
	f.mu.Unlock()
}

// list returns the faults by part.
func (f *faults) list() []scanwarden.Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]scanwarden.Fault, 0, len(f.m))
	for _, x := range f.m {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Part < out[j].Part })
	return out
}

// status is the daemon's state as systemd shows it: "running", or how many
// faults it runs with.
func (f *faults) status() string {
	n := len(f.list())
	if n == 0 {
		return "running"
	}
	return fmt.Sprintf("running with %d fault(s)", n)
}
