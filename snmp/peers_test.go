package snmp

import (
	"context"
	"fmt"
	"github.com/scanwarden/scanwarden"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/scanwarden/scanwarden/snmp/snmptest"
	"github.com/scanwarden/scanwarden/testlab"
)

// startSnmpsim runs snmpsimd over testlab/snmp on n loopback ports (every
// port serves every fixture, the community picks the fixture) and stops it
// when the test ends. It skips when snmpsimd is not installed.
func startSnmpsim(t *testing.T, n int) []int {
	t.Helper()
	return snmptest.StartSim(t, "../testlab/snmp", n)
}

// waitAnswer polls sysName.0 until the agent answers (bounded).
func waitAnswer(t *testing.T, tg Target, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	c := newClient()
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		tg.Timeout, tg.Retries = 300*time.Millisecond, 0
		err := c.connect(ctx, tg, 1, nil)
		if err == nil {
			_, err = c.get(ctx, []string{oidSysName})
			c.close()
		}
		cancel()
		if err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not answer within %s", tg, within)
}

// startSnmpd runs net-snmp snmpd on loopback with one v3 authPriv user and
// returns the target. It skips when snmpd is not installed.
func startSnmpd(t *testing.T) Target {
	t.Helper()
	bin, err := exec.LookPath("snmpd")
	if err != nil {
		if _, err2 := os.Stat("/usr/sbin/snmpd"); err2 != nil {
			testlab.Missing(t, "snmpd not installed (apt-get install snmpd): skipping the SNMPv3 test")
		}
		bin = "/usr/sbin/snmpd"
	}
	dir := t.TempDir()
	port := snmptest.FreeUDPPorts(t, 1)[0]
	auth, priv := "auth-"+strconv.FormatInt(time.Now().UnixNano(), 36), "priv-"+strconv.FormatInt(time.Now().UnixNano()/7, 36)
	conf := fmt.Sprintf(`agentAddress udp:127.0.0.1:%d
rouser tester priv
sysName snmpd3
sysObjectID .1.3.6.1.4.1.1347.41
createUser tester SHA "%s" AES "%s"
`, port, auth, priv)
	cf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "persist"), 0o700)
	cmd := exec.Command(bin, "-f", "-C", "-c", cf, "-Lf", filepath.Join(dir, "log"), "-p", filepath.Join(dir, "pid"))
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+filepath.Join(dir, "persist"), "MIBS=")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start snmpd: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	tg := Target{Host: "127.0.0.1", Port: uint16(port), Version: V3, Timeout: time.Second,
		V3: &V3Auth{User: "tester", AuthProto: "SHA", AuthPass: scanwarden.NewSecret(auth), PrivProto: "AES", PrivPass: scanwarden.NewSecret(priv)}}
	waitAnswer(t, tg, 10*time.Second)
	return tg
}

func simTarget(port int, community string) Target {
	return Target{Host: "127.0.0.1", Port: uint16(port), Community: scanwarden.NewSecret(community), Timeout: time.Second, Retries: 1}
}

// snmpVarbindsOf is used by the fuzz seeds.
func encodeTrapV2(t testing.TB, community string, vars []gosnmp.SnmpPDU, inform bool) []byte {
	t.Helper()
	pt := gosnmp.SNMPv2Trap
	if inform {
		pt = gosnmp.InformRequest
	}
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: community, PDUType: pt, RequestID: 42, Variables: vars}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func trapVars(trapOID string, extra ...gosnmp.SnmpPDU) []gosnmp.SnmpPDU {
	return append([]gosnmp.SnmpPDU{
		{Name: "." + oidSysUpTime, Type: gosnmp.TimeTicks, Value: uint32(12345)},
		{Name: "." + oidSnmpTrapOID, Type: gosnmp.ObjectIdentifier, Value: "." + trapOID},
	}, extra...)
}

var _ = strings.TrimSpace

// blackhole is a UDP port on 127.0.0.1 that reads and never answers, like a
// device with SNMP off behind a firewall that drops.
func blackhole(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).Port
}
