package receiver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// copier puts one held scan into one logged-on folder (copyScan). Each
// forwarder has its own: its copy ring is not shared.
type copier struct {
	dataDir string
	bufs    [][]byte // the copy ring (copyBuf each), made on first use
	// names, when not nil, has the lock of each destination folder, held
	// while a delivery picks its final name there and renames its
	// temporary file to it: the receiver's forwarders (background, on
	// demand) share it, so two of them never pick the same free name.
	// (Should an SMB2 rename replace — smbcheck looks for the target
	// first on an encrypted session — another delivery could take the
	// name between.) One lock per folder: a slow destination holds up
	// only deliveries to that folder.
	names *nameLocks
}

// ring returns the copier's buffers, made on first use.
func (c *copier) ring() [][]byte {
	if c.bufs == nil {
		c.bufs = make([][]byte, ringSize)
		for i := range c.bufs {
			c.bufs[i] = make([]byte, copyBuf)
		}
	}
	return c.bufs
}

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

// tempPrefix starts the temporary name of a file being delivered.
const tempPrefix = ".scanwarden-"

func tempName(id int64) string { return tempPrefix + strconv.FormatInt(id, 10) + ".tmp" }

// copyScan delivers sc into folder: written to a temporary name and read
// back there (size and SHA-256 against the catalogue), flushed, then
// renamed to a free name. So a final name only ever holds a copy that read
// back as the scan; a crash leaves at most the temporary file, which the
// next attempt removes.
func (c *copier) copyScan(ctx context.Context, folder destFolder, sc Scan) (string, error) {
	local, err := openHeld(c.dataDir, sc.HeldPath)
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
	name, done, err := c.findName(ctx, folder, sc)
	if err != nil || done {
		return name, err
	}
	if err := c.send(ctx, folder, tmp, local, sc); err != nil {
		folder.Remove(context.WithoutCancel(ctx), tmp)
		return "", err
	}
	return c.rename(ctx, folder, tmp, name, sc)
}

// maxRenames bounds the renames of one copy that lose their name to
// another writer.
const maxRenames = 100

// rename gives tmp, which read back as sc, its final name: name, or the
// next free one should another file have taken it meanwhile (under the
// folder's names lock, when the copier shares one). Should one of those
// names hold this very scan already, it is delivered there. tmp does not
// outlive a failure.
func (c *copier) rename(ctx context.Context, folder destFolder, tmp, name string, sc Scan) (string, error) {
	if c.names != nil {
		defer c.names.lock(folder.key)()
	}
	renamed := false
	defer func() {
		if !renamed {
			folder.Remove(context.WithoutCancel(ctx), tmp)
		}
	}()
	var done bool
	var err error
	if c.names != nil {
		// the name may have been taken while this copy was sent
		if name, done, err = c.findName(ctx, folder, sc); err != nil || done {
			return name, err
		}
	}
	for try := 1; !renamed; try++ {
		rerr := folder.Rename(ctx, tmp, name)
		switch {
		case rerr == nil:
			renamed = true
			continue
		case !errors.Is(rerr, os.ErrExist):
			return "", &DeliveryError{sc.ID, "rename to " + name, rerr}
		case try == maxRenames:
			// the temporary file goes (the deferred Remove)
			return "", &DeliveryError{sc.ID, "rename", fmt.Errorf("every free name was taken before the rename, %d times: %w", maxRenames, rerr)}
		}
		// someone took the name meanwhile: the next free one
		if name, done, err = c.findName(ctx, folder, sc); err != nil || done {
			return name, err
		}
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

// send writes the held copy to tmp and reads it back: over SMB2/3 through
// the same handle, with several requests in flight and the last flush
// running beside the read-back; otherwise (SMB1) sequentially, then read
// back through a new handle. The copy is flushed to the server's disk
// before it counts.
func (c *copier) send(ctx context.Context, folder Folder, tmp string, local *os.File, sc Scan) error {
	w, err := folder.Create(ctx, tmp)
	if err != nil {
		return &DeliveryError{sc.ID, "create " + tmp, err}
	}
	h := sha256.New()
	var sent, back int64
	ra, random := concurrent(w)
	if random {
		sent, err = writeAll(ra, local, c.ring(), w.Sync, flushEvery)
		if err == nil {
			// read back through the same handle while the last flush runs
			synced := make(chan error, 1)
			go func() { synced <- w.Sync() }()
			back, err = hashAt(h, ra, sent, c.ring())
			if serr := <-synced; err == nil && serr != nil {
				err = serr
			}
		}
	} else {
		sent, err = pipe(w, local, c.ring())
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
		if back, err = c.readBack(ctx, folder, tmp, h, sc.Size); err != nil {
			return &DeliveryError{sc.ID, "verify " + tmp, err}
		}
	}
	if sent != sc.Size {
		return &DeliveryError{sc.ID, "read held copy", fmt.Errorf("it is %d bytes, catalogued %d", sent, sc.Size)}
	}
	if sum := hex.EncodeToString(h.Sum(nil)); back != sc.Size || sum != sc.SHA256 {
		return &DeliveryError{sc.ID, "verify " + tmp, c.mismatch(local, sc, back, sum)}
	}
	return nil
}

// mismatch explains a copy that did not read back as the catalogued scan:
// the held copy is hashed again to tell a held copy that changed on this
// disk since it was received from a destination that stored other bytes.
func (c *copier) mismatch(local *os.File, sc Scan, back int64, sum string) error {
	readBack := fmt.Errorf("read back %d bytes sha256 %s, want %d bytes %s", back, sum, sc.Size, sc.SHA256)
	if _, err := local.Seek(0, io.SeekStart); err != nil {
		return readBack
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, local, c.ring()[0])
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
func (c *copier) findName(ctx context.Context, folder Folder, sc Scan) (string, bool, error) {
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
		err = c.verify(ctx, folder, name, sc)
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
func (c *copier) verify(ctx context.Context, folder Folder, name string, sc Scan) error {
	h := sha256.New()
	n, err := c.readBack(ctx, folder, name, h, sc.Size)
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
func (c *copier) readBack(ctx context.Context, folder Folder, name string, h io.Writer, size int64) (int64, error) {
	r, err := folder.Open(ctx, name)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if ra, ok := concurrent(r); ok {
		return hashAt(h, ra, size, c.ring())
	}
	return pipe(h, r, c.ring())
}
