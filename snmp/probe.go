package snmp

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ProbeResult is `scanwarden snmp probe --json`. Its field names are a
// contract (issue 4): kyocera, model, serial, firmware, sys_name, status,
// alerts (severity, code, text), send_failures (code, text, source,
// destination, time). Other fields may be added, never renamed.
type ProbeResult struct {
	Address      string        `json:"address"`
	Answered     bool          `json:"answered"`
	Error        string        `json:"error,omitempty"` // why the device did not answer
	Kyocera      bool          `json:"kyocera"`
	Model        string        `json:"model"`
	Serial       string        `json:"serial"`
	Firmware     string        `json:"firmware"`
	SysName      string        `json:"sys_name"`
	SysLocation  string        `json:"sys_location"`
	SysObjectID  string        `json:"sys_object_id"`
	MAC          string        `json:"mac"`
	Status       string        `json:"status"`
	Errors       []string      `json:"errors"`
	Console      []string      `json:"console"`
	Alerts       []Alert       `json:"alerts"`
	SendFailures []SendFailure `json:"send_failures"`
	PDUs         int64         `json:"pdus"`
	ElapsedMS    int64         `json:"elapsed_ms"`
}

// SendFailure is one send failure with its code book explanation.
type SendFailure struct {
	Code        string            `json:"code"`
	Text        string            `json:"text"`
	Source      Source            `json:"source"`
	Destination string            `json:"destination"`
	Time        time.Time         `json:"time"`
	Meaning     string            `json:"meaning,omitempty"`
	Causes      []string          `json:"causes,omitempty"`
	FirstCheck  string            `json:"first_check,omitempty"`
	Certainty   string            `json:"certainty,omitempty"`
	Detail      map[string]string `json:"detail,omitempty"`
}

// Explain attaches the code book entry to an event.
func Explain(ev Event, book *CodeBook) SendFailure {
	sf := SendFailure{Code: ev.Code, Text: ev.Text, Source: ev.Source, Destination: ev.Destination, Time: ev.Time, Detail: ev.Detail}
	if e, ok := book.Lookup(ev.Code); ok {
		sf.Meaning, sf.Causes, sf.FirstCheck, sf.Certainty = e.Meaning, e.Causes, e.FirstCheck, e.Certainty
	}
	return sf
}

// ProbeOptions tune Probe.
type ProbeOptions struct {
	MaxRepetitions int // default 8
}

// Probe asks one device for inventory, status, alerts and recent send
// failures (every failed send job still in its job table, and what the
// panel and alert tables show). A device that does not answer is a result
// (Answered false, Error set), not an error; the error is for bad input.
func Probe(ctx context.Context, t Target, rules *Rules, opt ProbeOptions) (ProbeResult, error) {
	if err := t.Validate(); err != nil {
		return ProbeResult{}, err
	}
	if rules == nil {
		return ProbeResult{}, errors.New("probe: no rules")
	}
	t = t.withDefaults()
	if opt.MaxRepetitions <= 0 {
		opt.MaxRepetitions = 8
	}
	start := time.Now()
	res := ProbeResult{Address: t.Addr(), Errors: []string{}, Console: []string{}, Alerts: []Alert{}, SendFailures: []SendFailure{}}
	c := newClient()
	ds := &deviceState{target: t}
	out := pollDevice(ctx, c, ds, rules, pollOptions{maxRep: opt.MaxRepetitions}, time.Now())
	res.PDUs = out.pdus
	res.ElapsedMS = time.Since(start).Milliseconds()
	if ds.inv != nil {
		res.Answered = true
		inv := ds.inv
		res.Kyocera, res.Model, res.Serial, res.Firmware = inv.Kyocera, inv.Model, inv.Serial, inv.Firmware
		res.SysName, res.SysLocation, res.SysObjectID, res.MAC = inv.SysName, inv.SysLocation, inv.SysObjectID, inv.MAC
	}
	if out.err != nil {
		if ctx.Err() != nil && !errors.Is(out.err, context.DeadlineExceeded) {
			return res, fmt.Errorf("probe %s: %w", t.Addr(), ctx.Err())
		}
		res.Error = out.err.Error()
		return res, nil
	}
	st := out.status
	res.Status, res.Errors, res.Console, res.Alerts = st.Printer, st.Errors, st.Console, st.Alerts
	for _, ev := range out.events {
		res.SendFailures = append(res.SendFailures, Explain(ev, rules.Book()))
	}
	return res, nil
}
