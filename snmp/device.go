package snmp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// deviceState is what the poller remembers about one device between
// cycles. Only the worker polling the device touches it during a cycle.
type deviceState struct {
	target     Target
	inv        *Inventory
	identified time.Time
	failures   int       // consecutive silent polls
	nextPoll   time.Time // back-off: not before
	cursor     jobCursor // last job row seen
	lastUpTime int64
	sinceTop   int // polls since the job scan last started at the top
	v3         v3State
}

// pollOptions tune one device poll.
type pollOptions struct {
	maxRep        int
	identifyEvery time.Duration
	rescanEvery   int // restart the job scan at the top every N polls
}

// pollOutcome is what one device poll produced.
type pollOutcome struct {
	addr       string    // the device's HOST:PORT
	at         time.Time // when it was polled
	identified *Inventory
	status     Status
	events     []Event
	pdus       int64
	err        error
}

// pollDevice identifies the device when due, runs the status request, reads
// the attributes of new failed jobs and turns everything into events.
func pollDevice(ctx context.Context, c *client, ds *deviceState, rules *Rules, opt pollOptions, now time.Time) (out pollOutcome) {
	t := ds.target.withDefaults()
	addr := t.Addr()
	out.addr, out.at = addr, now
	before := c.pdus.Load()
	defer func() { out.pdus = c.pdus.Load() - before }()
	// The whole poll is bounded: at most 3 requests, each timeout*(retries+1).
	budget := time.Duration(3*(t.Retries+1))*t.Timeout + time.Second
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	if err := c.connect(ctx, t, uint32(opt.maxRep), &ds.v3); err != nil {
		out.err = err
		return out
	}
	defer c.close()
	if ds.inv == nil || (opt.identifyEvery > 0 && now.Sub(ds.identified) >= opt.identifyEvery) {
		inv, err := identify(ctx, c, addr, t.Version == V1)
		if err != nil {
			out.err = err
			return out
		}
		inv.SeenAt = now
		ds.inv, ds.identified = &inv, now
		out.identified = &inv
	}
	st, err := ds.readStatus(ctx, c, t, opt)
	if err != nil {
		out.err = err
		return out
	}
	out.status = st
	out.events = panelEvents(addr, st, rules, now)
	if cand := failedSendCandidates(st.jobs); len(cand) > 0 {
		jobs, err := fetchJobAttrs(ctx, c, cand)
		if err != nil {
			out.err = fmt.Errorf("jobs %s: %w", addr, err)
			return out
		}
		out.events = append(out.events, jobEvents(addr, jobs, rules, now)...)
	}
	for _, ev := range out.events {
		ev.Detail[DetailPrinterStatus] = st.Printer
		ev.Detail[DetailPrinterErrors] = strings.Join(st.Errors, ",")
	}
	return out
}

// readStatus runs the status request from ds's job cursor (from the top
// every rescanEvery polls, and again from the top when the device
// rebooted) and moves the cursor to the last job row seen.
func (ds *deviceState) readStatus(ctx context.Context, c *client, t Target, opt pollOptions) (Status, error) {
	cur := ds.cursor
	if opt.rescanEvery > 0 && ds.sinceTop >= opt.rescanEvery {
		cur = ""
	}
	st, err := pollStatus(ctx, c, t.Version, cur, opt.maxRep)
	if err != nil {
		return Status{}, fmt.Errorf("status %s: %w", t.Addr(), err)
	}
	c.remember(&ds.v3)
	if st.UpTime < ds.lastUpTime && cur != "" {
		// Rebooted: job indexes start again; read the job table from the top.
		cur = ""
		st, err = pollStatus(ctx, c, t.Version, "", opt.maxRep)
		if err != nil {
			return Status{}, fmt.Errorf("status %s: %w", t.Addr(), err)
		}
	}
	ds.lastUpTime = st.UpTime
	if cur == "" {
		ds.sinceTop = 0
	} else {
		ds.sinceTop++
	}
	// Advance the cursor to the last job row seen; when the column did not
	// fill the response we have seen the end, and the cursor stays there.
	if n := len(st.jobs); n > 0 {
		last := st.jobs[n-1]
		ds.cursor = jobCursor(fmt.Sprintf("%d.%d", last.Set, last.Index))
	}
	return st, nil
}

// isSilent says whether err means "the device did not answer".
func isSilent(err error) bool {
	return errors.Is(err, ErrNoAnswer) || errors.Is(err, context.DeadlineExceeded)
}
