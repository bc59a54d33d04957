package receiver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/internal/proc"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// Destination is a registered scan destination as the receiver needs it.
type Destination struct {
	Name   string          // unique registry name
	Folder string          // its folder on the fallback share (stable, safe)
	Target smbcheck.Target // the real folder, as the MFP stores it
}

// Destinations lists the registered destinations (the registry).
type Destinations interface {
	Destinations(ctx context.Context) ([]Destination, error)
}

// Remote opens a destination's real folder: smbcheck's dialer, with the
// failure ledger's gate, in the daemon.
type Remote interface {
	Open(ctx context.Context, t smbcheck.Target) (Folder, error)
}

// ErrLogon marks a Remote's error as a failed or refused logon: such a
// delivery is not retried on the back-off timer (each try could count
// toward the account's lockout); the next green check or an on-demand
// delivery tries again.
var ErrLogon = errors.New("logon failed")

// Folder is a logged-on destination folder; names are relative to it.
type Folder interface {
	// Create makes a new file, failing with os.ErrExist when it exists.
	Create(ctx context.Context, name string) (RemoteFile, error)
	Open(ctx context.Context, name string) (RemoteFile, error)
	// Rename fails with os.ErrExist when to exists.
	Rename(ctx context.Context, from, to string) error
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
	Remove(ctx context.Context, name string) error
	// Close logs off.
	Close() error
}

// RemoteFile is an open file of a Folder.
type RemoteFile interface {
	io.Reader
	io.Writer
	io.Closer
	Sync() error
}

// ForwardConfig tunes delivery. Zero means zero; defaults in DefaultForward.
type ForwardConfig struct {
	Retry     time.Duration // first retry after a failed delivery
	MaxRetry  time.Duration // the back-off's ceiling
	Retention time.Duration // how long a delivered scan's local copy is kept
	Poll      time.Duration // how often due scans are looked for
}

// DefaultForward is the forwarder's default tuning.
var DefaultForward = ForwardConfig{Retry: 30 * time.Second, MaxRetry: 30 * time.Minute, Retention: 30 * 24 * time.Hour, Poll: time.Second}

// forwarder delivers held scans: temporary name → rename → read back and
// verify size and SHA-256 → delivered. Every step is safe to repeat after a
// crash.
type forwarder struct {
	cfg     ForwardConfig
	dataDir string
	cat     Catalogue
	dests   Destinations
	remote  Remote
	claim   string // this process's claim on rows it delivers
	log     *slog.Logger
	now     func() time.Time
	bufs    [][]byte // the copy ring (copyBuf each)
	// names, when not nil, has the lock of each destination folder, held
	// while a delivery picks its final name there and renames its
	// temporary file to it: the receiver's forwarders (background, on
	// demand) share it, so two of them never pick the same free name.
	// (Should an SMB2 rename replace — smbcheck looks for the target
	// first on an encrypted session — another delivery could take the
	// name between.) One lock per folder: a slow destination holds up
	// only deliveries to that folder.
	names *nameLocks

	lastErr   string
	lastErrAt time.Time
}

// ring returns the forwarder's copy buffers, made on first use.
func (fw *forwarder) ring() [][]byte {
	if fw.bufs == nil {
		fw.bufs = make([][]byte, ringSize)
		for i := range fw.bufs {
			fw.bufs[i] = make([]byte, copyBuf)
		}
	}
	return fw.bufs
}

// tempPrefix starts the temporary name of a file being delivered.
const tempPrefix = ".scanwarden-"

func tempName(id int64) string { return tempPrefix + strconv.FormatInt(id, 10) + ".tmp" }

// DeliveryError is why one scan was not delivered.
type DeliveryError struct {
	Scan int64
	Op   string
	Err  error
}

func (e *DeliveryError) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.Op+":") { // smbcheck's errors name the operation already
		return fmt.Sprintf("scan %d: %s", e.Scan, msg)
	}
	return fmt.Sprintf("scan %d: %s: %s", e.Scan, e.Op, msg)
}
func (e *DeliveryError) Unwrap() error { return e.Err }

// due returns the destinations with scans to deliver now (or all held ones
// when now is zero, for an on-demand delivery of only).
func (fw *forwarder) due(ctx context.Context, now time.Time, only *string) (map[string][]Scan, error) {
	q := ScanQuery{States: []State{Held, Failed}, Destination: only}
	if !now.IsZero() {
		q.DueBefore = now
	}
	rows, err := fw.cat.Scans(ctx, q)
	if err != nil {
		return nil, err
	}
	out := map[string][]Scan{}
	for _, r := range rows {
		if r.Destination == "" || r.HeldPath == "" {
			continue
		}
		out[r.Destination] = append(out[r.Destination], r)
	}
	return out, nil
}

// deliverDue delivers the due scans of every destination (one session per
// destination); force=true ignores the back-off. It returns how many were
// delivered and the first error.
func (fw *forwarder) deliverDue(ctx context.Context, only *string, force bool) (int, error) {
	now := fw.now()
	t := now
	if force {
		t = time.Time{}
	}
	byDest, err := fw.due(ctx, t, only)
	if err != nil {
		return 0, err
	}
	if len(byDest) == 0 {
		return 0, nil
	}
	dests, err := fw.dests.Destinations(ctx)
	if err != nil {
		return 0, fmt.Errorf("destinations: %w", err)
	}
	known := map[string]Destination{}
	for _, d := range dests {
		known[d.Name] = d
	}
	var n int
	var first error
	for name, scans := range byDest {
		d, ok := known[name]
		if !ok {
			continue // destination removed: the scans stay held
		}
		k, err := fw.deliverTo(ctx, d, scans)
		n += k
		if err != nil && first == nil {
			first = err
		}
	}
	return n, first
}

func (fw *forwarder) deliverTo(ctx context.Context, d Destination, scans []Scan) (int, error) {
	folder, err := fw.remote.Open(ctx, d.Target)
	if err != nil {
		fw.failAll(ctx, scans, err)
		return 0, fmt.Errorf("destination %s: %w", d.Name, err)
	}
	defer folder.Close()
	var n int
	for _, sc := range scans {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		err := fw.deliver(ctx, folder, d, sc)
		if errors.Is(err, errClaimed) {
			continue // another delivery has it: not ours to count
		}
		if err != nil {
			return n, fmt.Errorf("destination %s: %w", d.Name, err)
		}
		n++
	}
	return n, nil
}

// failAll records a failed attempt on scans that could not even start.
func (fw *forwarder) failAll(ctx context.Context, scans []Scan, cause error) {
	for _, sc := range scans {
		fw.fail(ctx, sc, sc.State, cause)
	}
}

func (fw *forwarder) backoff(attempts int) time.Duration {
	d := fw.cfg.Retry
	for i := 1; i < attempts && d < fw.cfg.MaxRetry; i++ {
		d *= 2
	}
	return min(d, fw.cfg.MaxRetry)
}

func (fw *forwarder) fail(ctx context.Context, sc Scan, from State, cause error) {
	sc.State = Failed
	sc.Attempts++
	sc.Error = cause.Error()
	sc.Claim = ""
	next := fw.backoff(sc.Attempts)
	if errors.Is(cause, ErrLogon) {
		// a logon failure is not retried blindly: it would eat the
		// account's lockout budget. The next green check delivers.
		next = fw.cfg.MaxRetry
	}
	sc.NextAttempt = fw.now().Add(next)
	fw.cat.UpdateScan(context.WithoutCancel(ctx), sc, from)
	fw.lastErr, fw.lastErrAt = sc.Error, fw.now()
}

// errClaimed says another delivery (the background forwarder, an
// on-demand one, another process) took the scan first: it is neither
// delivered nor failed by this one.
var errClaimed = errors.New("another delivery has it in hand")

// deliver copies one scan: claim → temporary file, read back and compared
// → rename to a free name (a file already there with the same content
// counts as delivered) → delivered. A scan another delivery claimed first
// is left to it: errClaimed.
func (fw *forwarder) deliver(ctx context.Context, folder Folder, d Destination, sc Scan) error {
	from := sc.State
	sc.State, sc.Claim = Delivering, fw.claim
	if ok, err := fw.cat.UpdateScan(ctx, sc, from); err != nil {
		return err
	} else if !ok {
		return &DeliveryError{sc.ID, "claim", errClaimed}
	}
	// The content is judged again before it leaves: a row held before
	// the share judged content at ingest is refused here.
	if why := fw.refusal(sc); why != "" {
		sc.State, sc.Claim, sc.Error = Refused, "", RefusedPrefix+why
		if _, err := fw.cat.UpdateScan(context.WithoutCancel(ctx), sc, Delivering); err != nil {
			return err
		}
		fw.log.Warn("scan refused: not delivered", "id", sc.ID, "destination", sc.Destination, "file", sc.File, "why", why)
		return &DeliveryError{sc.ID, "check content", ErrRefused}
	}
	name, err := fw.copyScan(ctx, folder, d, sc)
	if err != nil {
		fw.fail(ctx, sc, Delivering, err)
		return err
	}
	sc.State, sc.Claim, sc.Error, sc.RemoteName = Delivered, "", "", name
	sc.DeliveredAt = fw.now().UTC()
	if ok, err := fw.cat.UpdateScan(context.WithoutCancel(ctx), sc, Delivering); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("scan %d: left delivering by another", sc.ID)
	}
	fw.log.Info("scan delivered", "id", sc.ID, "destination", sc.Destination, "file", name, "size", sc.Size)
	return nil
}

// ErrRefused: the scan's content is not a format the share delivers.
var ErrRefused = errors.New("refused: not a scan format, or its name does not agree with its content")

// refusal says why the held copy of sc must not be delivered ("" = it may;
// an unreadable copy is left to copyScan's error).
func (fw *forwarder) refusal(sc Scan) string {
	f, err := openHeld(fw.dataDir, sc.HeldPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, ok, why := Sniff(f, sc.Size, sc.File); !ok {
		return why
	}
	return ""
}

// copyScan delivers sc into folder: written to a temporary name and read
// back there (size and SHA-256 against the catalogue), flushed, then
// renamed to a free name. So a final name only ever holds a copy that read
// back as the scan; a crash leaves at most the temporary file, which the
// next attempt removes.
func (fw *forwarder) copyScan(ctx context.Context, folder Folder, d Destination, sc Scan) (string, error) {
	local, err := openHeld(fw.dataDir, sc.HeldPath)
	if err != nil {
		return "", &DeliveryError{sc.ID, "open held copy", err}
	}
	defer local.Close()
	tmp := tempName(sc.ID)
	// A temporary file left by a crash goes first.
	if err := folder.Remove(ctx, tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", &DeliveryError{sc.ID, "remove stale " + tmp, err}
	}
	// Already there (a crash after the rename)? Then it is delivered.
	name, done, err := fw.findName(ctx, folder, sc)
	if err != nil || done {
		return name, err
	}
	if err := fw.send(ctx, folder, tmp, local, sc); err != nil {
		folder.Remove(context.WithoutCancel(ctx), tmp)
		return "", err
	}
	if fw.names != nil {
		defer fw.names.lock(folderKey(d.Target))()
		// the name may have been taken while this copy was sent
		if name, done, err = fw.findName(ctx, folder, sc); err != nil || done {
			folder.Remove(context.WithoutCancel(ctx), tmp)
			return name, err
		}
	}
	for range 100 {
		err = folder.Rename(ctx, tmp, name)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			folder.Remove(context.WithoutCancel(ctx), tmp)
			return "", &DeliveryError{sc.ID, "rename to " + name, err}
		}
		// someone took the name meanwhile: the next free one
		var done bool
		if name, done, err = fw.findName(ctx, folder, sc); err != nil || done {
			folder.Remove(context.WithoutCancel(ctx), tmp)
			return name, err
		}
	}
	if err != nil {
		folder.Remove(context.WithoutCancel(ctx), tmp)
		return "", &DeliveryError{sc.ID, "rename", err}
	}
	// The rename moved the file that read back; its size under the final
	// name says the rename took that file.
	fi, err := folder.Stat(ctx, name)
	if err == nil && fi.Size() != sc.Size {
		err = fmt.Errorf("%d bytes after the rename, want %d", fi.Size(), sc.Size)
	}
	if err != nil {
		return "", &DeliveryError{sc.ID, "stat " + name, err}
	}
	return name, nil
}

// nameLocks has a mutex per destination folder (folderKey), made on first
// use and dropped when no delivery holds or waits for it.
type nameLocks struct {
	mu sync.Mutex
	m  map[string]*nameLock
}

type nameLock struct {
	sync.Mutex
	users int // holding or waiting; under nameLocks.mu
}

// lock takes key's mutex and returns its unlock.
func (ls *nameLocks) lock(key string) (unlock func()) {
	ls.mu.Lock()
	if ls.m == nil {
		ls.m = map[string]*nameLock{}
	}
	l := ls.m[key]
	if l == nil {
		l = &nameLock{}
		ls.m[key] = l
	}
	l.users++
	ls.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		ls.mu.Lock()
		if l.users--; l.users == 0 {
			delete(ls.m, key)
		}
		ls.mu.Unlock()
	}
}

// folderKey names a destination's real folder for its names lock: host,
// port, share and path, case-folded as Windows and Samba compare them.
// (Two destinations naming one server differently — a name and an address
// — get two keys; their names then rest on the rename that does not
// replace.)
func folderKey(t smbcheck.Target) string {
	p := strings.Trim(strings.ReplaceAll(t.Path, `\`, "/"), "/")
	return strings.ToLower(fmt.Sprintf("%s|%d|%s|%s", t.Host, t.Info().Port, t.Share, p))
}

// send writes the held copy to tmp and reads it back: over SMB2/3 through
// the same handle, with several requests in flight and the last flush
// running beside the read-back; otherwise (SMB1) sequentially, then read
// back through a new handle. The copy is flushed to the server's disk
// before it counts.
func (fw *forwarder) send(ctx context.Context, folder Folder, tmp string, local *os.File, sc Scan) error {
	w, err := folder.Create(ctx, tmp)
	if err != nil {
		return &DeliveryError{sc.ID, "create " + tmp, err}
	}
	h := sha256.New()
	var sent, back int64
	ra, random := concurrent(w)
	if random {
		sent, err = writeAll(ra, local, fw.ring(), w.Sync, flushEvery)
		if err == nil {
			// read back through the same handle while the last flush runs
			synced := make(chan error, 1)
			go func() { synced <- w.Sync() }()
			back, err = hashAt(h, ra, sent, fw.ring())
			if serr := <-synced; err == nil && serr != nil {
				err = serr
			}
		}
	} else {
		sent, err = pipe(w, local, fw.ring())
		if err == nil {
			err = w.Sync()
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &DeliveryError{sc.ID, "write " + tmp, err}
	}
	if !random {
		if back, err = fw.readBack(ctx, folder, tmp, h, sc.Size); err != nil {
			return &DeliveryError{sc.ID, "verify " + tmp, err}
		}
	}
	if sent != sc.Size {
		return &DeliveryError{sc.ID, "read held copy", fmt.Errorf("it is %d bytes, catalogued %d", sent, sc.Size)}
	}
	if sum := hex.EncodeToString(h.Sum(nil)); back != sc.Size || sum != sc.SHA256 {
		return &DeliveryError{sc.ID, "verify " + tmp, fw.mismatch(local, sc, back, sum)}
	}
	return nil
}

// mismatch explains a copy that did not read back as the catalogued scan:
// the held copy is hashed again to tell a held copy that changed on this
// disk since it was received from a destination that stored other bytes.
func (fw *forwarder) mismatch(local *os.File, sc Scan, back int64, sum string) error {
	readBack := fmt.Errorf("read back %d bytes sha256 %s, want %d bytes %s", back, sum, sc.Size, sc.SHA256)
	if _, err := local.Seek(0, io.SeekStart); err != nil {
		return readBack
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, local, fw.ring()[0])
	if err != nil {
		return readBack
	}
	if held := hex.EncodeToString(h.Sum(nil)); n != sc.Size || held != sc.SHA256 {
		return fmt.Errorf("the held copy no longer matches the catalogue (%d bytes sha256 %s, catalogued %d bytes %s): it changed on this disk after it was received",
			n, held, sc.Size, sc.SHA256)
	}
	return readBack
}

// findName returns the name to deliver under: the scan's own, or with a
// suffix " (2)", " (3)", … when a different file has it. done is true when
// one of those names already holds this very scan (same size and SHA-256).
func (fw *forwarder) findName(ctx context.Context, folder Folder, sc Scan) (string, bool, error) {
	ext := filepath.Ext(sc.File)
	base := strings.TrimSuffix(sc.File, ext)
	for i := 1; i < 1000; i++ {
		name := sc.File
		if i > 1 {
			name = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		fi, err := folder.Stat(ctx, name)
		if errors.Is(err, os.ErrNotExist) {
			return name, false, nil
		}
		if err != nil {
			return "", false, &DeliveryError{sc.ID, "stat " + name, err}
		}
		if fi.IsDir() || fi.Size() != sc.Size {
			continue // another file (or a folder) has the name
		}
		// Same size: read it back. Only a file that read back as other
		// bytes frees us to take the next name; one that could not be
		// read (a timeout, a sharing violation, a dropped connection) may
		// be this very scan (a crash after its rename): the delivery is
		// retried later rather than made a second time.
		err = fw.verify(ctx, folder, name, sc)
		if err == nil {
			return name, true, nil
		}
		if !errors.Is(err, errDiffers) {
			return "", false, &DeliveryError{sc.ID, "read back " + name, err}
		}
	}
	return "", false, &DeliveryError{sc.ID, "find a free name", errors.New("999 files of that name")}
}

// errDiffers marks verify's error when the file read back whole and holds
// other bytes than the scan (size or SHA-256); any other error of verify
// says the file could not be read.
var errDiffers = errors.New("another file")

// verify reads name back and compares size and SHA-256 with the catalogue:
// errDiffers when they differ.
func (fw *forwarder) verify(ctx context.Context, folder Folder, name string, sc Scan) error {
	h := sha256.New()
	n, err := fw.readBack(ctx, folder, name, h, sc.Size)
	if err != nil {
		return err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if n != sc.Size || sum != sc.SHA256 {
		return fmt.Errorf("%w: read back %d bytes sha256 %s, want %d bytes %s", errDiffers, n, sum, sc.Size, sc.SHA256)
	}
	return nil
}

// readBack opens name and hashes its content into h (size bytes expected,
// several reads in flight where the file allows it); it returns how many
// bytes the file holds (size+1 when it is longer).
func (fw *forwarder) readBack(ctx context.Context, folder Folder, name string, h io.Writer, size int64) (int64, error) {
	r, err := folder.Open(ctx, name)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if ra, ok := concurrent(r); ok {
		return hashAt(h, ra, size, fw.ring())
	}
	return pipe(h, r, fw.ring())
}

// purge removes the local copies of scans delivered longer ago than the
// retention.
func (fw *forwarder) purge(ctx context.Context) (int, error) {
	rows, err := fw.cat.Scans(ctx, ScanQuery{States: []State{Delivered}})
	if err != nil {
		return 0, err
	}
	cut := fw.now().Add(-fw.cfg.Retention)
	var n int
	for _, sc := range rows {
		if sc.DeliveredAt.After(cut) {
			continue
		}
		sc.State = Purged
		if ok, err := fw.cat.UpdateScan(ctx, sc, Delivered); err != nil || !ok {
			continue
		}
		// below held/ only, through the data dir's fd (the row is data
		// the daemon's user writes)
		err := below("held", sc.HeldPath)
		if err == nil {
			var p place
			if p, err = at(fw.dataDir, sc.HeldPath, false); err == nil {
				err = p.dir.Remove(p.name)
				p.close()
			}
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fw.log.Warn("purge: cannot remove held copy", "id", sc.ID, "err", err)
		}
		n++
	}
	return n, nil
}

// newClaim is this process's claim: its pid and a random tag, so a row left
// Delivering by a dead process can be told from one in flight.
func newClaim() string {
	var r [6]byte
	rand.Read(r[:])
	return strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(r[:])
}

// claimAlive says whether the process that made claim may still run.
func claimAlive(claim, own string) bool {
	if claim == own {
		return true
	}
	pidS, _, _ := strings.Cut(claim, ":")
	pid, err := strconv.Atoi(pidS)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false // our pid, another claim: an earlier life of this process id
	}
	_, err = os.Stat("/proc/" + pidS)
	return err == nil && !proc.Zombie(pid)
}
