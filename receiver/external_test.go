package receiver_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/store"
)

// ExternalSamba (the appliance: smbd in its own unit): the receiver writes
// the config and never starts or stops smbd; a "unit" (here the test) runs
// smbd from that config; scans flow; Close leaves smbd running.
func TestExternalSamba(t *testing.T) {
	requireSmbd(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	st, err := store.OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := receiver.Config{DataDir: filepath.Join(dir, "rx"), Listen: mustAddr("127.0.0.1"), Port: freePort(t), Share: "scans",
		Accounts:      []receiver.Account{{Name: "swmfp", Password: scanwardenSecret(mfpPassword)}},
		ExternalSamba: true,
		Watch:         receiver.WatchConfig{Quiet: 2 * time.Second, QuietAfterLogoff: 100 * time.Millisecond, Rescan: time.Second},
		Forward:       receiver.DefaultForward}
	r, err := receiver.New(cfg, st.Scans(), staticDests{{Name: "front", Folder: "front"}}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.Samba().Pid() != 0 {
		t.Fatal("the receiver started smbd in external mode")
	}
	// the unit: ExecStart=smbd --foreground --no-process-group -s <conf>
	unit := exec.Command("/usr/sbin/smbd", "--foreground", "--no-process-group", "-s", r.Samba().ConfPath())
	unit.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := unit.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { unit.Process.Signal(syscall.SIGTERM); unit.Wait() }()
	e := &env{t: t, dir: cfg.DataDir, st: st, r: r, cfg: cfg}
	var putErr error
	for i := 0; i < 50; i++ { // until the unit's smbd listens
		if putErr = e.put("front/a.pdf", pdf("external"), false); putErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if putErr != nil {
		t.Fatal(putErr)
	}
	e.waitScans(5*time.Second, "held", func(rows []receiver.Scan) bool { return count(rows, receiver.Held) == 1 })
	r.Close()
	if err := unit.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatal("Close stopped the unit's smbd")
	}
	// the root side changes the account's password: `receiver accounts`
	s, err := receiver.ExistingSamba(cfg.DataDir, []receiver.Account{{Name: "swmfp", Password: scanwardenSecret("Other.Pass-9")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAccounts(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.put("front/b.pdf", pdf("old password"), false); err == nil {
		t.Fatal("the old password still works after the root side changed it")
	}
}
