package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// dirCanaries is smbcheck's canary journal as one small file per test file
// in STATE/canaries: written before the canary is created, removed once it
// is gone. A file is "folder\nname\n"; its name is a hash of both, so
// concurrent checks never write the same file.
type dirCanaries struct{ dir string }

func (d dirCanaries) path(folder, name string) string {
	h := sha256.Sum256([]byte(folder + "\x00" + name))
	return filepath.Join(d.dir, hex.EncodeToString(h[:16]))
}

func (d dirCanaries) Record(_ context.Context, folder, name string) error {
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return fmt.Errorf("canary journal: %w", err)
	}
	return os.WriteFile(d.path(folder, name), []byte(folder+"\n"+name+"\n"), 0o600)
}

func (d dirCanaries) Forget(_ context.Context, folder, name string) error {
	if err := os.Remove(d.path(folder, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("canary journal: %w", err)
	}
	return nil
}

func (d dirCanaries) Left(_ context.Context, folder string) ([]string, error) {
	entries, err := os.ReadDir(d.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("canary journal: %w", err)
	}
	var out []string
	for _, e := range entries {
		if len(out) >= 100 {
			break // a bounded sweep per check
		}
		b, err := os.ReadFile(filepath.Join(d.dir, e.Name()))
		if err != nil || len(b) > 4096 {
			continue
		}
		f, n, ok := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
		if ok && f == folder {
			out = append(out, n)
		}
	}
	return out, nil
}
