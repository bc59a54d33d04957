package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestDirCanaries(t *testing.T) {
	ctx := context.Background()
	j := dirCanaries{filepath.Join(t.TempDir(), "state", "canaries")}
	if left, err := j.Left(ctx, `\\fs\scans`); err != nil || len(left) != 0 {
		t.Fatalf("empty journal: %v %v", left, err)
	}
	j.Record(ctx, `\\fs\scans`, "a.tmp")
	j.Record(ctx, `\\fs\scans`, "b.tmp")
	j.Record(ctx, `\\fs\other`, "c.tmp")
	left, err := j.Left(ctx, `\\fs\scans`)
	if err != nil || len(left) != 2 {
		t.Fatalf("left %v %v", left, err)
	}
	if fi, err := os.Stat(j.dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("journal dir: %v %v", fi, err)
	}
	j.Forget(ctx, `\\fs\scans`, "a.tmp")
	if err := j.Forget(ctx, `\\fs\scans`, "a.tmp"); err != nil {
		t.Errorf("forgetting twice: %v", err)
	}
	if left, _ := j.Left(ctx, `\\fs\scans`); len(left) != 1 || left[0] != "b.tmp" {
		t.Errorf("left %v", left)
	}
}
