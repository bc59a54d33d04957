package systemd

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/testlab"
)

// TestDebLintian: the package as scripts/package builds it — its manual
// pages, changelog, copyright, maintainer scripts — passes lintian with no
// error, warning or info tag (one override: Go's static binary).
func TestDebLintian(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: lintian builds the package")
	}
	if _, err := exec.LookPath("lintian"); err != nil {
		testlab.Missing(t, "lintian is not installed (testlab/deps installs it): "+err.Error())
	}
	deb := buildPackage(t, "0.0.1~test1")
	out, err := exec.Command("lintian", "--tag-display-limit", "0", "--display-info", deb).CombinedOutput()
	var tags []string
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) > 2 && line[1] == ':' && strings.ContainsRune("EWIX", rune(line[0])) {
			tags = append(tags, line)
		}
	}
	if len(tags) > 0 || err != nil {
		t.Fatalf("lintian on %s (%v):\n%s", deb, err, strings.Join(tags, "\n"))
	}
}
