package main

import (
	"bytes"
	"context"
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
