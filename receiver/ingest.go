package receiver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/scanwarden/scanwarden/internal/safefile"
	"golang.org/x/sys/unix"
)

// snapshot is what a file looked like when last seen.
type snapshot struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func statSnap(path string) (snapshot, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return snapshot{}, err
	}
	if !fi.Mode().IsRegular() {
		return snapshot{}, fmt.Errorf("%s: not a regular file", path)
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return snapshot{size: fi.Size(), mtime: fi.ModTime(), ino: ino}, nil
}

// hashBuf is the fixed buffer a scan is hashed through: memory does not
// grow with file size.
const hashBuf = 128 << 10

// hashFile streams r through SHA-256.
func hashFile(r io.Reader, buf []byte) (string, int64, error) {
	h := sha256.New()
	n, err := io.CopyBuffer(h, struct{ io.Reader }{r}, buf)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// outcome of one ingest attempt.
type outcome int

const (
	ingested   outcome = iota // catalogued and moved to the held area
	incomplete                // catalogued as incomplete, left in the inbox
	changed                   // the file changed while we looked: wait again
	gone                      // the file is no longer there
	unchangedIncomplete
	stillOpen // someone still holds it open for writing
)

// ingester catalogues complete files: hash, row, atomic move.
type ingester struct {
	dataDir string // held area lies below it, on the inbox's filesystem
	inbox   string
	cat     Catalogue
	now     func() time.Time
	buf     []byte
	dest    func(folder string) string // folder → destination name ("" = none)
}

// ingest takes in the file at path (absolute, inside the inbox) whose last
// look was snap. A row is committed before the file leaves the inbox; the
// move is a rename between the two folders' fds followed by fsync of the
// file and both folders. A file someone still holds open for writing is
// not taken (stillOpen); when the kernel cannot tell, the error is a
// *writerSignalError and nothing is taken. Every folder below the data dir
// is reached through the data dir's fd, none followed as a link: root's
// `receiver force` takes scans too.
func (g *ingester) ingest(ctx context.Context, path string, snap snapshot, writer string, force bool) (outcome, Scan, error) {
	rel := g.rel(path)
	if err := below("inbox", rel); err != nil {
		return changed, Scan{}, err
	}
	src, err := at(g.dataDir, rel, false)
	if errors.Is(err, os.ErrNotExist) {
		return gone, Scan{}, nil
	}
	if err != nil {
		return changed, Scan{}, err
	}
	defer src.close()
	// O_NONBLOCK: should anyone hold a write lease, the open fails rather
	// than waits for it
	f, st, err := src.dir.Open(src.name, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return gone, Scan{}, nil
	}
	if err != nil {
		return changed, Scan{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return changed, Scan{}, fmt.Errorf("%s: not a regular file", path)
	}
	now, err := fstatSnap(f)
	if err != nil {
		return changed, Scan{}, err
	}
	if now != snap {
		return changed, Scan{}, nil
	}
	switch err := readLease(f); {
	case errors.Is(err, errStillOpen):
		return stillOpen, Scan{}, nil
	case err != nil:
		return changed, Scan{}, err
	}
	defer dropLease(f)
	if links(f) > 1 {
		// Another name shares this file (an SMB client may make hard
		// links in the share, e.g. under a junk name that stays in the
		// inbox): a write through it would change the scan after it is
		// catalogued. This name gets its own copy; the next look takes it.
		if err := g.unshare(f, src, snap); err != nil {
			return changed, Scan{}, fmt.Errorf("unshare %s: %w", path, err)
		}
		return changed, Scan{}, nil
	}
	folder, file := g.split(path)
	sc := Scan{Destination: g.dest(folder), Folder: folder, File: file, Size: snap.size, ReceivedAt: g.now().UTC(),
		InboxPath: rel, Writer: writer}
	state, why, err := judge(f, snap.size, file, force)
	if err != nil {
		return changed, Scan{}, fmt.Errorf("read %s: %w", path, err)
	}
	sum, same, err := g.hashUnchanged(f, snap)
	if err != nil {
		return changed, Scan{}, fmt.Errorf("%s: %w", path, err)
	}
	if !same {
		return changed, Scan{}, nil
	}
	sc.SHA256, sc.State, sc.Error = sum, state, why
	if state == Incomplete {
		return g.recordIncomplete(ctx, sc)
	}
	return g.commit(ctx, f, src, sc, snap, force)
}

// judge is what a file's content makes of it: Refused (why says so) when
// it is no scan or its name does not agree; Incomplete when its type's end
// is missing — unless force; else Held.
func judge(f *os.File, size int64, file string, force bool) (State, string, error) {
	if _, ok, reason := Sniff(f, size, file); !ok {
		return Refused, RefusedPrefix + reason, nil
	}
	if force {
		return Held, "", nil
	}
	fmtState, reason, err := checkFormat(f, size)
	if err != nil {
		return Held, "", err
	}
	if fmtState == formatIncomplete {
		return Incomplete, reason, nil
	}
	return Held, "", nil
}

// hashUnchanged fsyncs f — what the row will say is on disk — and hashes
// it; same is false when it changed meanwhile (size, time, inode, a new
// name: a link made while it was hashed is unshared at the next look) or
// a writer opened it (the lease is gone).
func (g *ingester) hashUnchanged(f *os.File, snap snapshot) (sum string, same bool, err error) {
	if err := f.Sync(); err != nil {
		return "", false, fmt.Errorf("fsync: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", false, err
	}
	sum, n, err := hashFile(f, g.buf)
	if err != nil {
		return "", false, fmt.Errorf("hash: %w", err)
	}
	if after, err := fstatSnap(f); err != nil || after != snap || n != snap.size || links(f) > 1 {
		return "", false, nil
	}
	return sum, leaseHeld(f), nil
}

// commit catalogues the checked scan sc at src (f, as hashed) and moves it
// into the held area: the row first (a row an earlier look committed is
// reused, an incomplete one updated), then the durable move, then
// verifyMoved.
func (g *ingester) commit(ctx context.Context, f *os.File, src place, sc Scan, snap snapshot, force bool) (outcome, Scan, error) {
	if row, ok, err := g.committedRow(ctx, sc.InboxPath, sc.SHA256, snap.size); err != nil {
		return changed, Scan{}, err
	} else if ok {
		dst, err := at(g.dataDir, row.HeldPath, true)
		if err != nil {
			return changed, Scan{}, fmt.Errorf("scan %d: held area: %w", row.ID, err)
		}
		defer dst.close()
		if err := move(src, dst); err != nil {
			return changed, Scan{}, fmt.Errorf("move %s into the held area: %w", src.rel, err)
		}
		return g.verifyMoved(ctx, f, src, dst, row, snap)
	}
	heldRel := g.newHeldPath(sc.File)
	dst, err := at(g.dataDir, heldRel, true)
	if err != nil {
		return changed, Scan{}, fmt.Errorf("held area: %w", err)
	}
	defer dst.close()
	sc.HeldPath = heldRel
	if old, ok, err := g.incompleteRow(ctx, sc.InboxPath); err != nil {
		return changed, Scan{}, err
	} else if ok {
		// it was incomplete and now checks out (or is forced): the same row
		sc.ID, sc.ReceivedAt, sc.Forced = old.ID, old.ReceivedAt, force
		if ok, err := g.cat.UpdateScan(ctx, sc, Incomplete); err != nil || !ok {
			return changed, Scan{}, err
		}
	} else {
		if sc.ID, err = g.cat.AddScan(ctx, sc); err != nil {
			return changed, Scan{}, err
		}
	}
	if err := move(src, dst); err != nil {
		// The row is committed and the file is still in the inbox: the
		// next look (committedRow) or recovery finishes the move.
		return changed, sc, fmt.Errorf("move %s into the held area: %w", src.rel, err)
	}
	return g.verifyMoved(ctx, f, src, dst, sc, snap)
}

// verifyMoved checks that what the move (by name) took out of the inbox to
// held is f, the file hashed and catalogued as sc: a client may have
// renamed another file over that name since f was opened. Then the
// newcomer goes back to the inbox, to be taken on its own, and sc keeps its
// bytes: copied from f to held when no name is left to them, or — f still
// has a name in the inbox (renamed away, not over) — sc's row is dropped
// and they are taken under that name.
func (g *ingester) verifyMoved(ctx context.Context, f *os.File, src, dst place, sc Scan, snap snapshot) (outcome, Scan, error) {
	moved, _, err := dst.lstat()
	if err != nil {
		return changed, sc, fmt.Errorf("held copy of %s: %w", src.rel, err)
	}
	if moved.ino == snap.ino {
		return ingested, sc, nil
	}
	if err := putBack(dst, src); err != nil {
		return changed, sc, fmt.Errorf("put %s, renamed over a scan being taken, back into the inbox: %w", src.rel, err)
	}
	if links(f) > 0 {
		if _, err := g.cat.DeleteScan(ctx, sc.ID, sc.State); err != nil {
			return changed, Scan{}, err
		}
		return changed, Scan{}, nil
	}
	if err := g.copyHeld(f, dst, sc, snap); err != nil {
		return changed, sc, fmt.Errorf("keep %s (renamed over while taken): %w", sc.File, err)
	}
	return ingested, sc, nil
}

// finishMove moves the inbox file inboxRel, whose row sc was committed
// before a crash cut its move off, to heldRel: when it is sc's bytes and
// nobody holds it open for writing (a read lease, kept through the hash
// and the move, as ingest does). open: someone does (or the kernel cannot
// say) — it is not taken.
func (g *ingester) finishMove(inboxRel, heldRel string, sc Scan) (moved, open bool, err error) {
	if below("inbox", inboxRel) != nil {
		return false, false, nil
	}
	if err := below("held", heldRel); err != nil {
		return false, false, err
	}
	src, err := at(g.dataDir, inboxRel, false)
	if err != nil {
		return false, false, nil
	}
	defer src.close()
	f, _, err := src.dir.OpenRegular(src.name, os.O_RDONLY, 0)
	if err != nil {
		return false, false, nil
	}
	defer f.Close()
	snap, err := fstatSnap(f)
	if err != nil || snap.size != sc.Size {
		return false, false, nil
	}
	if err := readLease(f); err != nil {
		return false, true, nil
	}
	defer dropLease(f)
	sum, _, err := hashFile(f, g.buf)
	if err != nil || sum != sc.SHA256 {
		return false, false, nil
	}
	if !leaseHeld(f) {
		return false, true, nil
	}
	if err := f.Sync(); err != nil {
		return false, false, err
	}
	dst, err := at(g.dataDir, heldRel, true)
	if err != nil {
		return false, false, err
	}
	defer dst.close()
	if err := move(src, dst); err != nil {
		return false, false, err
	}
	if now, _, err := dst.lstat(); err != nil || now.ino != snap.ino {
		// another file took the name meanwhile: back it goes
		return false, true, putBack(dst, src)
	}
	return true, false, nil
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

// RefusedPrefix begins a refused scan's error.
const RefusedPrefix = "refused, never delivered: "

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

func fstatSnap(f *os.File) (snapshot, error) {
	fi, err := f.Stat()
	if err != nil {
		return snapshot{}, err
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return snapshot{size: fi.Size(), mtime: fi.ModTime(), ino: ino}, nil
}

func (g *ingester) incompleteRow(ctx context.Context, inboxRel string) (Scan, bool, error) {
	rows, err := g.cat.Scans(ctx, ScanQuery{States: []State{Incomplete}, InboxPath: &inboxRel})
	if err != nil || len(rows) == 0 {
		return Scan{}, false, err
	}
	return rows[0], true, nil
}

// committedRow finds a row already committed for this very file whose move
// out of the inbox did not happen (it failed, or a crash came between):
// the file is moved under that row, never catalogued twice.
func (g *ingester) committedRow(ctx context.Context, inboxRel, sum string, size int64) (Scan, bool, error) {
	rows, err := g.cat.Scans(ctx, ScanQuery{States: []State{Held, Failed, Refused}, InboxPath: &inboxRel})
	if err != nil {
		return Scan{}, false, err
	}
	for _, r := range rows {
		if r.SHA256 != sum || r.Size != size || r.HeldPath == "" {
			continue
		}
		// the row names where the file goes: below held/ only, no
		// folder on the way a link (the daemon's user writes the rows)
		if err := below("held", r.HeldPath); err != nil {
			return Scan{}, false, fmt.Errorf("scan %d, committed for %s: %w", r.ID, inboxRel, err)
		}
		dst, err := at(g.dataDir, r.HeldPath, false)
		if errors.Is(err, os.ErrNotExist) {
			return r, true, nil
		}
		if err != nil {
			return Scan{}, false, fmt.Errorf("scan %d, committed for %s: %w", r.ID, inboxRel, err)
		}
		_, _, err = dst.lstat()
		dst.close()
		if errors.Is(err, os.ErrNotExist) {
			return r, true, nil
		}
	}
	return Scan{}, false, nil
}

func (g *ingester) recordIncomplete(ctx context.Context, sc Scan) (outcome, Scan, error) {
	old, ok, err := g.incompleteRow(ctx, sc.InboxPath)
	if err != nil {
		return changed, Scan{}, err
	}
	if ok {
		if old.SHA256 == sc.SHA256 {
			return unchangedIncomplete, old, nil
		}
		sc.ID, sc.ReceivedAt = old.ID, old.ReceivedAt
		if _, err := g.cat.UpdateScan(ctx, sc, Incomplete); err != nil {
			return changed, Scan{}, err
		}
		return incomplete, sc, nil
	}
	if sc.ID, err = g.cat.AddScan(ctx, sc); err != nil {
		return changed, Scan{}, err
	}
	return incomplete, sc, nil
}

// newHeldPath is a fresh, unique file in the held area (below the data
// dir); the scan's own name stays in the catalogue only (it may be
// anything a client sent).
func (g *ingester) newHeldPath(file string) string {
	var r [8]byte
	rand.Read(r[:])
	ext := strings.ToLower(filepath.Ext(file))
	if len(ext) > 8 || strings.ContainsAny(ext, " /\\") {
		ext = ""
	}
	return filepath.Join("held", time.Now().UTC().Format("2006-01-02"), hex.EncodeToString(r[:])+ext)
}

func (g *ingester) rel(p string) string {
	r, err := filepath.Rel(g.dataDir, p)
	if err != nil {
		return p
	}
	return r
}

// split gives the share folder a file arrived in and its name below that
// folder, made safe.
func (g *ingester) split(path string) (folder, file string) {
	r, err := filepath.Rel(g.inbox, path)
	if err != nil {
		return Unsorted, safeName(filepath.Base(path))
	}
	parts := strings.Split(r, string(filepath.Separator))
	if len(parts) == 1 {
		return Unsorted, safeName(parts[0])
	}
	// deeper folders are flattened into the name: the destination folder
	// is one level
	return parts[0], safeName(strings.Join(parts[1:], "_"))
}

// maxName bounds a delivered file name (bytes), below every SMB server's limit.
const maxName = 200

// safeName makes a client-provided file name safe to keep and to deliver:
// no path separators or characters Windows refuses, no control characters
// nor invisible format characters (bidi overrides and isolates, zero-width
// spaces: they make a name read as another),
// no leading/trailing dots or spaces, at most maxName bytes (the extension
// kept), never empty.
func safeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Cf, r), strings.ContainsRune(`/\:*?"<>|`, r):
			b.WriteRune('_')
		default:
			b.WriteRune(r)
		}
	}
	s := strings.Trim(b.String(), " .")
	if s == "" {
		s = "scan"
	}
	if len(s) > maxName {
		ext := filepath.Ext(s)
		if len(ext) > 16 {
			ext = ""
		}
		base := s[:maxName-len(ext)]
		for !utf8.ValidString(base) {
			base = base[:len(base)-1]
		}
		s = base + ext
	}
	switch strings.ToUpper(strings.TrimSuffix(s, filepath.Ext(s))) {
	case "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "LPT1", "LPT2", "LPT3":
		s = "_" + s
	}
	return s
}
