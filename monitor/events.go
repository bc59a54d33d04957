package monitor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/snmp"
)

// router takes a device's fresh send failure to the destinations it
// concerns: one it names gets the failure on its incident and a check
// (none within event_gap of the last one an event asked for); one naming
// no destination sweeps the device's destinations (see sweep).
type router struct {
	reg    Registry
	gap    time.Duration
	sweeps Sweeps // nil: what a sweep found is not kept
	now    func() time.Time
	log    *slog.Logger
	list   *roster
	queue  *queue
	desk   *desk
	tally  *tally
	fault  func(what string, err error)
	base   context.Context // what a sweep's findings are written under (set by Open)

	mu        sync.Mutex
	lastEvent map[string]time.Time // last event-triggered check
}

// event is Monitor.Event.
func (r *router) event(ctx context.Context, ev snmp.Event) {
	ds, err := r.reg.Match(ctx, ev)
	if err != nil {
		r.fault("match event of "+ev.Device, err)
		return
	}
	if len(ds) == 0 {
		r.tally.add(func(s *Stats) { s.Unmatched++ })
		r.log.Info("send failure matches no registered destination", "device", ev.Device, "code", ev.Code, "destination_text", ev.Destination)
		return
	}
	if ev.Destination == "" {
		r.sweep(ev, ds)
		return
	}
	now := r.now()
	keys, ins := make([]string, len(ds)), make([]incident.Input, len(ds))
	for i, d := range ds {
		keys[i] = key(d.Name)
		ins[i] = incident.Input{Kind: incident.KindDeviceFailure, At: ev.Time, Destination: d.Name, Device: d.Device,
			Code: ev.Code, Text: ev.Text}
		if ins[i].At.IsZero() {
			ins[i].At = now
		}
	}
	var recent []int // checked for an event within the gap: the failure goes on the incident alone
	r.queue.offer(keys, func(i int, waiting *job) *job {
		switch {
		case waiting != nil:
			waiting.inputs = append(waiting.inputs, ins[i]) // a check is already waiting: it takes this one along
			return nil
		case !r.eventCheck(keys[i], now):
			recent = append(recent, i)
			return nil
		}
		return &job{dest: ds[i], reason: ReasonEvent, inputs: []incident.Input{ins[i]}}
	})
	for _, i := range recent {
		if _, err := r.desk.apply(context.WithoutCancel(ctx), ds[i], []incident.Input{ins[i]}); err != nil {
			r.log.Warn("device failure not recorded on incident", "destination", ds[i].Name, "err", err)
		}
	}
}

// eventCheck notes an event-triggered check of k at now unless one was
// noted within event_gap; it says whether it did.
func (r *router) eventCheck(k string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if last, ok := r.lastEvent[k]; ok && now.Sub(last) < r.gap {
		return false
	}
	r.lastEvent[k] = now
	return true
}

// noteEventCheck notes an event-triggered check of k at now.
func (r *router) noteEventCheck(k string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastEvent[k] = now
}

// relist forgets the destinations no longer listed.
func (r *router) relist(ch listed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.lastEvent {
		if !ch.keys[k] {
			delete(r.lastEvent, k)
		}
	}
}

// sweep handles a send failure that names no destination (a console text
// such as "Cannot send. Error 1103", an alert, a job with no folder, a mail
// without one): each of the device's destinations whose last check is
// older than EventGap is checked, through the same queue and caps as any
// check (MaxConcurrent, one at a time per file server, the checker's
// lockout budget); one checked more recently counts with that check. When
// every result is in, the failure goes on the incident of each one that
// fails (with what the others found), and what was found is kept with the
// event (Config.Sweeps): the one failing destination, or that all of them
// accept scans now and the failure was transient or on the device.
func (r *router) sweep(ev snmp.Event, ds []Destination) {
	now := r.now()
	if ev.Time.IsZero() {
		ev.Time = now
	}
	sw := &sweep{ev: ev, s: incident.Sweep{At: now, Device: ds[0].Device, DeviceStatus: deviceStatus(ev),
		Checked: make([]incident.SweepResult, len(ds))}}
	keys := make([]string, len(ds))
	for i, d := range ds {
		keys[i] = key(d.Name)
		sw.s.Checked[i] = incident.SweepResult{Destination: d.Name}
	}
	checks := 0
	// No check offered here runs before every slot is placed (queue.offer).
	ok := r.queue.offer(keys, func(i int, waiting *job) *job {
		slot := sweepSlot{sw, i}
		if waiting != nil {
			waiting.sweeps = append(waiting.sweeps, slot) // a check already waits: its result counts
			checks++
			sw.expect()
			return nil
		}
		if last, ok := r.list.lastCheck(keys[i]); ok && now.Sub(last.At) < r.gap {
			last.Fresh = false
			sw.found(i, last)
			return nil
		}
		r.noteEventCheck(keys[i], now)
		checks++
		sw.expect()
		return &job{dest: ds[i], reason: ReasonEvent, sweeps: []sweepSlot{slot}}
	})
	if !ok {
		return
	}
	r.log.Info("send failure names no destination: checking the device's destinations", "device", ev.Device,
		"code", ev.Code, "destinations", len(ds), "checks", checks)
	if checks == 0 {
		r.finish(sw)
	}
}

// result hands a finished check to the sweeps waiting for it.
func (r *router) result(j *job, res incident.SweepResult) {
	for _, sl := range j.sweeps {
		if sl.sw.put(sl.i, res) {
			r.finish(sl.sw)
		}
	}
}

// finish puts a complete sweep on the failing destinations' incidents and
// keeps it with the event.
func (r *router) finish(sw *sweep) {
	ctx := r.base
	s := sw.result()
	s.At = r.now()
	ev := sw.ev
	failing := s.Failing()
	text := ev.Text
	if text != "" {
		text += " — "
	}
	text += "the device named no destination; checked " + s.Findings() + ". " + s.Text()
	for _, f := range failing {
		d, ok := r.list.get(f.Destination)
		if !ok {
			d = Destination{Name: f.Destination, Device: s.Device}
		}
		in := incident.Input{Kind: incident.KindDeviceFailure, At: ev.Time, Destination: d.Name, Device: d.Device,
			Code: ev.Code, Text: text}
		if _, err := r.desk.apply(ctx, d, []incident.Input{in}); err != nil {
			r.log.Warn("device failure not recorded on incident", "destination", d.Name, "err", err)
		}
	}
	if r.sweeps != nil {
		if err := r.sweeps.RecordSweep(ctx, ev, s); err != nil {
			r.fault("keep what the checks after "+ev.Device+"'s failure found", err)
		}
	}
	r.log.Info("send failure naming no destination: checks done", "device", ev.Device, "code", ev.Code,
		"failing", len(failing), "found", s.Findings())
}

// sweep gathers the checks of a device's destinations for one send
// failure that named none of them.
type sweep struct {
	ev snmp.Event

	mu   sync.Mutex
	s    incident.Sweep
	left int // checks still to come
}

type sweepSlot struct {
	sw *sweep
	i  int // index in sw.s.Checked
}

// expect counts one more check to come.
func (s *sweep) expect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.left++
}

// found puts what is known of destination i without a check.
func (s *sweep) found(i int, r incident.SweepResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s.Checked[i] = r
}

// put puts a check's result; done when it was the last to come.
func (s *sweep) put(i int, r incident.SweepResult) (done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s.Checked[i] = r
	s.left--
	return s.left == 0
}

// result is the sweep as it stands.
func (s *sweep) result() incident.Sweep {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.s
	out.Checked = append([]incident.SweepResult(nil), s.s.Checked...)
	return out
}

// deviceStatus is the device's own status as the poll that found the
// failure read it ("" when the event came another way).
func deviceStatus(ev snmp.Event) string {
	st := ev.Detail[snmp.DetailPrinterStatus]
	if st == "" {
		return ""
	}
	if errs := ev.Detail[snmp.DetailPrinterErrors]; errs != "" {
		return st + "; errors: " + errs
	}
	return st + ", no error"
}
