package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
)

// ingest: N PDFs, one smbclient logon each, into a receiver on 127.0.0.1.
func ingest(arg string) error {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 || n > 5000 {
		return errors.New("the number of scans must be 1..5000")
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rxbench-ingest")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	const pw = "Bench.Mfp-25"
	r, cfg, err := openReceiver(ctx, st, dir, pw)
	if err != nil {
		return err
	}
	defer r.Close()
	clock, err := watchInbox(filepath.Join(receiver.Inbox(cfg.DataDir), "bench"))
	if err != nil {
		return err
	}
	defer clock.close()
	upload, err := uploadScans(n, cfg.Port, pw)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(60 * time.Second); clock.moved() < n && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	lat := clock.latencies()
	rows, _ := st.Scans().Scans(ctx, receiver.ScanQuery{})
	pct := func(p float64) float64 { return lat[min(len(lat)-1, int(float64(len(lat))*p))] }
	fmt.Printf("%d PDFs (200 KiB) put by smbclient, one logon each, in %.1f s; %d catalogued\n", n, upload.Seconds(), len(rows))
	if len(lat) > 0 {
		fmt.Printf("close -> catalogued: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms (target p99 < 2000 ms)\n",
			pct(0.5), pct(0.9), pct(0.99), lat[len(lat)-1])
	}
	if len(rows) != n || len(lat) != n {
		return fmt.Errorf("%d uploads, %d catalogued, %d measured", n, len(rows), len(lat))
	}
	return nil
}

// openReceiver runs a receiver (its own smbd) on a free port of
// 127.0.0.1 with one MFP account (swmfp, pw) and one destination folder,
// bench, that nothing is delivered from.
func openReceiver(ctx context.Context, st *store.Store, dir, pw string) (*receiver.Receiver, receiver.Config, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, receiver.Config{}, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := receiver.Config{DataDir: filepath.Join(dir, "rx"), Listen: netip.MustParseAddr("127.0.0.1"), Port: port, Share: "scans",
		Accounts: []samba.Account{{Name: "swmfp", Password: scanwarden.NewSecret(pw)}},
		Watch:    receiver.DefaultWatch, Forward: receiver.DefaultForward}
	r, err := receiver.New(cfg, st.Scans(), dests{{Name: "bench", Folder: "bench"}}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, cfg, err
	}
	return r, cfg, r.Open(ctx)
}

// uploadScans puts n PDFs of 200 KiB (each its own bytes) into the share's
// bench folder, one smbclient logon each, as MFPs do.
func uploadScans(n, port int, pw string) (time.Duration, error) {
	work, err := os.MkdirTemp("", "rxbench-src")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	p := filepath.Join(work, "s.pdf")
	t0 := time.Now()
	for i := 0; i < n; i++ {
		var b bytes.Buffer
		if err := writePDF(&b, 200<<10); err != nil {
			return 0, err
		}
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			return 0, err
		}
		c := exec.Command("smbclient", "//127.0.0.1/scans", "-p", strconv.Itoa(port), "-U", "swmfp%"+pw, "--use-kerberos=disabled",
			"-m", "SMB3", "-c", fmt.Sprintf("cd bench; put %s scan%05d.pdf", p, i))
		if out, err := c.CombinedOutput(); err != nil || strings.Contains(string(out), "NT_STATUS") {
			return 0, fmt.Errorf("smbclient %d: %v %s", i, err, out)
		}
	}
	return time.Since(t0), nil
}

// inboxClock times each file of an inbox folder from its last close after
// writing to its move out of the inbox (catalogued), by an inotify watch
// of its own.
type inboxClock struct {
	fd           int
	mu           sync.Mutex
	closed, gone map[string]time.Time
}

func watchInbox(dir string) (*inboxClock, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_WRITE|unix.IN_MOVED_FROM); err != nil {
		unix.Close(fd)
		return nil, err
	}
	c := &inboxClock{fd: fd, closed: map[string]time.Time{}, gone: map[string]time.Time{}}
	go c.read()
	return c, nil
}

func (c *inboxClock) read() {
	buf := make([]byte, 64<<10)
	for {
		k, err := unix.Read(c.fd, buf)
		if err != nil || k <= 0 {
			return
		}
		now := time.Now()
		c.mu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_CLOSE_WRITE != 0 {
				c.closed[name] = now // the last close counts
			}
			if ev.Mask&unix.IN_MOVED_FROM != 0 {
				c.gone[name] = now
			}
		}
		c.mu.Unlock()
	}
}

// moved is how many files have left the inbox.
func (c *inboxClock) moved() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.gone)
}

// latencies are the close → moved times of the files seen both ways, in
// milliseconds, sorted.
func (c *inboxClock) latencies() []float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var lat []float64
	for name, t := range c.closed {
		if m, ok := c.gone[name]; ok {
			lat = append(lat, m.Sub(t).Seconds()*1000)
		}
	}
	sort.Float64s(lat)
	return lat
}

func (c *inboxClock) close() { unix.Close(c.fd) }
