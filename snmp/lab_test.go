package snmp

import (
	"context"
	"github.com/scanwarden/scanwarden"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabSNMP runs against the lab's snmpsim (10.77.0.40) and v3 snmpd
// (10.77.0.41), started by testlab/snmp.sh; skipped when the lab is not up.
func TestLabSNMP(t *testing.T) {
	lab := testlab.Require(t)
	simIP, d3IP := lab.Getenv("SWLAB_SNMPSIM_IP"), lab.Getenv("SWLAB_SNMPD_IP")
	if simIP == "" || d3IP == "" {
		testlab.Missing(t, "lab is up but testlab/snmp.sh did not export SWLAB_SNMPSIM_IP/SWLAB_SNMPD_IP")
	}
	var port uint16 = DefaultPort
	if p := lab.Getenv("SWLAB_SNMP_PORT"); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			t.Fatalf("SWLAB_SNMP_PORT=%q", p)
		}
		port = uint16(n)
	}
	rules := DefaultRules(DefaultCodeBook())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for community, code := range map[string]string{"kyocera-idle": "", "kyocera-job1102": "1102", "kyocera-console1102": "1102", "kyocera-toner": ""} {
		r, err := Probe(ctx, Target{Host: simIP, Port: port, Community: scanwarden.NewSecret(community)}, rules, ProbeOptions{})
		if err != nil || !r.Answered || !r.Kyocera {
			t.Errorf("%s: %+v %v", community, r, err)
			continue
		}
		got := ""
		for _, f := range r.SendFailures {
			got = f.Code
		}
		if got != code {
			t.Errorf("%s: send failure %q, want %q", community, got, code)
		}
	}
	v3 := Target{Host: d3IP, Port: port, Version: V3, V3: &V3Auth{
		User: lab.Getenv("SWLAB_SNMP_V3_USER"), AuthProto: lab.Getenv("SWLAB_SNMP_V3_AUTH_PROTO"), PrivProto: lab.Getenv("SWLAB_SNMP_V3_PRIV_PROTO"),
		AuthPass: scanwarden.NewSecret(lab.Getenv("SWLAB_SNMP_V3_AUTH")), PrivPass: scanwarden.NewSecret(lab.Getenv("SWLAB_SNMP_V3_PRIV")),
	}}
	r, err := Probe(ctx, v3, rules, ProbeOptions{})
	if err != nil || !r.Answered || r.SysName != "snmpd3" {
		t.Errorf("v3 authPriv: %+v %v", r, err)
	}
	// The poller across the lab: one status cycle.
	p, _ := NewPoller(PollerConfig{Workers: 4}, rules, NewRecorder(NewMemorySink(0, 0), nil, nil, nil), nil)
	p.SetTargets([]Target{{Host: simIP, Port: port, Community: scanwarden.NewSecret("kyocera-job1102")}, v3})
	st, err := p.Cycle(ctx)
	if err != nil || st.Answered != 2 || st.NewEvents != 1 {
		t.Errorf("lab cycle: %+v %v", st, err)
	}
}

// TestLabSweep sweeps the lab's two SNMP addresses with snmpsim's v2c
// community: snmpsim (10.77.0.40) is identified, the v3-only snmpd
// (10.77.0.41) stays silent and is absent.
func TestLabSweep(t *testing.T) {
	lab := testlab.Require(t)
	simIP, d3IP := lab.Getenv("SWLAB_SNMPSIM_IP"), lab.Getenv("SWLAB_SNMPD_IP")
	if simIP == "" || d3IP == "" {
		testlab.Missing(t, "lab is up but testlab/snmp.sh did not export SWLAB_SNMPSIM_IP/SWLAB_SNMPD_IP")
	}
	prefixes := []netip.Prefix{netip.PrefixFrom(netip.MustParseAddr(simIP), 32), netip.PrefixFrom(netip.MustParseAddr(d3IP), 32)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tmpl := Target{Community: scanwarden.NewSecret("kyocera-idle"), Timeout: 500 * time.Millisecond, Retries: 0}
	found, err := Sweep(ctx, prefixes, tmpl, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Address != simIP+":161" || !found[0].Kyocera || found[0].SeenAt.IsZero() {
		t.Errorf("found %+v, want snmpsim at %s alone", found, simIP)
	}
}
