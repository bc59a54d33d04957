package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

// watchStore is what the watcher records into: the state store (as
// serve's), keeping each device's inventory to print with its events.
type watchStore struct {
	*store.SNMPSink
	out *watchOutput

	mu      sync.Mutex
	devices map[string]snmp.Inventory
}

func newWatchStore(st *store.SNMPSink, out *watchOutput) *watchStore {
	return &watchStore{SNMPSink: st, out: out, devices: map[string]snmp.Inventory{}}
}

// RecordDevice keeps inv for the device's events, and stores it.
func (s *watchStore) RecordDevice(ctx context.Context, inv snmp.Inventory) error {
	s.mu.Lock()
	s.devices[inv.Address] = inv
	s.mu.Unlock()
	return s.SNMPSink.RecordDevice(ctx, inv)
}

// event prints a fresh event of a device with its inventory (the
// watcher's OnEvent).
func (s *watchStore) event(_ context.Context, ev snmp.Event) {
	s.mu.Lock()
	inv := s.devices[ev.Device]
	s.mu.Unlock()
	s.out.event(ev, inv)
}

// The --json lines: one object each, told apart by "type".
type watchStart struct {
	Type            string           `json:"type"` // start
	Devices         []string         `json:"devices"`
	NotKyocera      []string         `json:"not_kyocera,omitempty"` // answered the sweep, not watched
	Interval        snmp.Duration    `json:"interval"`
	Cycles          int              `json:"cycles"` // 0: until interrupted
	TrapListen      string           `json:"trap_listen,omitempty"`
	TrapCommunities int              `json:"trap_communities"`        // accepted communities
	TrapV3Users     []string         `json:"trap_v3_users,omitempty"` // SNMPv3 users whose traps are taken
	SMTPListen      string           `json:"smtp_listen,omitempty"`
	State           string           `json:"state"`
	Pruned          map[string]int64 `json:"pruned,omitempty"` // events the table's limits ever removed, by reason
}

type watchEvent struct {
	Type    string `json:"type"` // event
	Device  string `json:"device"`
	SysName string `json:"sys_name,omitempty"`
	Serial  string `json:"serial,omitempty"`
	Model   string `json:"model,omitempty"`
	snmp.SendFailure
	Rule string `json:"rule,omitempty"`
	Key  string `json:"key"`
}

type watchCycle struct {
	Type  string `json:"type"` // cycle
	Cycle int    `json:"cycle"`
	snmp.CycleStats
	Traps  *snmp.TrapStats  `json:"traps,omitempty"`  // totals since the start
	Mail   *snmp.MailStats  `json:"mail,omitempty"`   // totals since the start
	Pruned map[string]int64 `json:"pruned,omitempty"` // events the table's limits removed since the start, by reason
}

type watchStop struct {
	Type      string `json:"type"` // stop
	Cycles    int    `json:"cycles"`
	NewEvents int64  `json:"new_events"`
	Reason    string `json:"reason"` // "cycles done" or "interrupted"
}

// watchOutput writes events to stdout and the rest to stderr, or every
// line as JSON to stdout; one line (or block) at a time.
type watchOutput struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	json   bool
	enc    *json.Encoder
	book   *snmp.CodeBook
}

func newWatchOutput(stdout, stderr io.Writer, asJSON bool, book *snmp.CodeBook) *watchOutput {
	return &watchOutput{stdout: stdout, stderr: stderr, json: asJSON, enc: json.NewEncoder(stdout), book: book}
}

// emit writes v as one JSON line on stdout, or has human write the
// terminal form to w; one line (or block) at a time.
func (o *watchOutput) emit(v any, w io.Writer, human func(w io.Writer)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json {
		o.enc.Encode(v)
		return
	}
	human(w)
}

func (o *watchOutput) start(s watchStart) {
	o.emit(s, o.stderr, func(w io.Writer) {
		fmt.Fprintf(w, "watching %s every %s; state %s\n", plural(len(s.Devices), "device"), time.Duration(s.Interval), s.State)
		if n := len(s.NotKyocera); n > 0 {
			shown := s.NotKyocera[:min(n, 10)]
			fmt.Fprintf(w, "  not a Kyocera, not watched: %s", strings.Join(shown, ", "))
			if n > len(shown) {
				fmt.Fprintf(w, " and %d more", n-len(shown))
			}
			fmt.Fprintln(w)
		}
		if s.TrapListen != "" {
			v3 := ""
			if len(s.TrapV3Users) > 0 {
				v3 = ", v3 users: " + strings.Join(s.TrapV3Users, ", ")
			}
			fmt.Fprintf(w, "traps: listening on udp %s (accepted communities: %d%s)\n", s.TrapListen, s.TrapCommunities, v3)
		}
		if s.SMTPListen != "" {
			fmt.Fprintf(w, "mail: listening on tcp %s\n", s.SMTPListen)
		}
		if d := s.Pruned; len(d) > 0 {
			fmt.Fprintf(w, "event table: %d events pruned so far (too old %d, too many %d, too large %d)\n",
				d["age"]+d["rows"]+d["bytes"], d["age"], d["rows"], d["bytes"])
		}
	})
}

// event prints one new event with its code book explanation.
func (o *watchOutput) event(ev snmp.Event, inv snmp.Inventory) {
	sf := snmp.Explain(ev, o.book)
	v := watchEvent{Type: "event", Device: ev.Device, SysName: inv.SysName, Serial: inv.Serial, Model: inv.Model,
		SendFailure: sf, Rule: ev.Rule, Key: ev.Key}
	o.emit(v, o.stdout, func(w io.Writer) {
		code := ev.Code
		if code == "" {
			code = "----"
		}
		fmt.Fprintf(w, "%s  %s  ", ev.Time.Local().Format("2006-01-02 15:04:05"), code)
		if inv.SysName != "" {
			fmt.Fprintf(w, "%s ", devText(inv.SysName))
		}
		fmt.Fprintf(w, "%s", ev.Device)
		if inv.Serial != "" {
			fmt.Fprintf(w, " serial %s", devText(inv.Serial))
		}
		fmt.Fprintf(w, "  [%s]", ev.Source)
		if ev.Destination != "" {
			fmt.Fprintf(w, "  to %s", devText(ev.Destination))
		}
		fmt.Fprintln(w)
		switch {
		case ev.Code == "":
			fmt.Fprintf(w, "    no send-error code: %s\n", devText(ev.Text))
			return
		case sf.Meaning == "":
			fmt.Fprintf(w, "    code %s is not in the code book (scanwarden snmp codes)\n", ev.Code)
		default:
			fmt.Fprintf(w, "    %s (certainty %s)\n    likely: %s\n    first check: %s\n", sf.Meaning, sf.Certainty, strings.Join(sf.Causes, ", "), sf.FirstCheck)
		}
		fmt.Fprintf(w, "    device said: %s\n", devText(ev.Text))
	})
}

func (o *watchOutput) cycle(c watchCycle) {
	o.emit(c, o.stderr, func(w io.Writer) {
		fmt.Fprintf(w, "cycle %d: %s, devices %d (answered %d, silent %d", c.Cycle, c.Duration.Round(time.Millisecond), c.Devices, c.Answered, c.Silent)
		if c.Failed > 0 {
			fmt.Fprintf(w, ", failed %d", c.Failed)
		}
		if c.Deferred > 0 {
			fmt.Fprintf(w, ", backing off %d", c.Deferred)
		}
		fmt.Fprintf(w, "), PDUs %d, new events %d", c.PDUs, c.NewEvents)
		if t := c.Traps; t != nil {
			fmt.Fprintf(w, "; traps %d (new events %d, unverified %d, not allowed %d, wrong community %d, malformed %d, dropped %d)",
				t.Packets, t.NewEvents, t.Unverified, t.NotAllowed, t.Refused, t.Malformed, t.Dropped)
		}
		if m := c.Mail; m != nil {
			fmt.Fprintf(w, "; mail %d (new events %d, unverified %d, not understood %d, too large %d; connections refused: not allowed %d, busy %d)",
				m.Messages, m.NewEvents, m.Unverified, m.Malformed, m.Oversize, m.NotAllowed, m.Busy)
		}
		if n := c.Pruned["age"] + c.Pruned["rows"] + c.Pruned["bytes"]; n > 0 {
			fmt.Fprintf(w, "; events pruned %d (too old %d, too many %d, too large %d)", n, c.Pruned["age"], c.Pruned["rows"], c.Pruned["bytes"])
		}
		if c.Cancelled {
			fmt.Fprint(w, "; interrupted")
		}
		fmt.Fprintln(w)
	})
}

func (o *watchOutput) stop(cycles int, fresh int64, reason string) {
	v := watchStop{Type: "stop", Cycles: cycles, NewEvents: fresh, Reason: reason}
	o.emit(v, o.stderr, func(w io.Writer) {
		fmt.Fprintf(w, "stopped (%s) after %s: %s\n", reason, plural(cycles, "cycle"), plural(int(fresh), "new event"))
	})
}

// devText shows what a device sent, in quotes and cleaned once more
// (control characters replaced, bounded): nothing a device sends can drive
// the terminal. Unlike %q it leaves a UNC path's backslashes readable.
func devText(s string) string { return `"` + snmp.CleanText([]byte(s)) + `"` }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
