package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"version"}, strings.NewReader(""), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got := out.String(); got != "scanwarden "+version+"\n" {
		t.Errorf("version printed %q", got)
	}
	out.Reset()
	if code := run(context.Background(), []string{"version", "extra"}, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("version with an argument: exit %d, want %d", code, exitUsage)
	}
}
