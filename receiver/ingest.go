package receiver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

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
	f, out, err := openUnwritten(src, path, snap)
	if f == nil {
		return out, Scan{}, err
	}
	defer f.Close()
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

// openUnwritten opens the file src (at path) as the watcher's last look
// saw it (snap), with a read lease taken: while the lease is held, nobody
// has it open for writing. A nil file is not to be taken now: the
// outcome and error say why, as ingest returns them.
func openUnwritten(src place, path string, snap snapshot) (*os.File, outcome, error) {
	// O_NONBLOCK: should anyone hold a write lease, the open fails rather
	// than waits for it
	f, st, err := src.dir.Open(src.name, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, gone, nil
	}
	if err != nil {
		return nil, changed, fmt.Errorf("open %s: %w", path, err)
	}
	taken := false
	defer func() {
		if !taken {
			f.Close()
		}
	}()
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, changed, fmt.Errorf("%s: not a regular file", path)
	}
	now, err := fstatSnap(f)
	if err != nil {
		return nil, changed, err
	}
	if now != snap {
		return nil, changed, nil
	}
	switch err := readLease(f); {
	case errors.Is(err, errStillOpen):
		return nil, stillOpen, nil
	case err != nil:
		return nil, changed, err
	}
	taken = true
	return f, ingested, nil
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

// RefusedPrefix begins a refused scan's error.
const RefusedPrefix = "refused, never delivered: "

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

// Force does Receiver.Force without a running receiver (the CLI).
func Force(ctx context.Context, dataDir string, cat Catalogue, id int64) (Scan, error) {
	sc, err := cat.Scan(ctx, id)
	if err != nil {
		return Scan{}, err
	}
	if sc.State != Incomplete {
		return Scan{}, fmt.Errorf("scan %d is %s, not incomplete", id, sc.State)
	}
	// both paths come from the database the daemon's user writes, and
	// force may run as root: below inbox/ and held/ only, every folder
	// reached through the data dir's fd (ingest)
	if err := below("inbox", sc.InboxPath); err != nil {
		return Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	src, err := at(dataDir, sc.InboxPath, false)
	if err != nil {
		return Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	snap, st, err := src.lstat()
	src.close()
	if err != nil {
		return Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Scan{}, fmt.Errorf("scan %d: %s: not a regular file", id, sc.InboxPath)
	}
	g := &ingester{dataDir: dataDir, inbox: Inbox(dataDir), cat: cat, now: time.Now, buf: make([]byte, hashBuf),
		dest: func(string) string { return sc.Destination }}
	out, got, err := g.ingest(ctx, filepath.Join(dataDir, sc.InboxPath), snap, sc.Writer, true)
	if err != nil {
		return Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	if out != ingested {
		return Scan{}, fmt.Errorf("scan %d changed while being forced; try again", id)
	}
	return got, nil
}
