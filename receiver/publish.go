package receiver

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/scanwarden/scanwarden/internal/safefile"
)

// tempIn creates a new file (O_EXCL, 0600) with a random name beginning
// with prefix in dir.
func tempIn(dir *safefile.Dir, prefix string) (*os.File, string, error) {
	for i := 0; ; i++ {
		var r [8]byte
		rand.Read(r[:])
		name := prefix + hex.EncodeToString(r[:])
		f, _, err := dir.Open(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) && i < 10 {
			continue
		}
		return f, name, err
	}
}

// copyHeld writes f's bytes, which must be sc's (size and SHA-256), to
// dst: through a temporary file beside it, fsynced, then renamed.
func (g *ingester) copyHeld(f *os.File, dst place, sc Scan, snap snapshot) error {
	h := sha256.New()
	verify := func(n int64) error {
		if n != snap.size || hex.EncodeToString(h.Sum(nil)) != sc.SHA256 {
			return errors.New("its bytes changed")
		}
		return nil
	}
	return g.publishCopy(f, dst.dir, ".keep-", h, verify, dst, false)
}

// publishCopy is the one durable way a copy of f gets a name: f's bytes,
// from its start, go through a fixed buffer into a new temporary file
// (prefix and a random suffix, O_EXCL, 0600) in dir — and into also, when
// not nil (a hash) — then verify judges the copy by its byte count; the
// file is made 0640, fsynced and renamed to dst (replace: over the name
// there; otherwise only to a free name), both folders fsynced
// (safefile.Rename, Replace). On any failure the temporary file goes.
func (g *ingester) publishCopy(f *os.File, dir *safefile.Dir, prefix string, also io.Writer, verify func(n int64) error, dst place, replace bool) error {
	tmp, name, err := tempIn(dir, prefix)
	if err != nil {
		return err
	}
	defer tmp.Close()
	ok := false
	defer func() {
		if !ok {
			dir.Remove(name)
		}
	}()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	var w io.Writer = tmp
	if also != nil {
		w = io.MultiWriter(tmp, also)
	}
	n, err := io.CopyBuffer(struct{ io.Writer }{w}, struct{ io.Reader }{f}, g.buf)
	if err != nil {
		return err
	}
	if err := verify(n); err != nil {
		return err
	}
	if err := tmp.Chmod(0o640); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	rename := safefile.Rename
	if replace {
		rename = safefile.Replace
	}
	if err := rename(dir, name, dst.dir, dst.name); err != nil {
		return err
	}
	ok = true
	return nil
}

// links is the number of names f has (1 when it cannot tell).
func links(f *os.File) uint64 {
	fi, err := f.Stat()
	if err != nil {
		return 1
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// unshare replaces src, which f holds open as it looked in snap, with a
// copy of its own (written in the held area, fsynced, renamed over src):
// the other names keep the old file.
func (g *ingester) unshare(f *os.File, src place, snap snapshot) error {
	root, err := safefile.OpenDir(g.dataDir)
	if err != nil {
		return err
	}
	defer root.Close()
	held, err := root.Mkdir("held", 0o700)
	if err != nil {
		return err
	}
	defer held.Close()
	verify := func(n int64) error {
		if after, err := fstatSnap(f); err != nil || after != snap || n != snap.size {
			return errors.New("changed while copied")
		}
		return nil
	}
	return g.publishCopy(f, held, ".unshare-", nil, verify, src, true)
}
