package scanwarden

import (
	_ "embed"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
)

//go:embed VERSION
var versionFile string

// linkedVersion is set at link time by scripts/package
// (-X github.com/scanwarden/scanwarden.linkedVersion=0.1.0+git…); a plain
// go build leaves it empty and the VERSION file's version is used.
var linkedVersion string

// SafeGo is the oldest Go whose standard library has the fixes for the
// advisories our code reaches (TLS/x509, the MIME header limits behind the
// mail parser; scripts/vulncheck). go.mod's toolchain line names the same
// version (a test holds the two together).
const SafeGo = "go1.27.3"

// Build says which scanwarden this is: its version, the commit and the Go
// it was built from.
type Build struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"` // empty when built outside a git checkout
	Dirty   bool   `json:"dirty,omitempty"`  // the checkout had uncommitted changes
	Go      string `json:"go"`
	// Warning is set when the Go it was built with is older than SafeGo.
	Warning string `json:"warning,omitempty"`
}

// BuildInfo reads the running binary's build.
func BuildInfo() Build {
	b := Build{Version: linkedVersion}
	if b.Version == "" {
		b.Version = strings.TrimSpace(strings.SplitN(versionFile, "\n", 2)[0])
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Go = bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Dirty = s.Value == "true"
		}
	}
	if goOlder(b.Go, SafeGo) {
		b.Warning = fmt.Sprintf("built with %s, which has standard-library advisories scanwarden reaches (TLS/x509, MIME header limits): build with %s or newer", b.Go, SafeGo)
	}
	return b
}

// String is the one line `version` and `doctor` print:
// "scanwarden 0.1.0 (commit 98f8c80a1b, built with go1.27.3)".
func (b Build) String() string {
	var parts []string
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 10 {
			c = c[:10]
		}
		if b.Dirty {
			c += ", modified"
		}
		parts = append(parts, "commit "+c)
	}
	if b.Go != "" {
		parts = append(parts, "built with "+b.Go)
	}
	s := "scanwarden " + b.Version
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// goOlder reports whether Go version a ("go1.26.8", "go1.27rc1") is older
// than b. A version it cannot read (a development build) is not older.
func goOlder(a, b string) bool {
	va, oka := goVersion(a)
	vb, okb := goVersion(b)
	if !oka || !okb {
		return false
	}
	for i := range va {
		if va[i] != vb[i] {
			return va[i] < vb[i]
		}
	}
	return false
}

// goVersion reads go1.X[.Y] into {1, X, Y}; a pre-release (go1.27rc1) reads
// as {1, 27, -1}, before go1.27.0.
func goVersion(s string) ([3]int, bool) {
	var v [3]int
	s, ok := strings.CutPrefix(s, "go")
	if !ok {
		return v, false
	}
	s, _, _ = strings.Cut(s, " ") // "go1.27.3 X:…" experiments
	fields := strings.SplitN(s, ".", 3)
	if len(fields) < 2 {
		return v, false
	}
	for i, f := range fields {
		if j := strings.IndexAny(f, "rcbeta"); j > 0 && i == 1 {
			n, err := strconv.Atoi(f[:j])
			if err != nil {
				return v, false
			}
			v[1], v[2] = n, -1
			return v, true
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return v, false
		}
		v[i] = n
	}
	return v, true
}
