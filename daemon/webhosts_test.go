package daemon

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestWebHosts: the names the page answers to are [web] hosts, the listen
// address and the box's own host name; a [web] hosts entry that is not a
// name or an address (a port, a URL) is refused naming the key.
func TestWebHosts(t *testing.T) {
	cfg, err := ParseConfig("t.toml", []byte("listen = \"10.0.0.5:8443\"\n[web]\nhosts = [\"scanbox.corp.example\", \"fe80::1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	hosts := webHosts(cfg)
	name, _ := os.Hostname()
	for _, want := range []string{"scanbox.corp.example", "fe80::1", "10.0.0.5", name} {
		if !slices.Contains(hosts, want) {
			t.Errorf("web hosts %v lack %s", hosts, want)
		}
	}
	for _, bad := range []string{"scanbox:8443", "https://scanbox", "", "a b"} {
		_, err := ParseConfig("t.toml", []byte("[web]\nhosts = [\""+bad+"\"]\n"))
		if err == nil || !strings.Contains(err.Error(), "web.hosts") {
			t.Errorf("[web] hosts %q: %v", bad, err)
		}
	}
}
