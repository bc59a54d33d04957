package monitor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// run checks one destination and feeds the result on (the queue runs it).
func (m *Monitor) run(j *job) {
	start := m.cfg.Now()
	progress := func(s smbcheck.Step) {
		for _, p := range j.progress {
			p(s)
		}
	}
	var rep smbcheck.Report
	if why := j.dest.PasswordUnreadable; why != "" {
		rep = smbcheck.PasswordUnreadable(j.dest.Target, why, start)
		for _, s := range rep.Steps {
			progress(s)
		}
	} else {
		rep = m.checker.Check(m.ctx, j.dest, progress)
	}
	var res Result
	if m.ctx.Err() != nil {
		// Interrupted by the shutdown: not a finding about the destination.
		res = Result{Report: rep, Err: errors.New("check interrupted: scanwarden is stopping")}
		m.log.Warn("check interrupted by shutdown", "destination", j.dest.Name, "reason", j.reason)
		m.events.result(j, incident.SweepResult{Destination: j.dest.Name, At: start, Fresh: true, Interrupted: true})
		if len(j.inputs) > 0 {
			res.Incident, _ = m.desk.apply(context.Background(), j.dest, j.inputs)
		}
	} else {
		res = m.record(j, rep, start)
	}
	for _, w := range j.waiters {
		w <- res
	}
}

// record stores a finished check's report, folds it (with the failures
// that waited for it) into the incident and hands it on: warnings, the
// destination's last check, OnCheck, the sweeps waiting for it.
func (m *Monitor) record(j *job, rep smbcheck.Report, start time.Time) Result {
	took := m.cfg.Now().Sub(start)
	m.log.Info("checked", "destination", j.dest.Name, "reason", j.reason, "cause", rep.Verdict.Cause, "ms", took.Milliseconds())
	ctx := context.WithoutCancel(m.ctx)
	res := Result{Report: rep}
	id, err := m.reports.AddReport(ctx, j.dest.Name, rep)
	if err != nil {
		m.fault("store report of "+j.dest.Name, err)
	}
	in := incident.Input{Kind: incident.KindCheck, At: m.cfg.Now(), Destination: j.dest.Name, Device: j.dest.Device,
		Verdict: rep.Verdict, ReportID: id, Evidence: rep.ServerLog.Lines(), Group: incident.KeyOf(rep), Bridged: j.dest.Bridged}
	if err == nil {
		m.desk.warn(ctx, j.dest, rep)
	}
	var aerr error
	res.Incident, aerr = m.desk.apply(ctx, j.dest, append(j.inputs, in))
	if aerr != nil {
		res.Err = aerr
	} else if err == nil && m.cfg.OnFault != nil {
		m.cfg.OnFault("store", nil)
	}
	found := incident.SweepResult{Destination: j.dest.Name, At: start, Cause: rep.Verdict.Cause,
		Summary: rep.Verdict.Summary, Fresh: true}
	m.tally.add(func(s *Stats) {
		s.Checks++
		if j.reason == ReasonEvent {
			s.EventChecks++
		}
	})
	m.list.checked(j.dest, fingerprint(j.dest), found) // not when it was edited meanwhile
	if m.cfg.OnCheck != nil {
		m.cfg.OnCheck(j.dest, rep, took, j.reason)
	}
	m.events.result(j, found)
	return res
}

// ErrUnknownDestination is CheckNow's answer for a name not registered.
var ErrUnknownDestination = errors.New("no such destination")

// CheckNow checks the named destination now (behind the caps, like any
// other check), streaming each step to progress, and returns the report
// once stored and applied. A check already waiting for that destination is
// joined instead of a second one; either way it is an admin's (AskedAt).
func (m *Monitor) CheckNow(ctx context.Context, name string, progress func(smbcheck.Step)) (Result, error) {
	d, ok := m.list.get(name)
	if !ok {
		m.refresh(ctx, true)
		if d, ok = m.list.get(name); !ok {
			return Result{}, fmt.Errorf("%q: %w", name, ErrUnknownDestination)
		}
	}
	done := make(chan Result, 1)
	asked := m.cfg.Now()
	ok = m.queue.offer([]string{key(name)}, func(_ int, waiting *job) *job {
		j := waiting
		if j == nil {
			j = &job{dest: d, reason: ReasonManual}
		}
		j.dest.AskedAt = asked
		j.waiters = append(j.waiters, done)
		if progress != nil {
			j.progress = append(j.progress, progress)
		}
		return j
	})
	if !ok {
		return Result{}, errors.New("scanwarden is stopping")
	}
	select {
	case r := <-done:
		return r, r.Err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// CheckAll queues a check of every registered destination now ("Check all
// now"), behind the same caps as any other check: MaxConcurrent, one at a
// time per file server, the checker's lockout budget. A destination whose
// check is already waiting keeps that one. It does not wait for the
// checks; n is how many destinations will be checked. Each is an admin's
// check (AskedAt): a file server is asked afresh once, by the first of its
// destinations' checks.
func (m *Monitor) CheckAll(ctx context.Context) (n int, err error) {
	m.refresh(ctx, true)
	now := m.cfg.Now()
	ds := m.list.list()
	if m.queue.closed() {
		return 0, errors.New("scanwarden is stopping")
	}
	// Their regular intervals run from these checks.
	m.times.restart(ds, now)
	keys := make([]string, len(ds))
	for i, d := range ds {
		keys[i] = key(d.Name)
	}
	if !m.queue.offer(keys, func(i int, waiting *job) *job {
		if waiting != nil {
			waiting.dest.AskedAt = now
			return nil
		}
		d := ds[i]
		d.AskedAt = now
		return &job{dest: d, reason: ReasonManual}
	}) {
		return 0, errors.New("scanwarden is stopping")
	}
	return len(ds), nil
}
