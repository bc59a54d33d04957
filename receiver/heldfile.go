package receiver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/internal/safefile"
	"golang.org/x/sys/unix"
)

// below checks rel, a path the catalogue gives (the database the daemon's
// user writes; root's `receiver force` and `receiver deliver` read it), as
// a file below the data dir's area ("held" or "inbox").
func below(area, rel string) error {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	if rel == "" || !filepath.IsLocal(rel) || len(parts) < 2 || parts[0] != area {
		return fmt.Errorf("%s path %q: not a path below the data dir's %s/ (refused)", area, rel, area)
	}
	return nil
}

// openHeld opens a scan's held copy, rel (its catalogued HeldPath), below
// dataDir's held area for reading: a path out of held/ is refused, no
// component below dataDir is followed as a symbolic link, nor a FIFO
// waited on, and only a regular file with one name is read.
func openHeld(dataDir, rel string) (*os.File, error) {
	if err := below("held", rel); err != nil {
		return nil, err
	}
	d, err := safefile.OpenDir(dataDir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	f, _, err := d.OpenRegular(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("held copy: %w", err)
	}
	return f, nil
}

// place is one file of the data dir: its folder, held open, and its name
// in it.
type place struct {
	dir  *safefile.Dir
	name string
	rel  string // below the data dir, for rows and messages
}

// at opens the folder of rel (a checked path below dataDir) — made, 0700,
// when mk — through dataDir's fd: no component followed as a link.
func at(dataDir, rel string, mk bool) (place, error) {
	root, err := safefile.OpenDir(dataDir)
	if err != nil {
		return place{}, err
	}
	defer root.Close()
	var d *safefile.Dir
	if mk {
		d, err = root.MkdirAll(filepath.Dir(rel), 0o700)
	} else {
		d, err = root.OpenDir(filepath.Dir(rel))
	}
	if err != nil {
		return place{}, err
	}
	return place{dir: d, name: filepath.Base(rel), rel: rel}, nil
}

func (p place) close() {
	if p.dir != nil {
		p.dir.Close()
	}
}

// lstat is p's snapshot, p not followed when a link.
func (p place) lstat() (snapshot, unix.Stat_t, error) {
	st, err := p.dir.Lstat(p.name)
	if err != nil {
		return snapshot{}, st, err
	}
	return snapOf(st), st, nil
}

func snapOf(st unix.Stat_t) snapshot {
	return snapshot{size: st.Size, mtime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec), ino: st.Ino}
}

// move renames from to to between their folders' fds (never replacing a
// file), durably.
func move(from, to place) error {
	return safefile.Rename(from.dir, from.name, to.dir, to.name)
}

// putBack moves from to to, or — should a file have taken that name
// meanwhile — beside it under a name of its own.
func putBack(from, to place) error {
	err := move(from, to)
	if errors.Is(err, os.ErrExist) {
		var r [4]byte
		rand.Read(r[:])
		ext := filepath.Ext(to.name)
		to.name = strings.TrimSuffix(to.name, ext) + "-" + hex.EncodeToString(r[:]) + ext
		err = move(from, to)
	}
	return err
}

// heldExists says whether the held copy rel (checked below held/) is
// there — or cannot be told apart from being there (a link on the way).
func heldExists(dataDir, rel string) bool {
	p, err := at(dataDir, rel, false)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	defer p.close()
	_, _, err = p.lstat()
	return !errors.Is(err, os.ErrNotExist)
}

// Inbox is the share's folder in a data dir.
func Inbox(dataDir string) string { return filepath.Join(dataDir, "inbox") }
