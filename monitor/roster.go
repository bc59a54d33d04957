package monitor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// Destination is what the monitor needs of a registered destination.
type Destination struct {
	Name   string
	Device string // the device it belongs to ("" when none)
	Target scanwarden.Target
	// LastCheck is when it was last checked (zero: never, or not known).
	// At first sight the next check is due an interval after it, so a
	// restart does not check every destination at once; one whose last
	// check is older than the interval (or that has none) is checked within
	// the jitter, spread over the first minutes. A destination that appears
	// or changes after the first list (added, imported, edited) is checked
	// at once (check on arrival).
	LastCheck time.Time
	// LastVerdict is that check's verdict (with LastCheck): a device
	// failure that names no destination takes it as the destination's
	// state when it is within event_gap instead of checking again.
	LastVerdict smbcheck.Verdict
	// PasswordUnreadable: the stored password is not known (why); its check
	// replays nothing and says so (smbcheck.PasswordUnreadable).
	PasswordUnreadable string
	// Client is its device's SMB client, as every check of it replays it
	// (registry.Resolved.Client; zero: scanwarden's own).
	Client smbcheck.Device
	// Profile is what the check's report keeps of Client's origins
	// (registry.Resolved.Profile; nil: scanwarden's own client).
	Profile *smbcheck.Profile
	// Bridged: the MFP scans to the fallback share and scanwarden's
	// forwarder delivers (Client is then scanwarden's own): its check is
	// the bridge's own, and a green one ends an incident of a cause of the
	// device's client at once (incident.Input.Bridged).
	Bridged bool
	// AskedAt is when an admin asked for this check (CheckNow, CheckAll,
	// the page's Test of a form; zero: a scheduled or event check). What
	// the check states of the server is then learned since, not remembered
	// from before (smbcheck.Options.LowestSince): the admin may just have
	// changed the server.
	AskedAt time.Time
}

// server is the per-server cap's key.
func (d Destination) server() string { return strings.ToLower(strings.TrimSpace(d.Target.Host)) }

func key(name string) string { return strings.ToLower(name) }

// fingerprint is what a check replays of d, hashed (the password never
// kept a second time in clear): a change means "check it again now" — its
// device's client too (a profile learned or set by hand).
func fingerprint(d Destination) string {
	t := d.Target
	h := sha256.Sum256([]byte(strings.Join([]string{t.Host, strconv.Itoa(t.Port), t.Share, t.Path, t.User, t.Password.Reveal(),
		t.Workstation, string(t.Auth), d.PasswordUnreadable, fmt.Sprintf("%+v", d.Client), strconv.FormatBool(d.Bridged)}, "\x00")))
	return hex.EncodeToString(h[:])
}

// roster is the destination list as last read from the registry, with
// what the last finished check of each found (the state a device failure
// naming no destination takes within event_gap). A destination edited
// since forgets that check: it says nothing about it now.
type roster struct {
	reg   Registry
	every time.Duration // re-read when older
	now   func() time.Time

	mu       sync.Mutex
	dests    map[string]Destination
	prints   map[string]string // destination → fingerprint of what is replayed
	last     map[string]incident.SweepResult
	loadedAt time.Time
	// loaded is set once the first list was read: a destination that
	// appears or changes after that is checked at once (arrival).
	loaded bool
}

func newRoster(reg Registry, every time.Duration, now func() time.Time) *roster {
	return &roster{reg: reg, every: every, now: now, dests: map[string]Destination{}, last: map[string]incident.SweepResult{}}
}

// listed is what one read of the list changed: the destinations added or
// edited since the read before (none at the first read) and every key
// listed now.
type listed struct {
	arrived []string
	keys    map[string]bool
}

// refresh re-reads the list when it is older than every (or when forced);
// ok is false when it was not re-read, err when the registry failed.
func (r *roster) refresh(ctx context.Context, force bool) (ch listed, ok bool, err error) {
	if !r.stale(force) {
		return listed{}, false, nil
	}
	ds, err := r.reg.Destinations(ctx)
	if err != nil {
		return listed{}, false, err
	}
	return r.set(ds), true, nil
}

func (r *roster) stale(force bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return force || r.now().Sub(r.loadedAt) >= r.every
}

// expire makes the next refresh re-read the list.
func (r *roster) expire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loadedAt = time.Time{}
}

// set takes a fresh list.
func (r *roster) set(ds []Destination) listed {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loadedAt = r.now()
	ch := listed{keys: make(map[string]bool, len(ds))}
	r.dests = make(map[string]Destination, len(ds))
	prints := make(map[string]string, len(ds))
	for _, d := range ds {
		k := key(d.Name)
		r.dests[k], prints[k], ch.keys[k] = d, fingerprint(d), true
		old, seen := r.prints[k]
		if r.loaded && (!seen || old != prints[k]) {
			// Added, imported or edited (host, path, user, password,
			// auth): checked at once; what it was before says nothing now.
			ch.arrived = append(ch.arrived, k)
			delete(r.last, k)
		} else if _, known := r.last[k]; !known && !d.LastCheck.IsZero() {
			r.last[k] = incident.SweepResult{Destination: d.Name, At: d.LastCheck, Cause: d.LastVerdict.Cause,
				Summary: d.LastVerdict.Summary}
		}
	}
	r.prints, r.loaded = prints, true
	for k := range r.last {
		if !ch.keys[k] {
			delete(r.last, k)
		}
	}
	return ch
}

func (r *roster) get(name string) (Destination, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.dests[key(name)]
	return d, ok
}

// list is every destination, by key.
func (r *roster) list() []Destination {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.dests))
	for k := range r.dests {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]Destination, len(names))
	for i, k := range names {
		out[i] = r.dests[k]
	}
	return out
}

func (r *roster) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.dests)
}

func (r *roster) isLoaded() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loaded
}

// checked keeps what d's check found, unless d was edited meanwhile (fp
// is what the check replayed).
func (r *roster) checked(d Destination, fp string, found incident.SweepResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k := key(d.Name); r.prints[k] == fp {
		r.last[k] = found
	}
}

// lastCheck is what the destination's last check found, when known.
func (r *roster) lastCheck(k string) (incident.SweepResult, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.last[k]
	return res, ok
}
