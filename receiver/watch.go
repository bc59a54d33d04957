package receiver

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"github.com/scanwarden/scanwarden/receiver/samba"
	"golang.org/x/sys/unix"
)

// WatchConfig tunes completeness detection. Zero means zero; the defaults
// are DefaultWatch.
type WatchConfig struct {
	// Quiet is how long a file must see no write before it may be complete:
	// scanners close and reopen a PDF after each page, 0.2–4 s apart.
	Quiet time.Duration
	// QuietAfterLogoff replaces Quiet once the writer's SMB session ended
	// (smbd's audit log says so): nobody can reopen it.
	QuietAfterLogoff time.Duration
	// Rescan is how often the whole inbox is walked, for events missed.
	Rescan time.Duration
}

// DefaultWatch is the watcher's default tuning.
var DefaultWatch = WatchConfig{Quiet: 10 * time.Second, QuietAfterLogoff: 100 * time.Millisecond, Rescan: time.Minute}

// pending is a file the watcher waits on.
type pending struct {
	changed time.Time // the last event or size/mtime change seen
	snap    snapshot
	junk    string    // why it was reported as junk (then it is left alone until it changes)
	incompl bool      // catalogued incomplete; re-examined only when it changes
	recheck time.Time // still open for writing: asked again at this time
	noSig   string    // why the kernel cannot tell whether it is still written ("" = it can)
}

// openRecheck is how often a file still open for writing is asked about
// again.
const openRecheck = 250 * time.Millisecond

// watcher follows the inbox with inotify (close-write, writes, renames,
// deletes; subfolders as they appear), waits for each file's quiet window
// and hands complete files to the ingester, which takes none still open for
// writing (writers.go).
type watcher struct {
	cfg       WatchConfig
	inbox     string
	g         *ingester
	audit     *samba.Audit
	log       *slog.Logger
	onScan    func(Scan, outcome)  // observers (tests, the forwarder's wake-up)
	onSignal  func(problem string) // the writer signal broke ("" = works again)
	signal    string               // why nothing can be taken now ("" = it can)
	leasesOff string               // fs.leases-enable is 0 ("" = on)

	fd      int
	wds     map[int32]string
	files   map[string]*pending
	junk    int
	lastErr error
}

func newWatcher(cfg WatchConfig, inbox string, g *ingester, audit *samba.Audit, log *slog.Logger) *watcher {
	return &watcher{cfg: cfg, inbox: inbox, g: g, audit: audit, log: log, fd: -1,
		wds: map[int32]string{}, files: map[string]*pending{}}
}

const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
	unix.IN_DELETE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_ONLYDIR

func (w *watcher) start() error {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return &os.SyscallError{Syscall: "inotify_init1", Err: err}
	}
	w.fd = fd
	return nil
}

func (w *watcher) close() {
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}

func (w *watcher) addWatch(dir string) {
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		w.log.Warn("cannot watch folder; the periodic rescan covers it", "dir", dir, "err", err)
		return
	}
	w.wds[int32(wd)] = dir
}

// setSignal records whether files can be taken; a change is logged once
// and reported.
func (w *watcher) setSignal(problem string) {
	if problem == w.signal {
		return
	}
	w.signal = problem
	if problem != "" {
		w.log.Error("scans are not taken from the inbox", "why", problem)
	} else {
		w.log.Info("scans are taken from the inbox again")
	}
	if w.onSignal != nil {
		w.onSignal(problem)
	}
}

// run is the watcher's loop until ctx ends.
func (w *watcher) run(ctx context.Context) {
	if on, ok := leasesEnabled(); ok && !on {
		w.leasesOff = "file leases are off (sysctl fs.leases-enable = 0): the receiver cannot tell whether smbd still writes a scan, so it takes none; set fs.leases-enable = 1"
		w.setSignal(w.leasesOff)
	}
	w.rescan(ctx, true)
	w.audit.Poll(false)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	rescan := time.NewTicker(max(w.cfg.Rescan, time.Second))
	defer rescan.Stop()
	buf := make([]byte, 64<<10)
	for {
		w.readEvents(ctx, buf)
		for _, p := range w.audit.Poll(false) {
			if pf := w.files[p]; pf != nil {
				_ = pf // the quiet window shortens; evaluated below
			}
		}
		w.evaluate(ctx)
		select {
		case <-ctx.Done():
			return
		case <-rescan.C:
			w.rescan(ctx, false)
		case <-tick.C:
		}
	}
}

// readEvents drains inotify (non-blocking).
func (w *watcher) readEvents(ctx context.Context, buf []byte) {
	for {
		n, err := unix.Read(w.fd, buf)
		if err != nil || n <= 0 {
			return
		}
		now := time.Now()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				b := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				name = strings.TrimRight(string(b), "\x00")
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				w.log.Warn("inotify queue overflowed; rescanning the inbox")
				w.rescan(ctx, false)
				continue
			}
			dir, ok := w.wds[ev.Wd]
			if !ok {
				continue
			}
			if ev.Mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF) != 0 {
				delete(w.wds, ev.Wd)
				continue
			}
			if name == "" {
				continue
			}
			p := filepath.Join(dir, name)
			switch {
			case ev.Mask&unix.IN_ISDIR != 0:
				if ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
					w.addWatch(p)
					w.walk(ctx, p, false)
				}
			case ev.Mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0:
				w.dropped(ctx, p)
			case ev.Mask&(unix.IN_CLOSE_WRITE|unix.IN_CREATE|unix.IN_MODIFY|unix.IN_MOVED_TO|unix.IN_ATTRIB) != 0:
				w.track(p, now)
			}
		}
	}
}

// track notes activity on p: its quiet window restarts.
func (w *watcher) track(p string, now time.Time) *pending {
	pf := w.files[p]
	if pf == nil {
		pf = &pending{}
		w.files[p] = pf
	}
	pf.changed, pf.junk, pf.incompl = now, "", false
	pf.snap = snapshot{}
	return pf
}

// dropped: p left the inbox (deleted or renamed away by the client).
func (w *watcher) dropped(ctx context.Context, p string) {
	pf := w.files[p]
	delete(w.files, p)
	w.audit.Forget(p)
	if pf != nil && pf.incompl {
		if row, ok, err := w.g.incompleteRow(ctx, w.g.rel(p)); err == nil && ok {
			w.g.cat.DeleteScan(ctx, row.ID, Incomplete)
		}
	}
}

// rescan walks the inbox for files no event told about (missed events, a
// restart); at start every folder gets its watch.
func (w *watcher) rescan(ctx context.Context, first bool) {
	w.walk(ctx, w.inbox, first)
}

func (w *watcher) walk(ctx context.Context, root string, first bool) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return nil
		}
		if d.IsDir() {
			if _, watched := w.dirWatched(p); !watched {
				w.addWatch(p)
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if _, ok := w.files[p]; ok {
			return nil
		}
		snap, err := statSnap(p)
		if err != nil {
			return nil
		}
		// its quiet time counts from its mtime; whether a writer still
		// holds it open is asked when it is taken
		w.files[p] = &pending{changed: snap.mtime}
		return nil
	})
}

func (w *watcher) dirWatched(p string) (int32, bool) {
	for wd, d := range w.wds {
		if d == p {
			return wd, true
		}
	}
	return 0, false
}

// evaluate hands every file whose quiet window has passed to the ingester.
func (w *watcher) evaluate(ctx context.Context) {
	now := time.Now()
	for p, pf := range w.files {
		if ctx.Err() != nil {
			return
		}
		w.look(ctx, now, p, pf)
	}
	problem := w.leasesOff
	for _, pf := range w.files {
		if problem != "" {
			break
		}
		problem = pf.noSig
	}
	w.setSignal(problem)
}

// look takes one look at the inbox file p: once it has been quiet for its
// window and its snapshot holds, junk is set aside and a scan ingested.
func (w *watcher) look(ctx context.Context, now time.Time, p string, pf *pending) {
	if pf.junk != "" || pf.incompl {
		return
	}
	window := w.cfg.Quiet
	writer, ended := w.audit.Writer(p)
	if ended {
		window = w.cfg.QuietAfterLogoff
	}
	if now.Sub(pf.changed) < window || now.Before(pf.recheck) {
		return
	}
	snap, err := statSnap(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			w.dropped(ctx, p)
		}
		return
	}
	if pf.snap == (snapshot{}) || snap != pf.snap {
		// first look, or it moved: re-check after a short settle
		if pf.snap != (snapshot{}) {
			pf.changed = now
		}
		pf.snap = snap
		if pf.snap.mtime.After(pf.changed) && now.Sub(pf.snap.mtime) < window {
			pf.changed = pf.snap.mtime
		}
		return
	}
	rel, _ := filepath.Rel(w.inbox, p)
	if why := junkReason(rel); why != "" || snap.size == 0 {
		if why == "" {
			why = "empty file"
		}
		pf.junk = why
		w.junk++
		w.log.Info("ignored junk in the inbox", "file", rel, "why", why)
		return
	}
	out, sc, err := w.g.ingest(ctx, p, snap, writer, false)
	pf.noSig = ""
	if sig := (*writerSignalError)(nil); errors.As(err, &sig) {
		pf.noSig = sig.Error()
		pf.recheck = now.Add(time.Second)
		return
	}
	if err != nil {
		w.lastErr = err
		w.log.Error("ingest failed", "file", rel, "err", err)
		pf.changed = now // try again after another window
		return
	}
	w.settle(ctx, now, p, pf, out, sc, writer)
}

// settle records what ingesting p came to.
func (w *watcher) settle(ctx context.Context, now time.Time, p string, pf *pending, out outcome, sc Scan, writer string) {
	switch out {
	case ingested:
		delete(w.files, p)
		w.audit.Forget(p)
		if sc.State == Refused {
			w.log.Warn("scan refused: kept, never delivered", "id", sc.ID, "destination", sc.Destination, "file", sc.File, "size", sc.Size, "writer", writer, "why", sc.Error)
			break
		}
		w.log.Info("scan held", "id", sc.ID, "destination", sc.Destination, "file", sc.File, "size", sc.Size, "writer", writer)
	case incomplete:
		pf.incompl = true
		w.log.Warn("scan incomplete: kept, not delivered", "id", sc.ID, "file", sc.File, "why", sc.Error)
	case unchangedIncomplete:
		pf.incompl = true
	case gone:
		w.dropped(ctx, p)
	case changed:
		pf.changed, pf.snap = now, snapshot{}
	case stillOpen:
		pf.recheck = now.Add(openRecheck)
	}
	if w.onScan != nil && (out == ingested || out == incomplete) {
		w.onScan(sc, out)
	}
}
