package config

import (
	"bytes"
	"strings"
	"testing"
)

// TestConfigKeysDocumented: every key of the file has a meaning (its
// field's comment in config.go) and a default, and scanwarden.toml(5)
// lists each one under its section.
func TestConfigKeysDocumented(t *testing.T) {
	keys, err := Keys()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 50 {
		t.Fatalf("only %d keys found", len(keys))
	}
	var page bytes.Buffer
	if err := WriteMan(&page, "test"); err != nil {
		t.Fatal(err)
	}
	man := page.String()
	section := ""
	for _, k := range keys {
		if len(strings.Fields(k.Meaning)) < 2 {
			t.Errorf("%s has no meaning: write a comment on its field in config/", k.Name())
		}
		if k.Default == "" {
			t.Errorf("%s has no default", k.Name())
		}
		if k.Section != section {
			section = k.Section
			i := strings.Index(man, ".SH ["+section+"]\n")
			if section != "" && i < 0 {
				t.Errorf("no section [%s] on the page", section)
			}
		}
		if !strings.Contains(man, ".B "+strings.ReplaceAll(k.Key, "-", `\-`)+"\n") {
			t.Errorf("%s is not on the page", k.Name())
		}
	}
	for _, want := range []string{"checks.interval", "checks.event_gap", "receiver.retention", "receiver.bridge_stuck_after", "web.key_file", "snmp.trap_v3_priv_proto"} {
		found := false
		for _, k := range keys {
			found = found || k.Name() == want
		}
		if !found {
			t.Errorf("%s not among the keys", want)
		}
	}
}
