package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDoctorCLI(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o700)
	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte("data_dir = \""+data+"\"\nlisten = \"127.0.0.1:1\"\n"), 0o644)
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("data_dir = \""+data+"\"\nlisten = \"127.0.0.1:1\"\n[checks]\nintervall = \"1m\"\n"), 0o644)

	doctor := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"doctor"}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, _ := doctor("--bogus"); code != exitUsage {
		t.Errorf("unknown flag: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := doctor("extra"); code != exitUsage {
		t.Errorf("argument: exit %d, want %d", code, exitUsage)
	}

	code, out, _ := doctor("--config", bad)
	if code != exitFinding || !strings.Contains(out, "FAIL  config") || !strings.Contains(out, "checks.intervall") ||
		!strings.Contains(out, "fix: edit "+bad) {
		t.Errorf("bad config: exit %d\n%s", code, out)
	}

	code, out, _ = doctor("--config", good, "--json")
	var rep struct {
		Config string `json:"config"`
		Checks []struct {
			ID, Status, Detail, Fix string
		} `json:"checks"`
		Result string `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	ids := map[string]string{}
	for _, c := range rep.Checks {
		ids[c.ID] = c.Status
	}
	for _, id := range []string{"config", "data_dir", "key", "samba", "port.445", "port.139", "port.162/udp", "daemon", "ad", "snmp"} {
		if ids[id] == "" {
			t.Errorf("--json has no check %s: %s", id, out)
		}
	}
	if ids["config"] != "ok" || rep.Config != good {
		t.Errorf("config %q from %q", ids["config"], rep.Config)
	}
	if (code == exitOK) != (rep.Result != "fail") {
		t.Errorf("exit %d with result %s", code, rep.Result)
	}
}
