package main

import (
	"strings"
	"testing"
)

// TestDestinationAddLinkLocal: `destination add` of a link-local server is
// refused naming the setting that allows it (no installed config here).
func TestDestinationAddLinkLocal(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	r := runCLI(t, nil, "", "destination", "add", "meta", "//169.254.169.254/scans", "--user", "u", "--no-password", "--data-dir", dir)
	if r.code == exitOK || !strings.Contains(r.stderr, "allow_link_local") {
		t.Errorf("destination add of 169.254.169.254: exit %d %s", r.code, r.stderr)
	}
}
