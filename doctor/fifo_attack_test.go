package doctor

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/webcert"
)

// TestAttackDoctorDaemonFIFOs: doctor runs as root and reads files the
// daemon writes in its data dir — receiver.json (who may connect, whether
// scans are taken) and its self-signed web certificate. A FIFO the daemon
// put in their place blocked doctor for ever in open. Now they are read
// without waiting (nor following a link), a regular file only, and doctor
// says what is wrong.
func TestAttackDoctorDaemonFIFOs(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	conf, data := box(t, "")
	pw := filepath.Join(filepath.Dir(conf), "receiver.password")
	os.WriteFile(pw, []byte("Mfp.Pw-1\n"), 0o600)
	os.WriteFile(conf, []byte("data_dir = \""+data+"\"\nlisten = \"0.0.0.0:"+strconv.Itoa(port)+"\"\n"+
		"[receiver]\nenabled = true\nlisten = \"127.0.0.1:"+strconv.Itoa(port)+"\"\npassword_file = \""+pw+"\"\n"), 0o644)
	os.MkdirAll(filepath.Join(data, "receiver"), 0o700)
	fifos := []string{filepath.Join(data, "receiver", "receiver.json"), filepath.Join(data, webcert.CertName)}
	for _, f := range fifos {
		if err := syscall.Mkfifo(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan Report, 1)
	go func() { done <- run(t, Options{ConfigFile: conf}) }()
	select {
	case rep := <-done:
		want(t, rep, "web.tls", Fail, "not a regular file", "remove")
	case <-time.After(20 * time.Second):
		t.Errorf("doctor blocked on a FIFO in the daemon's data dir")
		for { // let each blocked open go (a writer ends its wait)
			for _, f := range fifos {
				if w, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}
