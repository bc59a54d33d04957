package receiver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

const mfpPassword = "Mfp.Test-25"

func requireSmbd(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	for _, p := range []string{"/usr/sbin/smbd", "/usr/bin/smbclient", "/usr/bin/testparm"} {
		if _, err := os.Stat(p); err != nil {
			testlab.Missing(t, "samba/smbclient not installed (testlab/deps): "+p)
		}
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type staticDests []receiver.Destination

func (d staticDests) Destinations(context.Context) ([]receiver.Destination, error) { return d, nil }

type env struct {
	t     testing.TB
	dir   string
	st    *store.Store
	wrap  func(receiver.Catalogue) receiver.Catalogue // the receiver's catalogue, wrapped (nil: the store's)
	r     *receiver.Receiver
	cfg   receiver.Config
	dests staticDests
	obs   receiver.Observer
}

type opts struct {
	smb1   bool
	quiet  time.Duration
	remote receiver.Remote
	wrap   func(receiver.Catalogue) receiver.Catalogue // see env.wrap
	dests  staticDests
	keep   bool
	dir    string // data dir (default a temporary one)
	retain *time.Duration
	listen string // address (default 127.0.0.1)
	port   int    // port (default a free one)
	allow  []netip.Prefix
	// observer is told what the clients' logons and scans show.
	observer receiver.Observer
}

func newEnv(t testing.TB, o opts) *env {
	t.Helper()
	requireSmbd(t)
	dir := o.dir
	if dir == "" {
		dir = t.TempDir()
	}
	os.Chmod(dir, 0o755)
	st, err := store.OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if o.quiet == 0 {
		o.quiet = 3 * time.Second
	}
	if o.dests == nil {
		o.dests = staticDests{{Name: "Reception desk", Folder: "reception"}}
	}
	if o.listen == "" {
		o.listen = "127.0.0.1"
	}
	if o.port == 0 {
		o.port = freePort(t)
	}
	cfg := receiver.Config{DataDir: dir, Listen: netip.MustParseAddr(o.listen), Port: o.port, Share: "scans",
		Accounts: []samba.Account{{Name: "swmfp", Password: scanwarden.NewSecret(mfpPassword)}}, SMB1: o.smb1, Allow: o.allow,
		Watch:     receiver.WatchConfig{Quiet: o.quiet, QuietAfterLogoff: 200 * time.Millisecond, Rescan: 2 * time.Second},
		Forward:   receiver.ForwardConfig{Retry: 200 * time.Millisecond, MaxRetry: time.Second, Retention: time.Hour, Poll: 100 * time.Millisecond},
		KeepSamba: o.keep}
	if o.retain != nil {
		cfg.Forward.Retention = *o.retain
	}
	e := &env{t: t, dir: dir, st: st, cfg: cfg, dests: o.dests, wrap: o.wrap, obs: o.observer}
	e.open(o.remote)
	t.Cleanup(func() {
		e.r.Close()
		if o.keep {
			e.r.Samba().Stop(context.Background())
		}
	})
	return e
}

func (e *env) open(remote receiver.Remote) {
	e.t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var cat receiver.Catalogue = e.st.Scans()
	if e.wrap != nil {
		cat = e.wrap(cat)
	}
	r, err := receiver.New(e.cfg, cat, e.dests, remote, log)
	if err != nil {
		e.t.Fatal(err)
	}
	if e.obs != nil {
		r.Observe(e.obs)
	}
	if err := r.Open(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.r = r
}

// put uploads data as name with smbclient, as an MFP would; it logs off at the end.
func (e *env) put(name string, data []byte, smb1 bool) error {
	src := filepath.Join(e.t.TempDir(), "src")
	if err := os.WriteFile(src, data, 0o600); err != nil {
		e.t.Fatal(err)
	}
	return smbput(e.cfg, src, name, smb1)
}

func smbput(cfg receiver.Config, src, name string, smb1 bool) error {
	dir, base := filepath.Split(name)
	cmd := fmt.Sprintf("put \"%s\" \"%s\"", src, base)
	if dir != "" {
		cmd = fmt.Sprintf("cd \"%s\"; %s", strings.TrimSuffix(dir, "/"), cmd)
	}
	out, err := exec.Command("smbclient", smbArgs(cfg, smb1, cmd)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("smbclient %s: %v: %s", cmd, err, out)
	}
	if bytes.Contains(out, []byte("NT_STATUS_")) {
		return fmt.Errorf("smbclient %s: %s", cmd, out)
	}
	return nil
}

func smbArgs(cfg receiver.Config, smb1 bool, cmd string) []string {
	args := []string{"//" + cfg.Listen.String() + "/" + cfg.Share, "-U", "swmfp%" + mfpPassword, "-p", strconv.Itoa(cfg.Port),
		"--use-kerberos=disabled", "-c", cmd}
	if smb1 {
		// as old Kyocera firmware: SMB1, NTLMv1, no SPNEGO
		return append(args, "-m", "NT1", "--option=client min protocol=NT1", "--option=client ntlmv2 auth=no", "--option=client use spnego=no")
	}
	return append(args, "-m", "SMB3")
}

func pdf(body string) []byte {
	return []byte("%PDF-1.4\n1 0 obj\n<< /Body (" + body + ") >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// waitScans waits until cond holds over the catalogue.
func (e *env) waitScans(d time.Duration, what string, cond func([]receiver.Scan) bool) []receiver.Scan {
	e.t.Helper()
	deadline := time.Now().Add(3 * d) // slack for a loaded machine

	for {
		rows, err := e.st.Scans().Scans(context.Background(), receiver.ScanQuery{})
		if err != nil {
			e.t.Fatal(err)
		}
		if cond(rows) {
			return rows
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within %v; catalogue: %+v", what, d, rows)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func count(rows []receiver.Scan, st receiver.State) int {
	n := 0
	for _, r := range rows {
		if r.State == st {
			n++
		}
	}
	return n
}

func TestReceiveSMB3(t *testing.T) {
	e := newEnv(t, opts{quiet: 30 * time.Second})
	a, b := pdf("first"), pdf("second, longer")
	start := time.Now()
	if err := e.put("reception/scan.pdf", a, false); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(5*time.Second, "first scan held", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 1 })
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("logged-off upload took %v to be held (the 30 s quiet window applied, not the one after logoff)", el)
	}
	sc := rows[0]
	if sc.Destination != "Reception desk" || sc.File != "scan.pdf" || sc.SHA256 != sum(a) || sc.Size != int64(len(a)) {
		t.Fatalf("catalogued %+v", sc)
	}
	if !strings.Contains(sc.Writer, "swmfp|127.0.0.1") {
		t.Errorf("writer from the audit log: %q", sc.Writer)
	}
	got, err := os.ReadFile(filepath.Join(e.dir, sc.HeldPath))
	if err != nil || !bytes.Equal(got, a) {
		t.Fatalf("held copy: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "inbox", "reception", "scan.pdf")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("inbox copy still there: %v", err)
	}
	// the same name again: both kept
	if err := e.put("reception/scan.pdf", b, false); err != nil {
		t.Fatal(err)
	}
	rows = e.waitScans(5*time.Second, "second scan held", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 2 })
	if rows[1].SHA256 != sum(b) || rows[0].HeldPath == rows[1].HeldPath {
		t.Fatalf("second scan: %+v", rows[1])
	}
	// unsorted and junk
	if err := e.put("loose.pdf", pdf("loose"), false); err != nil {
		t.Fatal(err)
	}
	for _, j := range []string{"reception/Thumbs.db", "reception/._scan.pdf", "reception/~$x.docx", "reception/a.tmp"} {
		if err := e.put(j, []byte("junk"), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.put("reception/empty.pdf", nil, false); err != nil {
		t.Fatal(err)
	}
	e.waitScans(5*time.Second, "loose scan held", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 3 })
	// The barrier: a scan put after the junk is held only once the watcher
	// has handled every event before it — the junk's included.
	if err := e.put("reception/after.pdf", pdf("after the junk"), false); err != nil {
		t.Fatal(err)
	}
	rows = e.waitScans(5*time.Second, "the scan after the junk held", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 4 })
	if len(rows) != 4 || rows[2].Destination != "" || rows[2].Folder != receiver.Unsorted || rows[3].File != "after.pdf" {
		t.Fatalf("junk catalogued or loose file misfiled: %+v", rows)
	}
	st, err := e.r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// No allowlist in this env: the one standing warning says the share is open.
	if !st.SmbdUp || st.Counts[receiver.Held] != 4 || st.Inbox != 5 || st.SMB1 || len(st.Warnings) != 1 || st.Warnings[0] != receiver.AnyAddressWarning {
		t.Fatalf("status %+v", st)
	}
}

func TestCutPDFStaysIncomplete(t *testing.T) {
	e := newEnv(t, opts{})
	full := pdf(strings.Repeat("page ", 2000))
	if err := e.put("reception/cut.pdf", full[:len(full)/2], false); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(5*time.Second, "cut PDF incomplete", func(r []receiver.Scan) bool { return count(r, receiver.Incomplete) == 1 })
	if !strings.Contains(rows[0].Error, "%%EOF") {
		t.Errorf("incomplete without reason: %+v", rows[0])
	}
	// The barrier: a whole scan put after it is held only once the watcher
	// has looked again at everything before it.
	if err := e.put("reception/after.pdf", pdf("after the cut one"), false); err != nil {
		t.Fatal(err)
	}
	rows = e.waitScans(5*time.Second, "the scan after the cut one held", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 1 })
	if len(rows) != 2 || rows[0].State != receiver.Incomplete || rows[0].File != "cut.pdf" {
		t.Fatalf("cut PDF became %+v", rows)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "inbox", "reception", "cut.pdf")); err != nil {
		t.Fatalf("incomplete scan left the inbox: %v", err)
	}
	// the MFP sends it again, whole, under the same name: the same row, now held
	if err := e.put("reception/cut.pdf", full, false); err != nil {
		t.Fatal(err)
	}
	rows = e.waitScans(5*time.Second, "rewritten PDF held", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 2 })
	if len(rows) != 2 || rows[0].File != "cut.pdf" || rows[0].SHA256 != sum(full) {
		t.Fatalf("%+v", rows)
	}
	// force an incomplete one
	if err := e.put("reception/cut2.pdf", full[:100], false); err != nil {
		t.Fatal(err)
	}
	rows = e.waitScans(5*time.Second, "cut2 incomplete", func(r []receiver.Scan) bool { return count(r, receiver.Incomplete) == 1 })
	var id int64
	for _, r := range rows {
		if r.State == receiver.Incomplete {
			id = r.ID
		}
	}
	sc, err := e.r.Force(context.Background(), id)
	if err != nil || sc.State != receiver.Held || !sc.Forced {
		t.Fatalf("force: %+v %v", sc, err)
	}
}

func TestReceiveSMB1NTLMv1(t *testing.T) {
	e := newEnv(t, opts{smb1: true})
	if err := e.put("reception/old.pdf", pdf("old firmware"), true); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(5*time.Second, "SMB1 scan held", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 1 })
	if !strings.Contains(rows[0].Writer, "NT1") {
		t.Errorf("writer %q: want the NT1 protocol", rows[0].Writer)
	}
	st, _ := e.r.Status(context.Background())
	if !st.SMB1 || len(st.Warnings) == 0 || st.Warnings[0] != receiver.SMB1Warning {
		t.Fatalf("SMB1 on without its warning: %+v", st)
	}
}

func TestReceiveSMB1RefusedByDefault(t *testing.T) {
	e := newEnv(t, opts{})
	if err := e.put("reception/old.pdf", pdf("old"), true); err == nil {
		t.Fatal("an SMB1 client got in with SMB1 off")
	}
}

// A file the writer keeps open, writing now and then, is not taken.
func TestQuietWindowResetByWrites(t *testing.T) {
	e := newEnv(t, opts{quiet: 4 * time.Second})
	p := filepath.Join(e.dir, "inbox", "reception", "slow.pdf")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		f.WriteString("%PDF-1.4 page\n%%EOF\n")
		f.Sync()
		time.Sleep(500 * time.Millisecond) // below the quiet window
		rows := e.waitScans(time.Second, "", func([]receiver.Scan) bool { return true })
		if len(rows) != 0 {
			t.Fatalf("taken while still being written: %+v", rows)
		}
	}
	f.Close()
	e.waitScans(5*time.Second, "held after quiet", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 1 })
}

func scanwardenSecret(s string) scanwarden.Secret { return scanwarden.NewSecret(s) }

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// Old firmware that knows only port 139: with SMB1 on and port 445 the share
// answers on 139 too (NetBIOS session service), on the lab client address.
func TestLabSMB1Port139(t *testing.T) {
	lab := testlab.Require(t)
	ip := lab.Getenv("SWLAB_CLI_IP")
	if ip == "" {
		testlab.Missing(t, "SWLAB_CLI_IP unset: run under testlab/lab exec")
	}
	for _, p := range []string{"445", "139"} {
		if l, err := net.Listen("tcp", net.JoinHostPort(ip, p)); err != nil {
			t.Fatalf("%s:%s taken here: %v", ip, p, err)
		} else {
			l.Close()
		}
	}
	e := newEnv(t, opts{smb1: true, listen: ip, port: 445})
	c := e.cfg
	c.Port = 139
	src := filepath.Join(t.TempDir(), "old.pdf")
	os.WriteFile(src, pdf("port 139"), 0o600)
	if err := smbput(c, src, "reception/old.pdf", true); err != nil {
		t.Fatal(err)
	}
	rows := e.waitScans(5*time.Second, "held", func(r []receiver.Scan) bool { return count(r, receiver.Held) == 1 })
	if !strings.Contains(rows[0].Writer, "NT1") {
		t.Errorf("writer %q", rows[0].Writer)
	}
}

// A crash between the catalogue commit and the move out of the inbox: the
// next start moves the file under the committed row, never a second row.
func TestRecoverCommittedNotMoved(t *testing.T) {
	e := newEnv(t, opts{})
	e.r.Close()
	data := pdf("committed, not moved")
	in := filepath.Join(e.dir, "inbox", "reception", "x.pdf")
	if err := os.WriteFile(in, data, 0o640); err != nil {
		t.Fatal(err)
	}
	id, err := e.st.Scans().AddScan(context.Background(), receiver.Scan{Destination: "Reception desk", Folder: "reception", File: "x.pdf",
		Size: int64(len(data)), SHA256: sum(data), State: receiver.Held, ReceivedAt: time.Now(), InboxPath: "inbox/reception/x.pdf",
		HeldPath: "held/2026-01-01/abc.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	e.open(nil) // the recovery runs in Open, before the inbox is watched
	rows := e.waitScans(time.Second, "the catalogue read", func([]receiver.Scan) bool { return true })
	if len(rows) != 1 || rows[0].ID != id {
		t.Fatalf("%+v", rows)
	}
	got, err := os.ReadFile(filepath.Join(e.dir, "held", "2026-01-01", "abc.pdf"))
	if err != nil || sum(got) != sum(data) {
		t.Fatalf("held copy: %v", err)
	}
	if _, err := os.Stat(in); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("inbox copy still there: %v", err)
	}
}
