package receiver

import (
	"context"
	"golang.org/x/sys/unix"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
)

const testPassword = "Mfp.Test-25"

func startTestSamba(t *testing.T, smb1 bool) *Samba {
	t.Helper()
	requireSmbd(t)
	ip, port := "127.0.0.1", freePort(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	cfg := SambaConfig{Dir: filepath.Join(dir, "smbd"), Inbox: filepath.Join(dir, "inbox"), Listen: netip.MustParseAddr(ip),
		Port: port, Share: "scans", SMB1: smb1, Accounts: []Account{{Name: "swmfp", Password: scanwarden.NewSecret(testPassword)}}}
	s, err := NewSamba(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

func smbclient(t *testing.T, s *Samba, smb1 bool, cmd string) (string, error) {
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
	if out, err := smbclient(t, s, false, "put "+src+" a.pdf"); err != nil {
		t.Fatalf("smbclient put: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(s.Config().Inbox, "a.pdf")); err != nil {
		t.Fatal(err)
	}
	// SMB1 is off: an NT1 client is refused.
	if out, err := smbclient(t, s, true, "ls"); err == nil {
		t.Fatalf("SMB1 client got in with smb1 off:\n%s", out)
	}
	// A second manager finds the same smbd by its pid file.
	s2, _ := NewSamba(s.Config())
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
	s3, _ := NewSamba(c)
	err := s3.Start(context.Background())
	pe, ok := err.(*PortError)
	if !ok || !strings.Contains(pe.Owner, "smbd") {
		t.Fatalf("want PortError naming smbd, got %v", err)
	}
	_ = time.Second
}

func TestSambaRealSMB1(t *testing.T) {
	s := startTestSamba(t, true)
	if out, err := smbclient(t, s, true, "ls"); err != nil {
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
	if out, err := smbclient(t, s, true, "ls"); err == nil {
		t.Fatalf("SMB1 client got in with smb1 off:\n%s", out)
	}
	c := s.Config()
	c.SMB1 = true
	s2, err := NewSamba(c)
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
		if out, err = smbclient(t, s2, true, "ls"); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("SMB1 client refused after the reload: %v\n%s", err, out)
}
