package doctor

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/internal/webcert"
)

// TestWebCert: doctor names how the page is served and, under HTTPS, the
// certificate's SHA-256 fingerprint and end; it asks /healthz over HTTPS
// trusting exactly that certificate.
func TestWebCert(t *testing.T) {
	// Loopback: plain HTTP, nothing to show.
	conf, data := box(t, "")
	want(t, run(t, Options{ConfigFile: conf}), "web.tls", Skip, "plain HTTP on the loopback address", "")
	// tls = false on every address: a warning.
	conf, _ = box(t, "")
	os.WriteFile(conf, []byte("data_dir = \""+data+"\"\nlisten = \"0.0.0.0:1\"\n[web]\ntls = false\n"), 0o644)
	want(t, run(t, Options{ConfigFile: conf}), "web.tls", Warn, "in clear", "leave [web] tls out")

	// A daemon on every address, with its self-signed certificate.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	text := "data_dir = \"" + data + "\"\nlisten = \"0.0.0.0:" + strconv.Itoa(port) + "\"\n"
	os.WriteFile(conf, []byte(text), 0o644)
	rep := run(t, Options{ConfigFile: conf})
	want(t, rep, "web.tls", Warn, "no self-signed certificate", "start the daemon")
	cfg, err := config.Load(conf)
	if err != nil {
		t.Fatal(err)
	}
	m := &daemon.Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c, err := webcert.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	rep = run(t, Options{ConfigFile: conf})
	want(t, rep, "web.tls", OK, "SHA-256 fingerprint "+c.Fingerprint()+", valid until "+c.Leaf.NotAfter.UTC().Format("2006-01-02"), "")
	want(t, rep, "daemon", OK, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", "")

	// Another certificate on disk than the one served: said so.
	os.Rename(filepath.Join(data, webcert.CertName), filepath.Join(data, "served.pem"))
	os.Rename(filepath.Join(data, webcert.KeyName), filepath.Join(data, "served.key"))
	if _, _, err := webcert.Ensure(data, webcert.Names{DNS: []string{"other"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	rep = run(t, Options{ConfigFile: conf})
	want(t, rep, "daemon", Warn, "another certificate", "restart")

	// An expired certificate of the admin's own.
	own := t.TempDir()
	old, _, err := webcert.Ensure(own, webcert.Names{DNS: []string{"old"}}, time.Now().Add(-400*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(conf, []byte(text+"[web]\ncert_file = \""+old.CertFile+"\"\nkey_file = \""+old.KeyFile+"\"\n"), 0o644)
	rep = run(t, Options{ConfigFile: conf})
	if c := find(t, rep, "web.tls"); c.Status != Fail || !strings.Contains(c.Detail, "expired") {
		t.Errorf("expired: %+v", c)
	}
}
