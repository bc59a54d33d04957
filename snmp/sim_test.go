package snmp

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/scanwarden/scanwarden"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestProbeFixtures asks snmpsim for every fixture: each model and state
// must come out as the fixture says, and the hostile one as inert data.
func TestProbeFixtures(t *testing.T) {
	port := startSnmpsim(t, 1)[0]
	rules := DefaultRules(DefaultCodeBook())
	for _, c := range []struct {
		community string
		kyocera   bool
		model     string
		sysName   string
		status    string
		codes     string // send failure codes, sorted, with source
		dest      string
	}{
		{"kyocera-idle", true, "ECOSYS M3655idn", "MFP01", "idle", "", ""},
		{"kyocera-job1102", true, "TASKalfa 3253ci", "MFP02", "idle", "1102/job", `\\fs01.kyolab.test\scans\alice`},
		{"kyocera-console1102", true, "ECOSYS M2540dn", "MFP03", "idle", "1102/console", ""},
		{"kyocera-toner", true, "ECOSYS M3145idn", "MFP04", "idle", "", ""},
		{"kyocera-hostile", true, "<b>ECOSYS</b> M2135dn", "<script>alert(1)</script>\uFFFD[31m\uFFFD\uFFFD", "unknown", "1102/console", ""},
		{"generic-printer", false, "", "NPI0815", "idle", "", ""},
	} {
		t.Run(c.community, func(t *testing.T) {
			r, err := Probe(context.Background(), simTarget(port, c.community), rules, ProbeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Answered || r.Error != "" {
				t.Fatalf("not answered: %+v", r)
			}
			if r.Kyocera != c.kyocera || r.Model != c.model || r.SysName != c.sysName || r.Status != c.status {
				t.Errorf("got kyocera=%v model=%q sys_name=%q status=%q", r.Kyocera, r.Model, r.SysName, r.Status)
			}
			var codes []string
			dest := ""
			for _, f := range r.SendFailures {
				codes = append(codes, f.Code+"/"+string(f.Source))
				if f.Destination != "" {
					dest = f.Destination
				}
				if f.Meaning == "" || len(f.Causes) == 0 {
					t.Errorf("failure %s not explained", f.Code)
				}
			}
			sort.Strings(codes)
			if strings.Join(codes, ",") != c.codes || dest != c.dest {
				t.Errorf("send failures %v dest %q, want %q %q", codes, dest, c.codes, c.dest)
			}
			if r.PDUs > 3 {
				t.Errorf("probe used %d PDUs", r.PDUs)
			}
			// The JSON contract.
			b, _ := json.Marshal(r)
			var m map[string]any
			json.Unmarshal(b, &m)
			for _, k := range []string{"kyocera", "model", "serial", "firmware", "sys_name", "status", "alerts", "send_failures"} {
				if _, ok := m[k]; !ok {
					t.Errorf("JSON lacks %q", k)
				}
			}
			for _, f := range m["send_failures"].([]any) {
				for _, k := range []string{"code", "text", "source", "destination", "time"} {
					if _, ok := f.(map[string]any)[k]; !ok {
						t.Errorf("send_failures[] lacks %q", k)
					}
				}
			}
			for _, a := range m["alerts"].([]any) {
				for _, k := range []string{"severity", "code", "text"} {
					if _, ok := a.(map[string]any)[k]; !ok {
						t.Errorf("alerts[] lacks %q", k)
					}
				}
			}
		})
	}
	t.Run("toner alert is not a send failure", func(t *testing.T) {
		r, _ := Probe(context.Background(), simTarget(port, "kyocera-toner"), rules, ProbeOptions{})
		names := map[string]bool{}
		for _, a := range r.Alerts {
			names[a.CodeName] = true
		}
		if !names["markerTonerAlmostEmpty"] || !names["markerTonerEmpty"] || len(r.SendFailures) != 0 {
			t.Errorf("alerts %+v failures %+v", r.Alerts, r.SendFailures)
		}
	})
	t.Run("wrong community does not answer", func(t *testing.T) {
		tg := simTarget(port, "no-such-community")
		tg.Timeout, tg.Retries = 200*time.Millisecond, 0
		r, err := Probe(context.Background(), tg, rules, ProbeOptions{})
		if err != nil || r.Answered || !strings.Contains(r.Error, "no answer") {
			t.Errorf("%+v %v", r, err)
		}
		if strings.Contains(r.Error, "no-such-community") {
			t.Error("community in error text")
		}
	})
}

// TestPollerCycle polls five devices (one per port) plus a silent one and
// checks events, de-duplication across cycles, PDU counts and back-off.
func TestPollerCycle(t *testing.T) {
	ports := startSnmpsim(t, 5)
	communities := []string{"kyocera-idle", "kyocera-job1102", "kyocera-console1102", "kyocera-toner", "generic-printer"}
	var targets []Target
	for i, c := range communities {
		targets = append(targets, simTarget(ports[i], c))
	}
	silent := simTarget(ports[0], "nobody-home") // same port, unknown community: silent
	silent.Host, silent.Timeout, silent.Retries = "127.0.0.2", 200*time.Millisecond, 0
	targets = append(targets, silent)

	sink := NewMemorySink(time.Hour, 0)
	p, err := NewPoller(PollerConfig{Workers: 3, Interval: time.Second, MaxRepetitions: 8}, DefaultRules(DefaultCodeBook()), NewRecorder(sink, nil, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetTargets(targets); err != nil {
		t.Fatal(err)
	}
	st, err := p.Cycle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Polled != 6 || st.Answered != 5 || st.Silent != 1 || st.NewEvents != 2 {
		t.Errorf("cycle 1: %+v", st)
	}
	// identify GET + status GETBULK (+ one attribute GET for the failed job),
	// and 1 for the silent device: 5*2 + 1 + 1.
	if st.PDUs != 12 {
		t.Errorf("cycle 1 PDUs = %d, want 12", st.PDUs)
	}
	if len(sink.Devices) != 5 {
		t.Errorf("devices %d", len(sink.Devices))
	}
	st2, err := p.Cycle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st2.NewEvents != 0 || st2.Events != 1 {
		// The console message is seen again (a duplicate); the job row is
		// behind the cursor and not even read again.
		t.Errorf("cycle 2: %+v", st2)
	}
	if st2.PDUs != 5+1 {
		t.Errorf("cycle 2 PDUs = %d, want one per device (5) + the silent one", st2.PDUs)
	}
	// Second miss: back-off for the silent device.
	st3, _ := p.Cycle(context.Background())
	if st3.Deferred != 1 || st3.Polled != 5 {
		t.Errorf("cycle 3 should defer the silent device: %+v", st3)
	}
	evs := sink.Snapshot()
	if len(evs) != 2 {
		t.Fatalf("events: %+v", evs)
	}
	for _, ev := range evs {
		if ev.Code != "1102" || ev.Key == "" || ev.Device == "" {
			t.Errorf("event %+v", ev)
		}
	}
}

// TestPollerCancel: cancelling the context ends a cycle over silent
// devices promptly, and Open/Close stop cleanly.
func TestPollerCancel(t *testing.T) {
	var targets []Target
	for i := 0; i < 40; i++ {
		tg := simTarget(blackhole(t), "silent")
		tg.Timeout, tg.Retries = 2*time.Second, 2
		targets = append(targets, tg)
	}
	p, _ := NewPoller(PollerConfig{Workers: 4, Interval: time.Second}, DefaultRules(DefaultCodeBook()), NewRecorder(NewMemorySink(0, 0), nil, nil, nil), nil)
	if err := p.SetTargets(targets); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	st, err := p.Cycle(ctx)
	if err == nil || !st.Cancelled {
		t.Errorf("want a cancelled cycle, got %+v %v", st, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancel took %s", d)
	}
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	p.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s", d)
	}
}

// TestWalkRoundTrip records a fixture and gets the fixture back.
func TestWalkRoundTrip(t *testing.T) {
	port := startSnmpsim(t, 1)[0]
	for _, c := range []string{"kyocera-job1102", "kyocera-hostile"} {
		var buf bytes.Buffer
		st, err := Walk(context.Background(), simTarget(port, c), &buf, WalkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile("../testlab/snmp/" + c + ".snmprec")
		if buf.String() != string(want) {
			t.Errorf("%s: walk differs from fixture:\n%s\nwant:\n%s", c, buf.String(), want)
		}
		if st.PDUs > int64(st.Vars) {
			t.Errorf("%s: %d PDUs for %d vars: GETBULK not used?", c, st.PDUs, st.Vars)
		}
	}
	var buf bytes.Buffer
	st, err := Walk(context.Background(), simTarget(port, "kyocera-idle"), &buf, WalkOptions{MaxVars: 5})
	if err != nil || !st.Truncated || st.Vars != 5 {
		t.Errorf("bounded walk: %+v %v", st, err)
	}
}

// TestV3AuthPriv probes a net-snmp snmpd over SNMPv3 authPriv, and checks
// that a wrong passphrase is a clear "no answer"/refusal with no secret.
func TestV3AuthPriv(t *testing.T) {
	tg := startSnmpd(t)
	rules := DefaultRules(DefaultCodeBook())
	r, err := Probe(context.Background(), tg, rules, ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Answered || r.SysName != "snmpd3" || !r.Kyocera {
		t.Errorf("v3 probe: %+v", r)
	}
	// A poller keeps the discovered engine: the second cycle needs 1 PDU.
	p, _ := NewPoller(PollerConfig{Workers: 1}, rules, NewRecorder(NewMemorySink(0, 0), nil, nil, nil), nil)
	p.SetTargets([]Target{tg})
	p.Cycle(context.Background())
	st, err := p.Cycle(context.Background())
	if err != nil || st.Answered != 1 || st.PDUs != 1 {
		t.Errorf("v3 second cycle: %+v %v", st, err)
	}
	bad := tg
	v3 := *tg.V3
	v3.AuthPass = scanwarden.NewSecret("wrong-passphrase-xyz")
	bad.V3, bad.Timeout, bad.Retries = &v3, 300*time.Millisecond, 0
	r, err = Probe(context.Background(), bad, rules, ProbeOptions{})
	if err != nil || r.Answered || r.Error == "" || strings.Contains(r.Error, "wrong-passphrase") {
		t.Errorf("bad v3: %+v %v", r, err)
	}
}

// TestPollerRun: Run polls at once, then every Interval, calls after with
// each cycle's figures and returns nil after the asked number of cycles;
// cancelled, it returns the context's error without waiting for the tick.
func TestPollerRun(t *testing.T) {
	port := startSnmpsim(t, 1)[0]
	sink := NewMemorySink(time.Hour, 0)
	p, err := NewPoller(PollerConfig{Workers: 1, Interval: time.Second}, DefaultRules(DefaultCodeBook()), NewRecorder(sink, nil, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetTargets([]Target{simTarget(port, "kyocera-console1102")}); err != nil {
		t.Fatal(err)
	}
	var got []CycleStats
	start := time.Now()
	if err := p.Run(context.Background(), 2, func(st CycleStats) { got = append(got, st) }); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second || d > 10*time.Second {
		t.Errorf("two cycles 1s apart took %s", d)
	}
	if len(got) != 2 || got[0].NewEvents != 1 || got[1].Events != 1 || got[1].NewEvents != 0 {
		t.Errorf("cycles %+v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	start = time.Now()
	err = p.Run(ctx, 0, func(CycleStats) { n++; cancel() })
	if err != context.Canceled || n != 1 {
		t.Errorf("cancelled run: err %v after %d cycles", err, n)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %s", d)
	}
}
