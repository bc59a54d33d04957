// Package snmptest starts real SNMP peers on loopback for tests: snmpsimd
// serving the .snmprec fixtures of testlab/snmp, one fixture per community.
// It is imported by tests only and does not import package snmp, so that
// package's own tests can use it.
package snmptest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/scanwarden/scanwarden/testlab"
)

// FreeUDPPorts returns n UDP ports on 127.0.0.1 that were free a moment ago.
func FreeUDPPorts(t testing.TB, n int) []int {
	t.Helper()
	var conns []net.PacketConn
	var ports []int
	for i := 0; i < n; i++ {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
	}
	for _, c := range conns {
		c.Close()
	}
	return ports
}

// StartSim runs snmpsimd over the fixtures in dataDir on n loopback ports
// (every port serves every fixture; the community picks the fixture), waits
// until it answers, and stops it when the test ends. It skips the test when
// snmpsimd is not installed.
func StartSim(t testing.TB, dataDir string, n int) []int {
	t.Helper()
	bin, err := exec.LookPath("snmpsimd")
	if err != nil {
		testlab.Missing(t, "snmpsimd not installed (apt-get install snmpsim): skipping the snmpsim tests")
	}
	data, err := filepath.Abs(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Glob(filepath.Join(data, "*.snmprec"))
	if len(fixtures) == 0 {
		t.Fatalf("no .snmprec fixtures in %s", data)
	}
	sort.Strings(fixtures)
	community := strings.TrimSuffix(filepath.Base(fixtures[0]), ".snmprec")
	// Not t.TempDir(): its parent is 0700 and snmpsimd runs as nobody.
	dir, err := os.MkdirTemp("", "swsnmpsim")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	cache := filepath.Join(dir, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	ports := FreeUDPPorts(t, n)
	args := []string{"--v2c-arch", "--data-dir=" + data, "--cache-dir=" + cache, "--logging-method=null"}
	for _, p := range ports {
		args = append(args, fmt.Sprintf("--agent-udpv4-endpoint=127.0.0.1:%d", p))
	}
	if os.Geteuid() == 0 {
		// As root snmpsimd must drop privileges; its cache must be nobody's
		// and the data readable by nobody.
		if err := exec.Command("chown", "-R", "nobody:nogroup", dir).Run(); err != nil {
			t.Fatalf("chown cache: %v", err)
		}
		os.Chmod(dir, 0o755)
		args = append(args, "--process-user=nobody", "--process-group=nogroup")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start snmpsimd: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitSim(t, ports[0], community, 20*time.Second)
	return ports
}

// waitSim asks 127.0.0.1:port for sysName.0 until it answers (bounded).
func waitSim(t testing.TB, port int, community string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: community,
			Version: gosnmp.Version2c, Timeout: 300 * time.Millisecond, Retries: 0}
		err := g.Connect()
		if err == nil {
			_, err = g.Get([]string{"1.3.6.1.2.1.1.5.0"})
			g.Conn.Close()
		}
		if err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("snmpsimd on 127.0.0.1:%d did not answer within %s", port, within)
}
