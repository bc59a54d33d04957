package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/testlab"
)

func TestReceiverBadArguments(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("x\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", []string{"receiver"}, "usage"},
		{"unknown command", []string{"receiver", "frob"}, "frob"},
		{"no listen", []string{"receiver", "run", "--data-dir", dir, "--password-file", pw}, "--listen"},
		{"listen a name", []string{"receiver", "run", "--data-dir", dir, "--listen", "fileserver:445", "--password-file", pw}, "not an IP"},
		{"listen bad port", []string{"receiver", "run", "--data-dir", dir, "--listen", "127.0.0.1:99999", "--password-file", pw}, "bad port"},
		{"no password", []string{"receiver", "run", "--data-dir", dir, "--listen", "127.0.0.1"}, "--password-file"},
		{"bad account", []string{"receiver", "run", "--data-dir", dir, "--listen", "127.0.0.1:4455", "--password-file", pw, "--account", "Bad Name"}, "account"},
		{"allow junk", []string{"receiver", "run", "--data-dir", dir, "--listen", "127.0.0.1", "--password-file", pw, "--allow", "mfp-floor2"}, "not an address or a network"},
		{"force without id", []string{"receiver", "force", "--data-dir", dir}, "ID"},
		{"two destinations", []string{"receiver", "deliver", "a", "b", "--data-dir", dir}, "one destination"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SCANWARDEN_RECEIVER_PASSWORD", "")
			r := runCLI(t, nil, "", tc.args...)
			if r.code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, exitUsage, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr does not name %q: %s", tc.want, r.stderr)
			}
		})
	}
}

func TestReceiverListStatusEmpty(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, nil, "", "receiver", "list", "--json", "--data-dir", dir)
	var rows []map[string]any
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &rows) != nil || len(rows) != 0 {
		t.Fatalf("list: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, nil, "", "receiver", "status", "--json", "--data-dir", dir)
	var st map[string]any
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &st) != nil || st["smbd_up"] != false {
		t.Fatalf("status: %d %q %s", r.code, r.stdout, r.stderr)
	}
	for _, k := range []string{"smbd_up", "port", "smb1", "inbox", "counts", "held_bytes", "oldest_held", "last_delivery_error", "warnings"} {
		if _, ok := st[k]; !ok {
			t.Errorf("status JSON lacks %q", k)
		}
	}
}

// The CLI contract end to end in the lab: a registered destination, `receiver
// run` in the foreground, an MFP-like upload into the destination's folder,
// delivery to the lab DC, `list --json` and `status --json`, SIGTERM-like stop.
func TestLabReceiverCLI(t *testing.T) {
	lab := testlab.Require(t)
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	if _, err := os.Stat("/usr/sbin/smbd"); err != nil {
		testlab.Missing(t, "samba not installed (testlab/deps)")
	}
	sub := "rx-cli-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	remote := filepath.Join(lab.Dir, "dc", "shares", "scans", sub)
	if err := os.Mkdir(remote, 0o777); err != nil {
		testlab.Missing(t, fmt.Sprintf("lab share folder not writable here: %v", err))
	}
	os.Chmod(remote, 0o777)
	t.Cleanup(func() { os.RemoveAll(remote) })
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	t.Setenv("SCANWARDEN_DATA_DIR", dir)
	pw := filepath.Join(dir, "alice.pw")
	os.WriteFile(pw, []byte(lab.Password+"\n"), 0o600)
	if r := runCLI(t, nil, "", "destination", "add", "front-desk", "//"+lab.DCIP+"/scans/"+sub, "--user", lab.Domain+`\alice`, "--password-file", pw); r.code != exitOK {
		t.Fatalf("destination add: %d %s", r.code, r.stderr)
	}
	mfp := filepath.Join(dir, "mfp.pw")
	os.WriteFile(mfp, []byte("Mfp.Cli-25\n"), 0o600)
	port, stop := startReceiver(t, "--account", "swmfp", "--password-file", mfp, "--quiet", "2s", "--retry", "1s", "--allow", "127.0.0.1")
	defer func() {
		if r := stop(); r.code != exitOK {
			t.Errorf("receiver run exit %d: %s", r.code, r.stderr)
		}
	}()
	src := filepath.Join(dir, "scan.pdf")
	data := []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
	os.WriteFile(src, data, 0o600)
	putScan(t, port, "swmfp%Mfp.Cli-25", "front-desk", src)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(remote, "scan.pdf")); err == nil && bytes.Equal(b, data) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("scan not delivered to the lab DC")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var rows []map[string]any
	for time.Now().Before(deadline) {
		r := runCLI(t, nil, "", "receiver", "list", "--json")
		rows = nil
		json.Unmarshal([]byte(r.stdout), &rows)
		if len(rows) == 1 && rows[0]["state"] == "delivered" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(rows) != 1 || rows[0]["state"] != "delivered" || rows[0]["destination"] != "front-desk" || rows[0]["file"] != "scan.pdf" ||
		rows[0]["delivered_at"] == nil || rows[0]["sha256"] == "" {
		t.Fatalf("list: %+v", rows)
	}
	// --allow reached smbd's config (and the allowed address got in, above)
	if conf, err := os.ReadFile(filepath.Join(dir, "receiver", "smbd", "smb.conf")); err != nil || !strings.Contains(string(conf), "hosts allow = 127.0.0.1/32\n") {
		t.Errorf("smb.conf without the --allow address: %v\n%s", err, conf)
	}
	r := runCLI(t, nil, "", "receiver", "status", "--json")
	var st map[string]any
	if json.Unmarshal([]byte(r.stdout), &st) != nil || st["smbd_up"] != true || st["port"] != float64(port) {
		t.Fatalf("status: %s", r.stdout)
	}
}

// startReceiver runs `receiver run --listen 127.0.0.1:PORT args…` (a free
// port) in the background until stop, which the test's end calls too;
// stop returns its exit code and output.
func startReceiver(t *testing.T, args ...string) (port int, stop func() result) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"receiver", "run", "--listen", "127.0.0.1:" + strconv.Itoa(port)}, args...), strings.NewReader(""), &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	var once sync.Once
	var r result
	stop = func() result {
		once.Do(func() {
			cancel()
			r = <-done
		})
		return r
	}
	t.Cleanup(func() { stop() })
	return port, stop
}

// putScan uploads src as scan.pdf into folder of the share on port, as
// the MFP logs on (user%password), once smbd listens.
func putScan(t *testing.T, port int, userPass, folder, src string) {
	t.Helper()
	var out []byte
	var err error
	for range 100 { // until smbd listens
		out, err = exec.Command("smbclient", "//127.0.0.1/scans", "-p", strconv.Itoa(port), "-U", userPass,
			"--use-kerberos=disabled", "-c", "cd "+folder+"; put "+src+" scan.pdf").CombinedOutput()
		if err == nil && !bytes.Contains(out, []byte("NT_STATUS")) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("smbclient put: %v %s", err, out)
}
