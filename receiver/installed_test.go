package receiver_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloudsoda/go-smb2"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
)

// The installed layout: smbd runs as root under its own unit, the daemon
// (here the watcher child) as an unprivileged user of its own that cannot read root
// smbd's /proc/<pid>/fd. installedChild is that child's config, passed in
// SW_INSTALLED_CHILD to the test binary run again as that user.
type installedChild struct {
	DataDir string `json:"data_dir"`
	Port    int    `json:"port"`
}

// runInstalledChild runs the receiver (ExternalSamba, no forwarder) and
// logs as JSON lines on stdout; "ready" once it watches.
func runInstalledChild(conf string) int {
	var c installedChild
	if err := json.Unmarshal([]byte(conf), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	st, err := store.OpenDir(ctx, c.DataDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer st.Close()
	cfg := installedConfig(c)
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	r, err := receiver.New(cfg, st.Scans(), staticDests{{Name: "front", Folder: "front"}}, nil, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := r.Open(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(`{"msg":"ready"}`)
	<-ctx.Done()
	r.Close()
	return 0
}

func installedConfig(c installedChild) receiver.Config {
	return receiver.Config{DataDir: filepath.Join(c.DataDir, "rx"), Listen: netip.MustParseAddr("127.0.0.1"), Port: c.Port, Share: "scans",
		Accounts:      []samba.Account{{Name: "swmfp", Password: scanwardenSecret(mfpPassword)}},
		Allow:         []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		SmbdDir:       filepath.Join(filepath.Dir(c.DataDir), "scanwarden-smbd"), // root's own
		ExternalSamba: true,
		// the defaults' quiet window (10 s): a writer pausing 25 s is
		// longer than the old "no close seen: wait 2×quiet" fallback
		Watch:   receiver.WatchConfig{Quiet: receiver.DefaultWatch.Quiet, QuietAfterLogoff: receiver.DefaultWatch.QuietAfterLogoff, Rescan: time.Second},
		Forward: receiver.DefaultForward}
}

// installed is a running installed layout: root smbd, the watcher unprivileged.
type installed struct {
	t     *testing.T
	cfg   receiver.Config
	data  string
	child *exec.Cmd
	mu    sync.Mutex
	lines []map[string]any // the child's log
	seen  chan struct{}    // a line came
	spawn func() *exec.Cmd // a new watcher child, as the daemon's user
}

func startInstalled(t *testing.T) *installed {
	t.Helper()
	requireSmbd(t)
	// the daemon's user: a system user of its own (as the package's
	// sysusers entry makes "scanwarden"); not nobody, which is Samba's
	// guest account
	const daemonUser = "swinstalled"
	duser, err := user.Lookup(daemonUser)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", daemonUser).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v: %s", daemonUser, err, out)
		}
		if duser, err = user.Lookup(daemonUser); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(duser.Uid)
	gid, _ := strconv.Atoi(duser.Gid)
	// t.TempDir's parent is 0700 root: the daemon's user could not reach it
	dir, err := os.MkdirTemp("", "swinstalled-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "receiver.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(data, uid, gid); err != nil {
		t.Fatal(err)
	}
	c := installedChild{DataDir: data, Port: freePort(t)}
	conf, _ := json.Marshal(c)
	in := &installed{t: t, cfg: installedConfig(c), data: data, seen: make(chan struct{}, 1)}
	in.spawn = func() *exec.Cmd {
		child := exec.Command(bin, "-test.run=^$")
		child.Env = append(os.Environ(), "SW_INSTALLED_CHILD="+string(conf))
		child.Dir = dir
		child.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Setpgid: true}
		return child
	}
	t.Cleanup(func() { in.stop() })
	in.startChild()
	// the root side: the unit's root step renders smb.conf from the
	// daemon's allowlist and sets the MFP account, then smbd as the unit's
	// command line says
	sc := samba.Config{Dir: in.cfg.SmbdDir, Inbox: receiver.Inbox(in.cfg.DataDir), Listen: in.cfg.Listen, Port: in.cfg.Port,
		Share: in.cfg.Share, Accounts: in.cfg.Accounts}
	if _, err := samba.PrepareShare(context.Background(), samba.ShareSetup{Config: sc, AllowFile: samba.AllowFile(in.cfg.DataDir),
		Owner: daemonUser}, nil); err != nil {
		t.Fatal(err)
	}
	unit := exec.Command("/usr/sbin/smbd", sc.SmbdArgs()...)
	unit.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := unit.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unit.Process.Signal(syscall.SIGTERM); unit.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port))
	for i := 0; ; i++ {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			break
		}
		if i > 100 {
			t.Fatal("smbd does not listen")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return in
}

// startChild starts a watcher child (as the daemon's user) and waits until
// it watches: the daemon starting, or starting again.
func (in *installed) startChild() {
	t := in.t
	t.Helper()
	ready := func() int {
		in.mu.Lock()
		defer in.mu.Unlock()
		n := 0
		for _, m := range in.lines {
			if m["msg"] == "ready" {
				n++
			}
		}
		return n
	}
	before := ready()
	child := in.spawn()
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	in.child = child
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			in.mu.Lock()
			in.lines = append(in.lines, m)
			in.mu.Unlock()
			select {
			case in.seen <- struct{}{}:
			default:
			}
		}
	}()
	if !in.until(20*time.Second, func() bool { return ready() > before }) {
		t.Fatalf("watcher child not ready: %s", stderr.String())
	}
}

// diag logs smbd's log tail and the inbox's owners, for a failure.
func (in *installed) diag() {
	b, _ := os.ReadFile(filepath.Join(in.cfg.DataDir, "smbd", "log", "smbd.log"))
	in.t.Logf("smbd log: %s", b[max(0, len(b)-3000):])
	out, _ := exec.Command("ls", "-laR", receiver.Inbox(in.cfg.DataDir)).CombinedOutput()
	in.t.Logf("inbox: %s", out)
	conf, _ := os.ReadFile(filepath.Join(in.cfg.DataDir, "smbd", "smb.conf"))
	in.t.Logf("smb.conf: %s", conf)
}

func (in *installed) stop() {
	if in.child == nil {
		return
	}
	in.child.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { in.child.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		in.child.Process.Kill()
		<-done
	}
	in.child = nil
}

// taken lists the files the watcher catalogued (held or incomplete) so far.
func (in *installed) taken() map[string]map[string]any {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := map[string]map[string]any{}
	for _, m := range in.lines {
		switch m["msg"] {
		case "scan held", "scan incomplete: kept, not delivered", "scan refused: kept, never delivered":
			out[fmt.Sprint(m["file"])] = m
		}
	}
	return out
}

func (in *installed) session(t *testing.T) (*smb2.Session, *smb2.Share) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: "swmfp", Password: mfpPassword}}
	s, err := d.Dial(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(in.cfg.Port)))
	if err != nil {
		t.Fatalf("MFP logon: %v", err)
	}
	sh, err := s.Mount(`\\127.0.0.1\scans`)
	if err != nil {
		s.Logoff()
		t.Fatalf("MFP tree connect: %v", err)
	}
	return s, sh
}

// scanBodies are one scan per format the issue names, each cut in two
// halves: the first alone is a shorter, plausible file.
func scanBodies(t *testing.T) map[string][]byte {
	t.Helper()
	noise := func(n int) []byte { b := make([]byte, n); rand.Read(b); return b }
	var xps bytes.Buffer
	zw := zip.NewWriter(&xps)
	for _, part := range []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="fdseq" ContentType="application/vnd.ms-package.xps-fixeddocumentsequence+xml"/></Types>`},
		{"FixedDocumentSequence.fdseq", `<FixedDocumentSequence xmlns="http://schemas.microsoft.com/xps/2005/06"/>`},
	} {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: part.name, Method: zip.Store})
		w.Write([]byte(part.body))
	}
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "Documents/1/Pages/1.fpage", Method: zip.Store})
	w.Write(noise(200 << 10))
	zw.Close()
	// a TIFF whose IFD lies at the end: one strip of 200 KiB
	tif := []byte("II*\x00")
	strip := noise(200 << 10)
	tif = binary.LittleEndian.AppendUint32(tif, uint32(8+len(strip)))
	tif = append(tif, strip...)
	tif = binary.LittleEndian.AppendUint16(tif, 2)
	for _, e := range [][3]uint32{{273, 4, 8}, {279, 4, uint32(len(strip))}} {
		tif = binary.LittleEndian.AppendUint16(tif, uint16(e[0]))
		tif = binary.LittleEndian.AppendUint16(tif, uint16(e[1]))
		tif = binary.LittleEndian.AppendUint32(tif, 1)
		tif = binary.LittleEndian.AppendUint32(tif, e[2])
	}
	tif = binary.LittleEndian.AppendUint32(tif, 0)
	jpg := append(append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, noise(200<<10)...), 0xFF, 0xD9)
	pdfBody := append(append([]byte("%PDF-1.7\n"), noise(200<<10)...), []byte("\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")...)
	return map[string][]byte{"slow.pdf": pdfBody, "slow.tif": tif, "slow.jpg": jpg, "slow.xps": xps.Bytes(), "slow.dat": noise(200 << 10)}
}

// TestInstalledSlowWriter: smbd as root, the watcher unprivileged (it cannot
// read root smbd's /proc/<pid>/fd). Five writers — PDF, TIFF, JPEG, XPS and
// an unknown type — each hold their file open 25 s between two writes: none
// is taken while open (the old code took them after 2× the quiet window,
// cut short), each is taken complete once closed. Before that, a file the
// watcher cannot ask the kernel about (a root-owned file in the inbox: no
// lease for the daemon's user) is not taken, and receiver status says why.
func TestInstalledSlowWriter(t *testing.T) {
	in := startInstalled(t)
	ctx := context.Background()

	// No signal: nothing taken, and said.
	front := filepath.Join(receiver.Inbox(in.cfg.DataDir), "front")
	rootFile := filepath.Join(front, "root-owned.pdf")
	if err := os.WriteFile(rootFile, pdf("root"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(rootFile, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	st := waitStatus(t, in, 15*time.Second, func(st receiver.Status) bool { return st.IngestStopped != "" })
	if !slices.ContainsFunc(st.Warnings, func(w string) bool { return bytes.Contains([]byte(w), []byte("not taken")) }) {
		t.Errorf("status warnings %q do not say scans are not taken", st.Warnings)
	}
	t.Logf("status while the signal is missing: %s", st.IngestStopped)
	if _, ok := in.taken()["root-owned.pdf"]; ok {
		t.Fatal("a file the watcher cannot ask about was taken")
	}
	if _, err := os.Stat(rootFile); err != nil {
		t.Fatalf("the root-owned file left the inbox: %v", err)
	}
	os.Remove(rootFile)
	waitStatus(t, in, 15*time.Second, func(st receiver.Status) bool { return st.IngestStopped == "" })

	// Slow writers.
	bodies := scanBodies(t)
	s, sh := in.session(t)
	files := map[string]*smb2.File{}
	for name, body := range bodies {
		f, err := sh.Create(`front\` + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(body[:len(body)/2]); err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	pause := time.Now()
	for time.Since(pause) < 25*time.Second {
		if got := in.taken(); len(got) > 0 {
			t.Fatalf("taken while still open for writing, %v into the pause: %v", time.Since(pause).Round(time.Second), got)
		}
		time.Sleep(250 * time.Millisecond)
	}
	var closed time.Time
	for name, f := range files {
		if _, err := f.Write(bodies[name][len(bodies[name])/2:]); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	closed = time.Now()
	sh.Umount()
	s.Logoff()
	if !in.until(30*time.Second, func() bool { return len(in.taken()) == len(bodies) }) {
		t.Fatalf("after the close, taken: %v", in.taken())
	}
	t.Logf("all five taken %v after the close", time.Since(closed).Round(10*time.Millisecond))
	in.stop()
	stor, err := store.OpenDir(ctx, in.data)
	if err != nil {
		t.Fatal(err)
	}
	defer stor.Close()
	rows, err := stor.Scans().Scans(ctx, receiver.ScanQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		body, ok := bodies[r.File]
		if !ok {
			t.Errorf("unexpected row %+v", r)
			continue
		}
		want := receiver.Held
		if r.File == "slow.dat" {
			want = receiver.Refused // no scan format: taken whole, never delivered
		}
		if r.State != want || r.Size != int64(len(body)) || r.SHA256 != sum(body) {
			t.Errorf("%s catalogued %s, %d bytes (want %s, %d bytes, the whole file)", r.File, r.State, r.Size, want, len(body))
		}
		delete(bodies, r.File)
	}
	if len(bodies) > 0 {
		t.Errorf("not catalogued: %v", slices.Collect(func(yield func(string) bool) {
			for k := range bodies {
				if !yield(k) {
					return
				}
			}
		}))
	}
}

// until waits for cond (which may take in.mu).
func (in *installed) until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-in.seen:
		case <-time.After(200 * time.Millisecond):
		}
	}
	return true
}

func waitStatus(t *testing.T, in *installed, d time.Duration, cond func(receiver.Status) bool) receiver.Status {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		st, err := receiver.ReadStatus(context.Background(), in.cfg.DataDir, noCatalogue{}, nil)
		if err == nil && cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver status not as wanted within %v: %+v (%v)", d, st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noCatalogue: ReadStatus's catalogue, for the parts of the status read
// from the data dir (the child owns the store while it runs).
type noCatalogue struct{ receiver.Catalogue }

func (noCatalogue) ScanStats(context.Context) (receiver.ScanStats, error) {
	return receiver.ScanStats{Counts: map[receiver.State]int{}}, nil
}

// TestInstalledLatency: in the installed layout, a writer that closes and
// logs off (as an MFP does after each job) is taken quickly: close →
// catalogued p99 < 2 s. SCANWARDEN_LATENCY_SCANS sets the number of scans
// (default 20; the note's figure is 300).
func TestInstalledLatency(t *testing.T) {
	n := 20
	if v, err := strconv.Atoi(os.Getenv("SCANWARDEN_LATENCY_SCANS")); err == nil && v > 0 {
		n = v
	}
	in := startInstalled(t)
	closedAt := map[string]time.Time{}
	for i := range n {
		name := fmt.Sprintf("lat%04d.pdf", i)
		s, sh := in.session(t)
		f, err := sh.Create(`front\` + name)
		if err != nil {
			in.diag()
			t.Fatal(err)
		}
		if _, err := f.Write(pdf(name + string(make([]byte, 30<<10)))); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		closedAt[name] = time.Now()
		sh.Umount()
		s.Logoff()
		time.Sleep(20 * time.Millisecond)
	}
	if !in.until(60*time.Second, func() bool { return len(in.taken()) >= n }) {
		t.Fatalf("taken %d of %d", len(in.taken()), n)
	}
	var lat []time.Duration
	for name, m := range in.taken() {
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["time"]))
		if err != nil {
			t.Fatal(err)
		}
		lat = append(lat, at.Sub(closedAt[name]))
	}
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	t.Logf("close → catalogued over %d scans: p50 %v, p90 %v, p99 %v, max %v", n, p(0.5), p(0.9), p(0.99), lat[len(lat)-1])
	if p(0.99) >= 2*time.Second {
		t.Errorf("p99 %v, want < 2 s", p(0.99))
	}
}
