package receiver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/store"
)

// heldScan catalogues data as a held scan "scan.pdf" for destination "d"
// in a fresh data dir (no smbd: the forwarder alone).
func heldScan(t *testing.T, data []byte) (dir string, cat receiver.Catalogue, id int64) {
	t.Helper()
	dir = t.TempDir()
	st, err := store.OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	held := filepath.Join(dir, "held", "x.pdf")
	os.MkdirAll(filepath.Dir(held), 0o700)
	if err := os.WriteFile(held, data, 0o600); err != nil {
		t.Fatal(err)
	}
	id, err = st.Scans().AddScan(context.Background(), receiver.Scan{Destination: "d", Folder: "d", File: "scan.pdf",
		Size: int64(len(data)), SHA256: sum(data), State: receiver.Held, ReceivedAt: time.Now(), HeldPath: "held/x.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	return dir, st.Scans(), id
}

var dDest = staticDests{{Name: "d", Folder: "d"}}

// corruptRemote is a destination folder whose server stores one byte
// wrong in every write (a fake: no lab server corrupts on demand);
// sequential hides WriteAt/ReadAt, as over SMB1.
type corruptRemote struct {
	dir        string
	sequential bool
}

func (c corruptRemote) Open(context.Context, scanwarden.Target) (receiver.Folder, error) {
	return corruptFolder{dirFolder(c.dir), c.sequential}, nil
}

type corruptFolder struct {
	dirFolder
	sequential bool
}

func (f corruptFolder) Create(ctx context.Context, n string) (receiver.RemoteFile, error) {
	rf, err := f.dirFolder.Create(ctx, n)
	if err != nil {
		return nil, err
	}
	if f.sequential {
		return seqFile{corruptFile{rf.(*os.File)}}, nil
	}
	return corruptFile{rf.(*os.File)}, nil
}

type corruptFile struct{ *os.File }

func flip(p []byte) []byte {
	q := append([]byte(nil), p...)
	if len(q) > 0 {
		q[len(q)/2] ^= 1
	}
	return q
}

func (f corruptFile) Write(p []byte) (int, error) { return f.File.Write(flip(p)) }
func (f corruptFile) WriteAt(p []byte, off int64) (int, error) {
	return f.File.WriteAt(flip(p), off)
}

// seqFile offers only what an SMB1 file does: sequential Read and Write.
type seqFile struct{ f corruptFile }

func (s seqFile) Read(p []byte) (int, error)  { return s.f.Read(p) }
func (s seqFile) Write(p []byte) (int, error) { return s.f.Write(p) }
func (s seqFile) Sync() error                 { return s.f.Sync() }
func (s seqFile) Close() error                { return s.f.Close() }

// A destination that stores other bytes than were sent: the read-back
// catches it, the scan fails, and nothing is left under the final name
// (nor the temporary one) — over SMB2/3-like concurrent files and over
// sequential (SMB1-like) ones. Then a faithful destination gets it.
func TestDeliverCatchesCorruption(t *testing.T) {
	for _, seq := range []bool{false, true} {
		name := map[bool]string{false: "concurrent", true: "sequential"}[seq]
		t.Run(name, func(t *testing.T) {
			data := pdf(strings.Repeat("page ", 700000)) // several copy buffers
			dir, cat, id := heldScan(t, data)
			dest := t.TempDir()
			n, err := receiver.DeliverNow(context.Background(), dir, cat, dDest, corruptRemote{dest, seq}, "d")
			if n != 0 || err == nil || !strings.Contains(err.Error(), "read back") {
				t.Fatalf("delivered %d, err %v", n, err)
			}
			if ents, _ := os.ReadDir(dest); len(ents) != 0 {
				t.Fatalf("left at the destination: %v", ents)
			}
			sc, _ := cat.Scan(context.Background(), id)
			if sc.State != receiver.Failed || !strings.Contains(sc.Error, "read back") {
				t.Fatalf("scan %+v", sc)
			}
			t.Logf("corrupting destination: %s", sc.Error)
			n, err = receiver.DeliverNow(context.Background(), dir, cat, dDest, &dirRemote{dir: dest}, "d")
			if n != 1 || err != nil {
				t.Fatalf("healthy destination: %d, %v", n, err)
			}
			got, err := os.ReadFile(filepath.Join(dest, "scan.pdf"))
			if err != nil || sum(got) != sum(data) {
				t.Fatalf("delivered copy: %v", err)
			}
		})
	}
}

// A held copy that changed on the receiver's disk after it was catalogued
// (same size, one byte) is caught before it is marked delivered, the error
// says where the difference is, and nothing stays at the destination.
func TestDeliverHeldCopyChanged(t *testing.T) {
	data := pdf(strings.Repeat("scan ", 300000))
	dir, cat, id := heldScan(t, data)
	bad := append([]byte(nil), data...)
	bad[len(bad)/3] ^= 0x40
	os.WriteFile(filepath.Join(dir, "held", "x.pdf"), bad, 0o600)
	dest := t.TempDir()
	n, err := receiver.DeliverNow(context.Background(), dir, cat, dDest, &dirRemote{dir: dest}, "d")
	if n != 0 || err == nil || !strings.Contains(err.Error(), "held copy no longer matches") {
		t.Fatalf("delivered %d, err %v", n, err)
	}
	if ents, _ := os.ReadDir(dest); len(ents) != 0 {
		t.Fatalf("left at the destination: %v", ents)
	}
	if sc, _ := cat.Scan(context.Background(), id); sc.State != receiver.Failed {
		t.Fatalf("scan %+v", sc)
	}
}

// racingCat lets another delivery claim each scan between the forwarder's
// query and its own claim.
type racingCat struct{ receiver.Catalogue }

func (c racingCat) UpdateScan(ctx context.Context, s receiver.Scan, from receiver.State) (bool, error) {
	if s.State == receiver.Delivering && !strings.HasPrefix(s.Claim, "other:") {
		other := s
		other.Claim = "other:1"
		c.Catalogue.UpdateScan(ctx, other, from)
	}
	return c.Catalogue.UpdateScan(ctx, s, from)
}

// A scan another delivery claimed first is neither copied nor counted by
// this one (it was counted as delivered: TestLabDeliverBrokenThenHealed
// once saw "1 delivered" into a read-only folder under load), and a
// delivery of that one scan says so instead of reporting success.
func TestDeliverCountsOnlyItsOwn(t *testing.T) {
	dir, cat, id := heldScan(t, pdf("claimed elsewhere"))
	dest := t.TempDir()
	n, err := receiver.DeliverNow(context.Background(), dir, racingCat{cat}, dDest, &dirRemote{dir: dest}, "d")
	if n != 0 || err != nil {
		t.Fatalf("delivered %d, err %v", n, err)
	}
	if ents, _ := os.ReadDir(dest); len(ents) != 0 {
		t.Fatalf("copied: %v", ents)
	}
	sc, _ := cat.Scan(context.Background(), id)
	if sc.State != receiver.Delivering || sc.Claim != "other:1" {
		t.Fatalf("scan %+v", sc)
	}
	// the same race through DeliverScan
	sc.State, sc.Claim = receiver.Held, ""
	cat.UpdateScan(context.Background(), sc, receiver.Delivering)
	err = receiver.DeliverScan(context.Background(), dir, racingCat{cat}, dDest, &dirRemote{dir: dest}, id)
	if err == nil || !strings.Contains(err.Error(), "another delivery") {
		t.Fatalf("DeliverScan of a scan claimed by another: %v", err)
	}
}

// slowRename is a local destination folder whose rename looks for the
// target, waits, then replaces — as smbcheck's SMB2 rename does (the SMB
// library's rename replaces), with the window between made wide (a fake:
// the race needs a timing no real server gives on demand).
type slowRename struct{ dir string }

func (s slowRename) Open(context.Context, scanwarden.Target) (receiver.Folder, error) {
	return slowRenameFolder{dirFolder(s.dir)}, nil
}

type slowRenameFolder struct{ dirFolder }

func (f slowRenameFolder) Rename(_ context.Context, a, b string) error {
	if _, err := os.Stat(f.p(b)); err == nil {
		return os.ErrExist
	}
	time.Sleep(150 * time.Millisecond)
	return os.Rename(f.p(a), f.p(b))
}

// Scans of one name delivered at the same time by the receiver's
// forwarders (background, Deliver, DeliverScan) each get their own name:
// none replaces another's copy. (Two of them once picked the same free
// name, and the second rename replaced the first copy: a scan marked
// delivered was gone — seen as TestLabDeliverBrokenThenHealed failing
// with one file at the destination.)
func TestDeliverSameNameConcurrent(t *testing.T) {
	remote := &dirRemote{dir: t.TempDir()}
	remote.broken.Store(true)
	e := newEnv(t, opts{remote: remote})
	want := map[string]bool{}
	for i := range 4 {
		data := pdf(strings.Repeat(string(rune('p'+i)), 1000)) // same size, other bytes
		want[sum(data)] = true
		if err := e.put("reception/same.pdf", data, false); err != nil {
			t.Fatal(err)
		}
		e.waitScans(10*time.Second, "taken in", func(r []receiver.Scan) bool { return len(r) == i+1 })
	}
	rows := e.waitScans(10*time.Second, "all failed", func(r []receiver.Scan) bool { return count(r, receiver.Failed) == 4 })
	e.r.Close() // no background forwarder meeting the broken remote: one with the slow rename below
	e.open(slowRename{remote.dir})
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				e.r.DeliverScan(context.Background(), rows[3].ID)
				return
			}
			e.r.Deliver(context.Background(), "")
		}()
	}
	wg.Wait()
	e.waitScans(10*time.Second, "all delivered", func(r []receiver.Scan) bool { return count(r, receiver.Delivered) == 4 })
	ents, _ := os.ReadDir(remote.dir)
	got := map[string]bool{}
	for _, en := range ents {
		b, _ := os.ReadFile(filepath.Join(remote.dir, en.Name()))
		got[sum(b)] = true
	}
	if len(ents) != 4 || len(got) != 4 {
		t.Fatalf("destination holds %d files, %d different scans: %v", len(ents), len(got), ents)
	}
}

// errSharing stands for a Windows server's STATUS_SHARING_VIOLATION (a
// user or a virus scanner holds the file open without share-read): a fake,
// no lab server produces it on demand.
var errSharing = errors.New("open: sharing violation")

// unreadable is a destination folder whose named file cannot be opened.
type unreadable struct {
	dir, name string
}

func (u unreadable) Open(context.Context, scanwarden.Target) (receiver.Folder, error) {
	return unreadableFolder{dirFolder(u.dir), u.name}, nil
}

type unreadableFolder struct {
	dirFolder
	name string
}

func (f unreadableFolder) Open(ctx context.Context, n string) (receiver.RemoteFile, error) {
	if n == f.name {
		return nil, errSharing
	}
	return f.dirFolder.Open(ctx, n)
}

// A file of the scan's name and size that cannot be read back may be this
// very scan (a crash after its rename, before it was marked delivered):
// the delivery fails and is retried, instead of delivering a second copy
// under "scan (2).pdf". Once it reads back as the scan, the scan counts as
// delivered there; a file of that size with other bytes does free the
// next name.
func TestDeliverUnreadableNameIsNoOtherFile(t *testing.T) {
	data := pdf(strings.Repeat("kill -9 ", 5000))
	dir, cat, id := heldScan(t, data)
	dest := t.TempDir()
	os.WriteFile(filepath.Join(dest, "scan.pdf"), data, 0o600) // delivered before the crash
	n, err := receiver.DeliverNow(context.Background(), dir, cat, dDest, unreadable{dest, "scan.pdf"}, "d")
	if n != 0 || !errors.Is(err, errSharing) {
		t.Fatalf("delivered %d, err %v", n, err)
	}
	if ents, _ := os.ReadDir(dest); len(ents) != 1 {
		t.Fatalf("destination holds %v", ents)
	}
	sc, _ := cat.Scan(context.Background(), id)
	if sc.State != receiver.Failed || !strings.Contains(sc.Error, "sharing violation") {
		t.Fatalf("scan %+v", sc)
	}
	n, err = receiver.DeliverNow(context.Background(), dir, cat, dDest, &dirRemote{dir: dest}, "d")
	if sc, _ = cat.Scan(context.Background(), id); n != 1 || err != nil || sc.RemoteName != "scan.pdf" {
		t.Fatalf("readable: %d, %v, %+v", n, err, sc)
	}
	if ents, _ := os.ReadDir(dest); len(ents) != 1 {
		t.Fatalf("destination holds %v", ents)
	}

	// Same size, other bytes: the next name.
	dir, cat, id = heldScan(t, data)
	dest = t.TempDir()
	other := append([]byte(nil), data...)
	other[100] ^= 1
	os.WriteFile(filepath.Join(dest, "scan.pdf"), other, 0o600)
	n, err = receiver.DeliverNow(context.Background(), dir, cat, dDest, &dirRemote{dir: dest}, "d")
	if sc, _ = cat.Scan(context.Background(), id); n != 1 || err != nil || sc.RemoteName != "scan (2).pdf" {
		t.Fatalf("another file of that name: %d, %v, %+v", n, err, sc)
	}
}

// hangingRemote opens real local folders by the target's host: the folder
// of host "hung" answers every rename only once release is closed (a fake
// for a destination server that stopped answering: its timeout is minutes).
type hangingRemote struct {
	dirs    map[string]string // host → local folder
	entered chan struct{}     // a rename reached the hung folder
	release chan struct{}
}

func (h hangingRemote) Open(_ context.Context, t scanwarden.Target) (receiver.Folder, error) {
	if t.Host == "hung" {
		return hungFolder{dirFolder(h.dirs[t.Host]), h}, nil
	}
	return dirFolder(h.dirs[t.Host]), nil
}

type hungFolder struct {
	dirFolder
	h hangingRemote
}

func (f hungFolder) Rename(ctx context.Context, a, b string) error {
	f.h.entered <- struct{}{}
	select {
	case <-f.h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return f.dirFolder.Rename(ctx, a, b)
}

// A destination that hangs while a delivery holds its names lock (between
// picking the final name and the rename) holds up no delivery to another
// destination: the names lock is per destination folder.
func TestDeliverHungDestinationBlocksNoOther(t *testing.T) {
	h := hangingRemote{dirs: map[string]string{"hung": t.TempDir(), "fine": t.TempDir()},
		entered: make(chan struct{}, 1), release: make(chan struct{})}
	dests := staticDests{{Name: "hung", Folder: "hung", Target: scanwarden.Target{Host: "hung", Share: "s"}},
		{Name: "fine", Folder: "fine", Target: scanwarden.Target{Host: "fine", Share: "s"}}}
	e := newEnv(t, opts{remote: h, dests: dests})
	ids := map[string]int64{}
	for _, d := range dests {
		data := pdf("to " + d.Name)
		held := filepath.Join("held", d.Name+".pdf")
		os.MkdirAll(filepath.Join(e.dir, "held"), 0o700)
		if err := os.WriteFile(filepath.Join(e.dir, held), data, 0o600); err != nil {
			t.Fatal(err)
		}
		// failed, retry far off: the background forwarder leaves them alone
		id, err := e.st.Scans().AddScan(context.Background(), receiver.Scan{Destination: d.Name, Folder: d.Folder, File: "scan.pdf",
			Size: int64(len(data)), SHA256: sum(data), State: receiver.Failed, ReceivedAt: time.Now(), HeldPath: held,
			NextAttempt: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		ids[d.Name] = id
	}
	hung := make(chan error, 1)
	go func() { hung <- e.r.DeliverScan(context.Background(), ids["hung"]) }()
	select {
	case <-h.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the delivery to the hung destination did not reach its rename")
	}
	fine := make(chan error, 1)
	t0 := time.Now()
	go func() { fine <- e.r.DeliverScan(context.Background(), ids["fine"]) }()
	select {
	case err := <-fine:
		if err != nil {
			t.Errorf("delivery to the other destination: %v", err)
		}
		t.Logf("the other destination's delivery took %v while one hung", time.Since(t0))
		fine <- nil
	case <-time.After(5 * time.Second):
		t.Error("the delivery to the other destination waited on the hung one")
	}
	close(h.release)
	if err := <-hung; err != nil {
		t.Errorf("the hung destination, released: %v", err)
	}
	if err := <-fine; err != nil {
		t.Errorf("delivery to the other destination: %v", err)
	}
	for name, dir := range h.dirs {
		if b, err := os.ReadFile(filepath.Join(dir, "scan.pdf")); err != nil || sum(b) != sum(pdf("to "+name)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A row held before the share judged content at ingest (an older version
// took it in) is judged again before it leaves: an EXE held as "old.pdf" is
// refused at delivery and never reaches the folder.
func TestDeliverJudgesContentAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exe := append([]byte("MZ\x90\x00"), make([]byte, 1000)...)
	held := filepath.Join("held", "old.pdf")
	os.MkdirAll(filepath.Join(dir, "held"), 0o700)
	if err := os.WriteFile(filepath.Join(dir, held), exe, 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "front", Folder: "front", File: "old.pdf", Size: int64(len(exe)),
		SHA256: sum(exe), State: receiver.Held, ReceivedAt: time.Now(), HeldPath: held})
	if err != nil {
		t.Fatal(err)
	}
	remote := &dirRemote{dir: t.TempDir()}
	n, err := receiver.DeliverNow(ctx, dir, st.Scans(), staticDests{{Name: "front", Folder: "front"}}, remote, "")
	if n != 0 || !errors.Is(err, receiver.ErrRefused) {
		t.Errorf("delivered %d (%v), want 0 and ErrRefused", n, err)
	}
	sc, err := st.Scans().Scan(ctx, id)
	if err != nil || sc.State != receiver.Refused || !strings.Contains(sc.Error, "Windows program") {
		t.Errorf("row after delivery: %s %q (%v)", sc.State, sc.Error, err)
	}
	if ents, _ := os.ReadDir(remote.dir); len(ents) != 0 {
		t.Errorf("the folder holds %d files", len(ents))
	}
}

// takenRemote is a destination folder where another writer takes every
// name just before the rename (a fake: no lab server loses a race on
// demand a hundred times in a row).
type takenRemote struct{ dir string }

func (r takenRemote) Open(context.Context, scanwarden.Target) (receiver.Folder, error) {
	return takenFolder{dirFolder(r.dir)}, nil
}

type takenFolder struct{ dirFolder }

func (takenFolder) Rename(context.Context, string, string) error { return os.ErrExist }

// A copy that loses its name every time fails after the bound, says so,
// and leaves no temporary file at the destination.
func TestDeliverEveryNameTaken(t *testing.T) {
	data := pdf(strings.Repeat("page ", 1000))
	dir, cat, id := heldScan(t, data)
	dest := t.TempDir()
	n, err := receiver.DeliverNow(context.Background(), dir, cat, dDest, takenRemote{dest}, "d")
	if n != 0 || err == nil || !strings.Contains(err.Error(), "every free name was taken") {
		t.Fatalf("delivered %d, err %v", n, err)
	}
	if ents, _ := os.ReadDir(dest); len(ents) != 0 {
		t.Fatalf("left at the destination: %v", ents)
	}
	if sc, _ := cat.Scan(context.Background(), id); sc.State != receiver.Failed {
		t.Fatalf("scan %+v", sc)
	}
}
