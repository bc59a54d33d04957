package receiver_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

// dirRemote is a local folder standing in for a destination's real folder
// (a fake for the state machine's corner cases; the real SMB path is
// TestLabDeliverBrokenThenHealed). broken makes Open fail.
type dirRemote struct {
	dir    string
	broken atomic.Bool
	opens  atomic.Int32
}

func (d *dirRemote) Open(ctx context.Context, t scanwarden.Target) (receiver.Folder, error) {
	d.opens.Add(1)
	if d.broken.Load() {
		return nil, errors.New("destination unreachable (fake)")
	}
	return dirFolder(d.dir), nil
}

type dirFolder string

func (d dirFolder) p(n string) string { return filepath.Join(string(d), n) }
func (d dirFolder) Create(_ context.Context, n string) (receiver.RemoteFile, error) {
	return os.OpenFile(d.p(n), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
}
func (d dirFolder) Open(_ context.Context, n string) (receiver.RemoteFile, error) {
	return os.Open(d.p(n))
}
func (d dirFolder) Rename(_ context.Context, a, b string) error {
	if _, err := os.Stat(d.p(b)); err == nil {
		return os.ErrExist
	}
	return os.Rename(d.p(a), d.p(b))
}
func (d dirFolder) Stat(_ context.Context, n string) (fs.FileInfo, error) { return os.Stat(d.p(n)) }
func (d dirFolder) Remove(_ context.Context, n string) error              { return os.Remove(d.p(n)) }
func (d dirFolder) Close() error                                          { return nil }

func TestForwardIdempotent(t *testing.T) {
	remote := &dirRemote{dir: t.TempDir()}
	remote.broken.Store(true)
	e := newEnv(t, opts{remote: remote})
	a := pdf("alpha")
	// at the destination already: a different file of the same name, the
	// same scan under its own name's (2), and a temp file a crash left
	os.WriteFile(filepath.Join(remote.dir, "scan.pdf"), []byte("someone else's"), 0o644)
	if err := e.put("reception/scan.pdf", a, false); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(5*time.Second, "failed while broken", func(r []receiver.Scan) bool { return count(r, receiver.Failed) == 1 })
	if rows[0].Error == "" || rows[0].Attempts < 1 {
		t.Fatalf("%+v", rows[0])
	}
	os.WriteFile(filepath.Join(remote.dir, "scan (2).pdf"), a, 0o644)
	os.WriteFile(filepath.Join(remote.dir, ".scanwarden-1.tmp"), a[:5], 0o644)
	remote.broken.Store(false)
	rows = e.waitScans(5*time.Second, "delivered once healed", func(r []receiver.Scan) bool { return count(r, receiver.Delivered) == 1 })
	ents, _ := os.ReadDir(remote.dir)
	if len(ents) != 2 {
		t.Fatalf("destination holds %d files, want 2 (no duplicate, no temp)", len(ents))
	}
	got, _ := os.ReadFile(filepath.Join(remote.dir, "scan (2).pdf"))
	if sum(got) != sum(a) || rows[0].RemoteName != "" && false {
		t.Fatal("wrong content")
	}
	// another scan of the same name: suffix (3)
	b := pdf("beta")
	if err := e.put("reception/scan.pdf", b, false); err != nil {
		t.Fatal(err)
	}
	e.waitScans(5*time.Second, "second delivered", func(r []receiver.Scan) bool { return count(r, receiver.Delivered) == 2 })
	got, err := os.ReadFile(filepath.Join(remote.dir, "scan (3).pdf"))
	if err != nil || sum(got) != sum(b) {
		t.Fatalf("second scan: %v", err)
	}
	// one scan on demand, by id
	c := pdf("gamma")
	remote.broken.Store(true)
	if err := e.put("reception/one.pdf", c, false); err != nil {
		t.Fatal(err)
	}
	rows = e.waitScans(5*time.Second, "one failed", func(r []receiver.Scan) bool { return count(r, receiver.Failed) == 1 })
	var id int64
	for _, r := range rows {
		if r.State == receiver.Failed {
			id = r.ID
		}
	}
	// (the background forwarder still meets the broken remote)
	healthy := &dirRemote{dir: remote.dir}
	if err := receiver.DeliverScan(context.Background(), e.cfg.DataDir, e.st.Scans(), e.dests, healthy, id); err != nil {
		t.Fatal(err)
	}
	if err := receiver.DeliverScan(context.Background(), e.cfg.DataDir, e.st.Scans(), e.dests, healthy, id); err == nil {
		t.Fatal("a delivered scan delivered again")
	}
	remote.broken.Store(false)
	os.Remove(filepath.Join(remote.dir, "one.pdf"))
	// unsorted scans are never delivered on their own
	if err := e.put("loose.pdf", pdf("loose"), false); err != nil {
		t.Fatal(err)
	}
	e.waitScans(5*time.Second, "loose held", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 1 })
	// A forced pass over every held scan, in this goroutine: the loose one
	// is not among what it delivers.
	if n, err := e.r.Deliver(context.Background(), ""); n != 0 || err != nil {
		t.Fatalf("a pass over every held scan delivered %d: %v", n, err)
	}
	if ents, _ := os.ReadDir(remote.dir); len(ents) != 3 {
		t.Fatalf("destination holds %d files", len(ents))
	}
	rows = e.waitScans(time.Second, "the catalogue read", func([]receiver.Scan) bool { return true })
	if count(rows, receiver.Held) != 1 {
		t.Fatalf("the loose scan left held: %+v", rows)
	}
}

// The lab DC's share: the destination folder is first missing, then
// read-only, then writable; every scan arrives once, verified.
func TestLabDeliverBrokenThenHealed(t *testing.T) {
	lab := testlab.Require(t)
	sub := "rx-" + time.Now().Format("150405.000")
	local := filepath.Join(lab.Dir, "dc", "shares", "scans", sub)
	if _, err := os.Stat(filepath.Dir(local)); err != nil {
		testlab.Missing(t, fmt.Sprintf("lab share folder not visible here: %v", err))
	}
	t.Cleanup(func() { os.RemoveAll(local) })
	target := scanwarden.Target{Host: lab.DCIP, Share: "scans", Path: sub, User: lab.Domain + `\alice`,
		Password: scanwardenSecret(lab.Password), Workstation: "MFP01"}
	dests := staticDests{{Name: "alice-scans", Folder: "alice-scans", Target: target}}
	e := newEnv(t, opts{remote: receiver.SMBRemote{MaxFailures: 2, Timeout: 5 * time.Second}, dests: dests})
	a, b := pdf("one"), pdf("two")
	if err := e.put("alice-scans/doc.pdf", a, false); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(10*time.Second, "fails: folder missing", func(r []receiver.Scan) bool { return count(r, receiver.Failed) == 1 })
	t.Logf("missing folder: %s", rows[0].Error)
	// wrong permission
	if err := os.Mkdir(local, 0o555); err != nil {
		t.Fatal(err)
	}
	os.Chmod(local, 0o555)
	if err := e.put("alice-scans/doc.pdf", b, false); err != nil {
		t.Fatal(err)
	}
	e.waitScans(10*time.Second, "both held/failed", func(r []receiver.Scan) bool { return len(r) == 2 })
	n, err := e.r.Deliver(context.Background(), "alice-scans")
	if n != 0 {
		t.Fatalf("delivered %d into a read-only folder (%v)", n, err)
	}
	if err == nil {
		// the background forwarder had both scans in hand (it retries
		// every 200 ms here): its attempts are the ones that fail
		rows := e.waitScans(10*time.Second, "both failed in the read-only folder", func(r []receiver.Scan) bool {
			if d := count(r, receiver.Delivered); d != 0 {
				t.Fatalf("%d delivered into a read-only folder: %+v", d, r)
			}
			return count(r, receiver.Failed) == 2
		})
		err = errors.New(rows[1].Error)
	}
	t.Logf("read-only folder: %v", err)
	if ents, _ := os.ReadDir(local); len(ents) != 0 {
		t.Fatalf("a file is left in the read-only folder: %v", ents)
	}
	// healed
	os.Chmod(local, 0o777)
	n, err = e.r.Deliver(context.Background(), "alice-scans")
	if err != nil {
		t.Fatalf("healed: %d delivered, %v", n, err)
	}
	rows = e.waitScans(10*time.Second, "both delivered", func(r []receiver.Scan) bool { return count(r, receiver.Delivered) == 2 })
	ents, _ := os.ReadDir(local)
	if len(ents) != 2 {
		t.Fatalf("destination holds %v", ents)
	}
	for _, r := range rows {
		got, err := os.ReadFile(filepath.Join(local, r.RemoteName))
		if err != nil || sum(got) != r.SHA256 {
			t.Fatalf("scan %d at %s: %v", r.ID, r.RemoteName, err)
		}
	}
}

// A wrong stored password: the delivery fails as a logon failure, waits for
// a green check instead of the back-off, never shows the password, and a
// second try with the same password is kept back by the failure ledger
// (nothing sent). The standalone lab server has no lockout policy.
func TestLabDeliverWrongPassword(t *testing.T) {
	lab := testlab.Require(t)
	const wrong = "Not.The-Password-7"
	target := scanwarden.Target{Host: lab.SMB2IP, Share: "scans", User: "scanuser", Password: scanwardenSecret(wrong), Workstation: "MFP01"}
	dests := staticDests{{Name: "nas", Folder: "nas", Target: target}}
	ledger := &smbclient.MemoryLedger{}
	remote := receiver.SMBRemote{Ledger: ledger, MaxFailures: 2, Timeout: 5 * time.Second}
	e := newEnv(t, opts{remote: remote, dests: dests})
	if err := e.put("nas/a.pdf", pdf("a"), false); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(10*time.Second, "failed", func(r []receiver.Scan) bool { return count(r, receiver.Failed) == 1 })
	sc := rows[0]
	if strings.Contains(sc.Error, wrong) || !strings.Contains(sc.Error, receiver.ErrLogon.Error()) {
		t.Fatalf("error %q", sc.Error)
	}
	// back-off of a logon failure: MaxRetry, not Retry
	if wait := time.Until(sc.NextAttempt); wait < 500*time.Millisecond {
		t.Fatalf("a logon failure is retried after %v", wait)
	}
	_, err := e.r.Deliver(context.Background(), "nas")
	if err == nil || !errors.Is(err, receiver.ErrLogon) || strings.Contains(err.Error(), wrong) {
		t.Fatalf("second try: %v", err)
	}
	t.Logf("second try: %v", err)
}

// Retention 0: a delivered scan's local copy is purged right away.
func TestPurgeAfterRetention(t *testing.T) {
	remote := &dirRemote{dir: t.TempDir()}
	zero := time.Duration(0)
	e := newEnv(t, opts{remote: remote, retain: &zero})
	if err := e.put("reception/p.pdf", pdf("purge me"), false); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(5*time.Second, "purged", func(r []receiver.Scan) bool { return count(r, receiver.Purged) == 1 })
	if _, err := os.Stat(filepath.Join(e.dir, rows[0].HeldPath)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("held copy of a purged scan: %v", err)
	}
	if rows[0].DeliveredAt.IsZero() {
		t.Fatal("purged scan lost its delivery time")
	}
	if _, err := os.Stat(filepath.Join(remote.dir, "p.pdf")); err != nil {
		t.Fatal(err)
	}
}

// Deliveries on demand race the background forwarder: claims let each scan
// be copied once, and no two copies share a buffer.
func TestDeliverConcurrent(t *testing.T) {
	remote := &dirRemote{dir: t.TempDir()}
	remote.broken.Store(true)
	e := newEnv(t, opts{remote: remote})
	want := map[string]bool{}
	for i := range 6 {
		data := pdf(strings.Repeat(string(rune('k'+i)), 3<<20))
		want[sum(data)] = true
		if err := e.put(fmt.Sprintf("reception/c%d.pdf", i), data, false); err != nil {
			t.Fatal(err)
		}
	}
	e.waitScans(10*time.Second, "all failed", func(r []receiver.Scan) bool { return count(r, receiver.Failed) == 6 })
	remote.broken.Store(false)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); e.r.Deliver(context.Background(), "") }()
	}
	wg.Wait()
	e.waitScans(10*time.Second, "all delivered", func(r []receiver.Scan) bool { return count(r, receiver.Delivered) == 6 })
	ents, _ := os.ReadDir(remote.dir)
	if len(ents) != 6 {
		t.Fatalf("%d files at the destination", len(ents))
	}
	for _, en := range ents {
		b, _ := os.ReadFile(filepath.Join(remote.dir, en.Name()))
		if !want[sum(b)] {
			t.Errorf("%s: not one of the scans", en.Name())
		}
	}
}

// Issue 23: deliveries count failed logons over the configured window
// (checks.failure_window), not smbcheck's 30-minute default: a wrong stored
// password is kept back for the window given, against the receiver's own
// smbd (standalone: no lockout policy).
func TestSMBRemoteUsesConfiguredWindow(t *testing.T) {
	e := newEnv(t, opts{remote: &dirRemote{dir: t.TempDir()}})
	target := scanwarden.Target{Host: "127.0.0.1", Port: e.cfg.Port, Share: "scans", User: "swmfp",
		Password: scanwardenSecret("Not.The-Password-7"), Workstation: "MFP01"}
	for _, window := range []time.Duration{2 * time.Hour, 5 * time.Minute} {
		remote := receiver.SMBRemote{Ledger: &smbclient.MemoryLedger{}, MaxFailures: 2, Window: window, Timeout: 5 * time.Second}
		if _, err := remote.Open(context.Background(), target); !errors.Is(err, receiver.ErrLogon) {
			t.Fatalf("wrong password: %v", err)
		}
		_, err := remote.Open(context.Background(), target)
		var se *smbclient.Error
		if !errors.As(err, &se) || se.Refusal == nil || se.Refusal.Last == nil {
			t.Fatalf("second try with the same password was not kept back: %v", err)
		}
		if got := se.Refusal.RetryAt.Sub(se.Refusal.Last.At); got != window {
			t.Errorf("window %v: the same password is kept back for %v", window, got)
		}
		if !strings.Contains(se.Refusal.Reason, spellWindow(window)) {
			t.Errorf("window %v: reason %q", window, se.Refusal.Reason)
		}
	}
}

func spellWindow(d time.Duration) string {
	if d >= time.Hour {
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return fmt.Sprintf("%d minutes", d/time.Minute)
}

// TestDeliverScanBacksOffAsConfigured: a "deliver now" that fails backs
// off with the running receiver's configured timings (here at most 1 s),
// not the defaults' 30 s and more.
func TestDeliverScanBacksOffAsConfigured(t *testing.T) {
	remote := &dirRemote{dir: t.TempDir()}
	remote.broken.Store(true)
	e := newEnv(t, opts{remote: remote})
	if err := e.put("reception/now.pdf", pdf("now"), false); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(5*time.Second, "failed while broken", func(r []receiver.Scan) bool { return count(r, receiver.Failed) == 1 })
	if err := e.r.DeliverScan(context.Background(), rows[0].ID); err == nil {
		t.Fatal("delivered to a broken destination")
	}
	sc, err := e.st.Scans().Scan(context.Background(), rows[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if wait := time.Until(sc.NextAttempt); wait > e.cfg.Forward.MaxRetry+time.Second {
		t.Fatalf("next attempt in %v, want at most the configured %v", wait.Round(time.Second), e.cfg.Forward.MaxRetry)
	}
}
