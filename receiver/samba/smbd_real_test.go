package samba

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scanwarden/scanwarden"
)

const testPassword = "Mfp.Test-25"

func startTestSamba(t *testing.T, smb1 bool) *Server {
	t.Helper()
	requireSmbd(t)
	ip, port := "127.0.0.1", freePort(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	cfg := Config{Dir: filepath.Join(dir, "smbd"), Inbox: filepath.Join(dir, "inbox"), Listen: netip.MustParseAddr(ip),
		Port: port, Share: "scans", SMB1: smb1, Accounts: []Account{{Name: "swmfp", Password: scanwarden.NewSecret(testPassword)}}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

func runSmbclient(t *testing.T, s *Server, smb1 bool, cmd string) (string, error) {
	t.Helper()
	c := s.Config()
	args := []string{"//" + c.Listen.String() + "/" + c.Share, "-U", "swmfp%" + testPassword, "-p", strconvI(c.Port), "--use-kerberos=disabled", "-c", cmd}
	if smb1 {
		args = append(args, "-m", "NT1", "--option=client min protocol=NT1", "--option=client ntlmv2 auth=no", "--option=client use spnego=no")
	} else {
		args = append(args, "-m", "SMB3")
	}
	out, err := exec.Command("smbclient", args...).CombinedOutput()
	return string(out), err
}

func TestSambaRealStartFindSurvive(t *testing.T) {
	s := startTestSamba(t, false)
	src := filepath.Join(t.TempDir(), "a.pdf")
	os.WriteFile(src, []byte("%PDF-1.4\nhello\n%%EOF\n"), 0o644)
	if out, err := runSmbclient(t, s, false, "put "+src+" a.pdf"); err != nil {
		t.Fatalf("smbclient put: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(s.Config().Inbox, "a.pdf")); err != nil {
		t.Fatal(err)
	}
	// SMB1 is off: an NT1 client is refused.
	if out, err := runSmbclient(t, s, true, "ls"); err == nil {
		t.Fatalf("SMB1 client got in with smb1 off:\n%s", out)
	}
	// A second manager finds the same smbd by its pid file.
	s2, _ := New(s.Config())
	if err := s2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s2.Pid() != s.Pid() || s.Pid() == 0 {
		t.Fatalf("restart did not find the running smbd: %d vs %d", s2.Pid(), s.Pid())
	}
	// smbd is in its own session.
	if sid, _ := unix.Getsid(s.Pid()); sid != s.Pid() {
		t.Fatalf("smbd session %d, want its own %d", sid, s.Pid())
	}
	// Port taken: a second instance on the same address and port names the owner.
	c := s.Config()
	c.Dir = filepath.Join(t.TempDir(), "other")
	c.Inbox = filepath.Join(t.TempDir(), "inbox2")
	s3, _ := New(c)
	err := s3.Start(context.Background())
	pe, ok := err.(*portError)
	if !ok || !strings.Contains(pe.Owner, "smbd") {
		t.Fatalf("want portError naming smbd, got %v", err)
	}
	_ = time.Second
}

func TestSambaRealSMB1(t *testing.T) {
	s := startTestSamba(t, true)
	if out, err := runSmbclient(t, s, true, "ls"); err != nil {
		t.Fatalf("SMB1 NTLMv1 client refused with smb1 on: %v\n%s", err, out)
	}
}

// freePort is a port nothing listens on now (smbd binds it next).
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// A changed config reaches the running smbd by a reload (same pid) when its
// addresses stay; SMB1 switched on then lets an NT1 client in.
func TestSambaRealReload(t *testing.T) {
	s := startTestSamba(t, false)
	pid := s.Pid()
	if out, err := runSmbclient(t, s, true, "ls"); err == nil {
		t.Fatalf("SMB1 client got in with smb1 off:\n%s", out)
	}
	c := s.Config()
	c.SMB1 = true
	s2, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s2.Pid() != pid {
		t.Fatalf("restarted (pid %d → %d) where a reload would do", pid, s2.Pid())
	}
	var out string
	for i := 0; i < 20; i++ {
		if out, err = runSmbclient(t, s2, true, "ls"); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("SMB1 client refused after the reload: %v\n%s", err, out)
}

// Stop ends smbd and every process it forked for a connection (its process
// group), not only the parent: a child left writing its last log lines
// raced whoever removes the folder next (a test's TempDir, `apt purge`) and
// still held the client's socket. Three clients hold connections open
// while smbd is stopped.
func TestSambaRealStopEndsEveryProcess(t *testing.T) {
	s := startTestSamba(t, false)
	pgid := s.Pid()
	c := s.Config()
	for range 3 {
		conn, err := net.Dial("tcp", net.JoinHostPort(c.Listen.String(), strconvI(c.Port)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for groupMembers(pgid) < 4 { // the parent and one child per connection at least
		if time.Now().After(deadline) {
			t.Fatalf("smbd's group has %d processes with three clients connected", groupMembers(pgid))
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := groupMembers(pgid); n != 0 {
		t.Fatalf("Stop returned with %d processes of smbd's group %d still running", n, pgid)
	}
	t.Logf("smbd and its children stopped in %v", time.Since(start))
}

// groupMembers counts the processes of process group pgid (from /proc).
func groupMembers(pgid int) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		pid := 0
		for _, r := range e.Name() {
			if r < '0' || r > '9' {
				pid = -1
				break
			}
			pid = pid*10 + int(r-'0')
		}
		if pid <= 0 {
			continue
		}
		if g, err := unix.Getpgid(pid); err == nil && g == pgid {
			n++
		}
	}
	return n
}
