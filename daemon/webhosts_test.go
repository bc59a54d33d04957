package daemon

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/config"
)

// TestWebHosts: the names the page answers to are [web] hosts, the listen
// address and the box's own host name; a [web] hosts entry that is not a
// name or an address (a port, a URL) is refused naming the key.
func TestWebHosts(t *testing.T) {
	cfg, err := config.Parse("t.toml", []byte("listen = \"10.0.0.5:8443\"\n[web]\nhosts = [\"scanbox.corp.example\", \"fe80::1\"]\n"))
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
		_, err := config.Parse("t.toml", []byte("[web]\nhosts = [\""+bad+"\"]\n"))
		if err == nil || !strings.Contains(err.Error(), "web.hosts") {
			t.Errorf("[web] hosts %q: %v", bad, err)
		}
	}
}

// TestAttackWebhookLinkLocal: the webhook could be pointed at a link-local
// address (http://169.254.169.254/…, a cloud host's metadata service): the
// daemon POSTed its incidents there. Now the config is refused naming
// allow_link_local, unless it is set.
func TestAttackWebhookLinkLocal(t *testing.T) {
	for _, u := range []string{"http://169.254.169.254/latest/meta-data", "https://[fe80::1]:8443/hook"} {
		_, err := config.Parse("t.toml", []byte("[notify]\nwebhook_url = \""+u+"\"\n"))
		if err == nil || !strings.Contains(err.Error(), "notify.webhook_url") || !strings.Contains(err.Error(), "allow_link_local") {
			t.Errorf("%s: %v, want refused naming allow_link_local", u, err)
		}
		if _, err := config.Parse("t.toml", []byte("allow_link_local = true\n[notify]\nwebhook_url = \""+u+"\"\n")); err != nil {
			t.Errorf("%s with allow_link_local: %v", u, err)
		}
	}
	if _, err := config.Parse("t.toml", []byte("[notify]\nwebhook_url = \"https://hooks.corp.example/scan\"\n")); err != nil {
		t.Errorf("a plain webhook: %v", err)
	}
}
