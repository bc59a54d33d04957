package scanwarden

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestGoOlder(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"go1.26.8", "go1.27.3", true},
		{"go1.27.2", "go1.27.3", true},
		{"go1.27.3", "go1.27.3", false},
		{"go1.27.10", "go1.27.3", false},
		{"go1.28", "go1.27.3", false},
		{"go1.27", "go1.27.3", true},
		{"go1.27rc1", "go1.27.3", true},
		{"go1.27rc1", "go1.27.0", true},
		{"devel go1.28-abc", "go1.27.3", false},
		{"", "go1.27.3", false},
		{"go1.27.3 X:nocoverageredesign", "go1.27.3", false},
	} {
		if got := goOlder(c.a, c.b); got != c.want {
			t.Errorf("goOlder(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestSafeGoIsTheToolchain holds SafeGo and go.mod's toolchain line together.
func TestSafeGoIsTheToolchain(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^toolchain (\S+)$`).FindSubmatch(b)
	if m == nil || string(m[1]) != SafeGo {
		t.Fatalf("go.mod's toolchain %q, SafeGo %q: keep them the same", m, SafeGo)
	}
}

func TestBuildInfo(t *testing.T) {
	b := BuildInfo()
	want := strings.TrimSpace(strings.SplitN(versionFile, "\n", 2)[0])
	if b.Version != want || want == "" {
		t.Fatalf("version %q, want the VERSION file's %q", b.Version, want)
	}
	if b.Go == "" {
		t.Fatal("no Go version")
	}
	s := Build{Version: "0.1.0", Commit: "98f8c80a1b2c3d4e", Dirty: true, Go: "go1.27.3"}.String()
	if s != "scanwarden 0.1.0 (commit 98f8c80a1b, modified, built with go1.27.3)" {
		t.Fatalf("String() = %q", s)
	}
	old := Build{Version: "0.1.0", Go: "go1.26.8"}
	if !goOlder(old.Go, SafeGo) {
		t.Fatal("go1.26.8 should be older than SafeGo")
	}
}
