package daemon

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	stdsmtp "net/smtp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/registry"
)

// The watch keeps a device name's last good address across a reload: the
// device is registered by name, its mail is taken; then DNS fails and the
// config is reloaded (a new watcher), and mail from the address the name
// last resolved to is still taken, with the warning that says so. The
// resolver is a fake (no DNS server here fails on demand); the SMTP
// listener is serve's own, its 220 or 554 at connect the admission.
func TestWatchNamesKeptAcrossReload(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := testConfig(t, "[snmp]\nsmtp_listen = \""+addr+"\"\n")
	st := testStore(t, cfg)
	if err := st.Devices().PutDevice(ctx, registry.Device{Name: "mfp", Address: "localhost"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	dns := &fakeDNS{zone: map[string][]netip.Addr{"localhost": {netip.MustParseAddr("127.0.0.1")}}}
	logs := &syncBuffer{}
	m := &Main{Config: &cfg, Stderr: logs, Getenv: func(string) string { return "" }}
	m.resolver = dns
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs.String())
		}
	})
	admitted := func() error {
		c, err := stdsmtp.Dial(addr)
		if err == nil {
			c.Quit()
		}
		return err
	}
	waitUntil(t, 10*time.Second, "the device's mail taken", func() bool { return admitted() == nil })

	dns.fail("localhost")
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the warning that the last good address is kept", func() bool {
		return strings.Contains(logs.String(), "still taken from the addresses it last resolved to")
	})
	if err := admitted(); err != nil {
		t.Fatalf("after the reload with DNS down: %v", err)
	}
	if dns.asked("localhost") < 2 {
		t.Fatalf("localhost asked %d times", dns.asked("localhost"))
	}
}

// [snmp] cidr and allow are read with the validation's parser (an address
// or a network, spaces around it ignored); an entry that does not parse —
// one that got past the validation, set here directly — stops the watch
// with the "snmp" fault naming it: never left out, which would widen a
// sweep's silence or narrow what is taken without a word.
func TestWatchNetworksOneParser(t *testing.T) {
	s := config.SNMP{CIDR: []string{" 10.0.0.0/24", "10.0.1.7"}, Allow: []string{"10.0.2.9/24", "fd00::5"}}
	nets, err := s.Networks()
	if err != nil || !slices.Equal(nets, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("10.0.1.7/32")}) {
		t.Fatalf("networks %v, %v", nets, err)
	}
	allow, err := s.AllowNets()
	if err != nil || !slices.Equal(allow, []netip.Prefix{netip.MustParsePrefix("10.0.2.0/24"), netip.MustParsePrefix("fd00::5/128")}) {
		t.Fatalf("allow %v, %v", allow, err)
	}
	for _, c := range []struct {
		key, value string
		set        func(*config.SNMP)
	}{
		{"snmp.allow", `"relay"`, func(s *config.SNMP) { s.SMTPListen = "127.0.0.1:0"; s.Allow = []string{"10.0.0.0/24", "relay"} }},
		{"snmp.cidr", `"office"`, func(s *config.SNMP) { s.CIDR = []string{"office"} }},
	} {
		cfg := config.Defaults()
		c.set(&cfg.SNMP)
		fs := newFaults(time.Now)
		p := &watchPart{env: env{faults: fs, log: slog.New(slog.DiscardHandler)}, cfg: cfg}
		if w := p.open(nil); w != nil {
			w.Close()
			t.Errorf("%s: the watch runs", c.key)
		}
		var msgs []string
		for _, f := range fs.list() {
			if f.Part == "snmp" {
				msgs = append(msgs, f.Message)
			}
		}
		if len(msgs) != 1 || !strings.Contains(msgs[0], c.key) || !strings.Contains(msgs[0], c.value) {
			t.Errorf("%s: snmp faults %q", c.key, msgs)
		}
	}
}
