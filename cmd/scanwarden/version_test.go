package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
)

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"version"}, strings.NewReader(""), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// The VERSION file's version (it said "dev" unless linked), and the Go.
	b := scanwarden.BuildInfo()
	if got := out.String(); got != b.String()+"\n" || !strings.HasPrefix(got, "scanwarden 0.") || strings.Contains(got, "dev") || !strings.Contains(got, "built with go1.") {
		t.Errorf("version printed %q", got)
	}
	out.Reset()
	if code := run(context.Background(), []string{"version", "extra"}, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("version with an argument: exit %d, want %d", code, exitUsage)
	}
}

// TestUsageListsEveryCommand: the help names every command path the man
// page documents (admin setup-link was missing): each word of the path on
// a line of the command ("destination add|list|show|remove").
func TestUsageListsEveryCommand(t *testing.T) {
	for _, p := range manCommands {
		found := false
		for _, line := range strings.Split(usage, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != "scanwarden" {
				continue
			}
			words := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '|' })
			has := func(w string) bool { return slices.Contains(words, w) }
			if (f[1] == p[0] || strings.HasPrefix(f[1], p[0]+"|")) && (len(p) == 1 || all(p[1:], has)) {
				found = true
			}
		}
		if !found {
			t.Errorf("the usage does not list %q", strings.Join(p, " "))
		}
	}
}

func all(ws []string, ok func(string) bool) bool {
	for _, w := range ws {
		if !ok(w) {
			return false
		}
	}
	return true
}
