package receiver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// observed collects what the receiver learns.
type observed chan samba.Observation

func (o observed) Observe(_ context.Context, x samba.Observation) { o <- x }

// until gathers observations of addr until have says it has what it wants.
func (o observed) until(t *testing.T, d time.Duration, have func(merged samba.Observation) bool) samba.Observation {
	t.Helper()
	var m samba.Observation
	deadline := time.After(d)
	for {
		select {
		case x := <-o:
			for _, f := range []struct {
				dst *string
				v   string
			}{{&m.Address, x.Address}, {&m.Dialect, x.Dialect}, {&m.Password, x.Password},
				{&m.Workstation, x.Workstation}, {&m.User, x.User}, {&m.Domain, x.Domain}, {&m.FileType, x.FileType}} {
				if f.v != "" {
					*f.dst = f.v
				}
			}
			if have(m) {
				return m
			}
		case <-deadline:
			t.Fatalf("not observed in %v; so far %+v", d, m)
		}
	}
}

// TestObserveMFPClient: an MFP stand-in (smbclient limited to SMB 2.1, no
// encryption, its own workstation name) scans to the share; the receiver
// learns from smbd's own log what that client did — the dialect smbd
// negotiated, NTLMv2, the workstation and user it sent — and the type of
// the file it wrote. Measured against the real smbd this package renders.
func TestObserveMFPClient(t *testing.T) {
	obs := make(observed, 64)
	e := newEnv(t, opts{observer: obs})
	src := filepath.Join(t.TempDir(), "scan.pdf")
	os.WriteFile(src, pdf("mfp 2.1"), 0o600)
	args := []string{"//" + e.cfg.Listen.String() + "/" + e.cfg.Share, "-U", "swmfp%" + mfpPassword, "-p", strconv.Itoa(e.cfg.Port),
		"--use-kerberos=disabled", "-m", "SMB2_10", "--option=client smb encrypt=off", "-n", "MFP21", "-c", `cd reception; put "` + src + `" doc0001.pdf`}
	if out, err := exec.Command("smbclient", args...).CombinedOutput(); err != nil || strings.Contains(string(out), "NT_STATUS_") {
		t.Fatalf("smbclient: %v: %s", err, out)
	}
	m := obs.until(t, 20*time.Second, func(m samba.Observation) bool { return m.Dialect != "" && m.Password != "" && m.FileType != "" })
	if m.Address != "127.0.0.1" || m.Dialect != "2.1" || m.Password != "NTLMv2" || m.Workstation != "MFP21" || m.User != "swmfp" || m.FileType != "pdf" {
		t.Errorf("observed %+v, want 127.0.0.1, 2.1, NTLMv2, MFP21, swmfp, pdf", m)
	}
}

// TestObserveSMB1NTLMv1: old firmware's client (SMB1, NTLMv1, no SPNEGO)
// on the share with SMB1 on is seen as such.
func TestObserveSMB1NTLMv1(t *testing.T) {
	obs := make(observed, 64)
	e := newEnv(t, opts{smb1: true, observer: obs})
	if err := e.put("reception/old.jpg", []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 0xFF, 0xD9}, true); err != nil {
		t.Fatal(err)
	}
	m := obs.until(t, 20*time.Second, func(m samba.Observation) bool { return m.Dialect != "" && m.Password != "" && m.FileType != "" })
	if m.Dialect != "SMB1" || m.Password != "NTLMv1" || m.FileType != "jpeg" {
		t.Errorf("observed %+v, want SMB1, NTLMv1, jpeg", m)
	}
}
