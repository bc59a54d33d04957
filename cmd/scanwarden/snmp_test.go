package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runSNMPArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := environ{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := runIn(context.Background(), env, append([]string{"snmp"}, args...))
	return code, out.String(), errb.String()
}

func TestSNMPUsage(t *testing.T) {
	for _, args := range [][]string{
		nil, {"nope"}, {"probe"}, {"probe", "a", "b"}, {"probe", "h:99999"},
		{"probe", "h", "--community-file", "/dev/null", "--v3-user", "u"}, {"probe", "h", "--v3-user", "u"},
		{"probe", "h", "--community", "x"}, // gone: the command line is readable by every local user
		{"walk", "h"}, {"probe", "h", "--version", "4"},
	} {
		if code, _, _ := runSNMPArgs(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, out, _ := runSNMPArgs(t, "codes", "--json"); code != exitOK || !strings.Contains(out, `"1102"`) {
		t.Errorf("codes: %d %s", code, out)
	}
}

// A device that never answers (a UDP port on loopback that drops
// everything) gives exit 1, and the community is nowhere in the output.
func TestSNMPProbeNoAnswer(t *testing.T) {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	secret := filepath.Join(t.TempDir(), "community")
	os.WriteFile(secret, []byte("very-secret-community\n"), 0o600)
	code, out, errs := runSNMPArgs(t, "probe", c.LocalAddr().String(), "--community-file", secret, "--timeout", "200ms", "--retries", "0", "--json")
	if code != exitFinding {
		t.Fatalf("exit %d, want %d (%s)", code, exitFinding, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil || m["answered"] != false {
		t.Errorf("json: %v %s", err, out)
	}
	if strings.Contains(out+errs, "very-secret") {
		t.Error("community leaked")
	}
}
