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

	"github.com/scanwarden/scanwarden/internal/safefile"
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

// open opens the journal's folder, made when missing, never through a
// symbolic link: it lies in the data dir, which the daemon's user writes,
// and root's checks use it too (safefile).
func (d dirCanaries) open() (*safefile.Dir, error) {
	dd, err := safefile.MkdirAll(d.dir, 0o700)
	if err != nil {
		return nil, fmt.Errorf("canary journal (not a folder, or a symbolic link): %w", err)
	}
	return dd, nil
}

func (d dirCanaries) Record(_ context.Context, folder, name string) error {
	if strings.ContainsAny(folder+name, "\n\r\x00") {
		return fmt.Errorf("canary journal: %q in %q: a line break or NUL", name, folder)
	}
	dd, err := d.open()
	if err != nil {
		return err
	}
	defer dd.Close()
	f, _, err := dd.OpenRegular(filepath.Base(d.path(folder, name)), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("canary journal: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(folder + "\n" + name + "\n"); err != nil {
		return fmt.Errorf("canary journal: %w", err)
	}
	return nil
}

func (d dirCanaries) Forget(_ context.Context, folder, name string) error {
	dd, err := safefile.OpenDir(d.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("canary journal: %w", err)
	}
	defer dd.Close()
	if err := dd.Remove(filepath.Base(d.path(folder, name))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("canary journal: %w", err)
	}
	return nil
}

func (d dirCanaries) Left(_ context.Context, folder string) ([]string, error) {
	dd, err := safefile.OpenDir(d.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("canary journal: %w", err)
	}
	defer dd.Close()
	names, err := dd.Names(0)
	if err != nil {
		return nil, fmt.Errorf("canary journal: %w", err)
	}
	var out []string
	for _, e := range names {
		if len(out) >= 100 {
			break // a bounded sweep per check
		}
		// at most 4 KiB, a regular file, not through a link, without waiting
		b, err := dd.ReadFile(e, 4096)
		if err != nil {
			continue
		}
		f, n, ok := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
		if ok && f == folder {
			out = append(out, n)
		}
	}
	return out, nil
}
