// Command snmpbench runs scanwarden's SNMP poller over many simulated
// devices (snmpsim endpoints on 127.0.0.1) and prints each cycle's figures
// and the process's peak RSS as JSON. bench/snmp.sh starts snmpsim and
// calls it; it sends traffic to loopback only.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/scanwarden/scanwarden"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
)

func main() {
	host := flag.String("host", "127.0.0.1", "snmpsim address (loopback only)")
	base := flag.Int("base-port", 20000, "first endpoint port")
	count := flag.Int("count", 1000, "number of endpoints (devices), at most 5000")
	community := flag.String("community", "kyocera-idle", "fixture served to every device")
	workers := flag.Int("workers", 64, "poller workers")
	cycles := flag.Int("cycles", 2, "cycles to run (1..5): the first identifies, the next are pure status cycles")
	timeout := flag.Duration("timeout", 2*time.Second, "per-request timeout")
	limit := flag.Duration("limit", 120*time.Second, "stop everything after this long")
	flag.Parse()
	if *host != "127.0.0.1" && !strings.HasPrefix(*host, "127.") {
		fmt.Fprintln(os.Stderr, "snmpbench: loopback only")
		os.Exit(2)
	}
	if *count < 1 || *count > 5000 || *cycles < 1 || *cycles > 5 {
		fmt.Fprintln(os.Stderr, "snmpbench: count 1..5000, cycles 1..5")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *limit)
	defer cancel()
	var targets []snmp.Target
	for i := 0; i < *count; i++ {
		targets = append(targets, snmp.Target{Host: *host, Port: uint16(*base + i), Community: scanwarden.NewSecret(*community),
			Timeout: *timeout, Retries: 1})
	}
	sink := &countingSink{}
	p, err := snmp.NewPoller(snmp.PollerConfig{Workers: *workers, Interval: time.Minute}, snmp.DefaultRules(snmp.DefaultCodeBook()), snmp.NewRecorder(sink, nil, nil, nil), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "snmpbench:", err)
		os.Exit(2)
	}
	if err := p.SetTargets(targets); err != nil {
		fmt.Fprintln(os.Stderr, "snmpbench:", err)
		os.Exit(2)
	}
	type cycleOut struct {
		Cycle         int     `json:"cycle"`
		WallSeconds   float64 `json:"wall_seconds"`
		Polled        int     `json:"polled"`
		Answered      int     `json:"answered"`
		Silent        int     `json:"silent"`
		Failed        int     `json:"failed"`
		PDUs          int64   `json:"pdus"`
		PDUsPerDevice float64 `json:"pdus_per_device"`
	}
	var outs []cycleOut
	for c := 1; c <= *cycles; c++ {
		st, err := p.Cycle(ctx)
		outs = append(outs, cycleOut{c, st.Duration.Seconds(), st.Polled, st.Answered, st.Silent, st.Failed, st.PDUs, st.PDUsPerDevice()})
		if err != nil {
			fmt.Fprintln(os.Stderr, "snmpbench: cycle", c, err)
			break
		}
	}
	res := map[string]any{
		"devices": *count, "workers": *workers, "cycles": outs,
		"peak_rss_mb": float64(vmHWM()) / 1024, "inventoried": sink.devices.Load(),
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

// vmHWM is the process's peak resident set in kB (Linux).
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return 0
}

// countingSink counts what the poller reports; the bench measures the
// poller, not a store.
type countingSink struct{ devices, events atomic.Int64 }

func (s *countingSink) RecordDevice(context.Context, snmp.Inventory) error {
	s.devices.Add(1)
	return nil
}

func (s *countingSink) RecordEvent(context.Context, snmp.Event) (bool, error) {
	s.events.Add(1)
	return true, nil
}

func (s *countingSink) RecordEvents(_ context.Context, evs []snmp.Event) ([]bool, error) {
	s.events.Add(int64(len(evs)))
	fresh := make([]bool, len(evs))
	for i := range fresh {
		fresh[i] = true
	}
	return fresh, nil
}

func (s *countingSink) RecordSeen(context.Context, string, time.Time) error { return nil }
