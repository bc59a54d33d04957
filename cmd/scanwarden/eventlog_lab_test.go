package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabCheckEventLog: a check of a stored destination on evtsrv that
// fails (its share does not exist) reads evtsrv's event log with the
// reading account and shows the 4625 written there for the stored account
// (eventlogadm) on the check's report — as evidence: the verdict stays the
// check's own. A reading account without the right to read the log, or a
// server with no event log, is said plainly and the check still passes.
func TestLabCheckEventLog(t *testing.T) {
	lab := testlab.Require(t)
	isolate(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(lab.Password+"\n"), 0o600)
	cli := func(want int, args ...string) result {
		t.Helper()
		r := runCLI(t, nil, "", args...)
		if r.code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, r.code, want, r.stdout, r.stderr)
		}
		return r
	}
	at := time.Now().Add(-20 * time.Second)
	lab.WriteEvent(t, "Security", at, 4625, "AUDIT FAILURE", "Microsoft-Windows-Security-Auditing",
		"S-1-0-0", "-", "-", "0x0", "S-1-0-0", "scanuser", "EVTSRV", "0xc000006d", "%%2313", "0xc0000064", "3",
		"NtLmSsp", "NTLM", "MFP07", "-", "-", "0", "0x0", "-", "10.77.0.7", "50123")
	cli(exitOK, "destination", "add", "evt", "//"+lab.EvtIP+"/nosuchshare", "--user", "scanuser", "--password-file", pw, "--data-dir", data)
	r := cli(exitFinding, "check", "--destination", "evt", "--data-dir", data, "--eventlog-user", testlab.EventReader, "--eventlog-password-file", pw)
	t.Log(r.stdout)
	for _, want := range []string{"verdict: share-not-found", "the server's own story (read as evreader; evidence, not the verdict)",
		`Security 4625: EVTSRV\scanuser failed to log on from MFP07 (10.77.0.7): unknown user name or bad password`, "sub-status 0xC0000064 STATUS_NO_SUCH_USER"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(r.stdout, "history: failed 1 of 1 checks in 14 days: no pattern yet") {
		t.Errorf("no history sentence:\n%s", r.stdout)
	}
	r = cli(exitFinding, "check", "--destination", "evt", "--data-dir", data, "--eventlog-user", testlab.EventReader, "--eventlog-password-file", pw, "--json")
	var rep struct {
		Verdict   struct{ Cause string }
		ServerLog struct {
			Events []struct {
				ID        int    `json:"id"`
				SubStatus string `json:"sub_status"`
			}
		} `json:"server_log"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range rep.ServerLog.Events {
		found = found || e.ID == 4625 && strings.HasPrefix(e.SubStatus, "0xC0000064")
	}
	if rep.Verdict.Cause != "share-not-found" || !found {
		t.Errorf("json: verdict %q, events %+v", rep.Verdict.Cause, rep.ServerLog.Events)
	}
	// As evreader, with scanuser (who may not read the log) reading it: the
	// verdict is the check's, and the story says why the log was not read.
	r = cli(exitFinding, "check", "//"+lab.EvtIP+"/nosuchshare", "--user", testlab.EventReader, "--password-file", pw, "--eventlog-user", "scanuser", "--eventlog-password-file", pw)
	if !strings.Contains(r.stdout, "Security log of "+lab.EvtIP+" not read: the reading account scanuser lacks the right to read it") {
		t.Errorf("no right not said:\n%s", r.stdout)
	}
	// guestsrv (evreader is a guest there) keeps no event log.
	r = cli(exitFinding, "check", "//"+lab.GuestIP+"/nosuchshare", "--user", "scanuser", "--password-file", pw, "--eventlog-user", testlab.EventReader, "--eventlog-password-file", pw)
	if !strings.Contains(r.stdout, "verdict: share-not-found") || !strings.Contains(r.stdout, "Security log of "+lab.GuestIP+" not read: the server keeps no such log") {
		t.Errorf("no event log not said:\n%s", r.stdout)
	}
	// A wrong password: the 4625 the server logs during the check says the
	// same status, and is marked as agreeing (the verdict is the check's).
	wrong := filepath.Join(dir, "wrong")
	os.WriteFile(wrong, []byte("not-"+lab.Password+"\n"), 0o600)
	lab.WriteEvent(t, "Security", time.Now(), 4625, "AUDIT FAILURE", "Microsoft-Windows-Security-Auditing",
		"S-1-0-0", "-", "-", "0x0", "S-1-0-0", "scanuser", "EVTSRV", "0xc000006d", "%%2313", "0xc000006a", "3",
		"NtLmSsp", "NTLM", "SCANWARDEN", "-", "-", "0", "0x0", "-", "10.77.0.2", "50125")
	r = cli(exitFinding, "check", "//"+lab.EvtIP+"/scans", "--user", "scanuser", "--password-file", wrong, "--max-failures", "1",
		"--data-dir", data, "--eventlog-user", testlab.EventReader, "--eventlog-password-file", pw)
	if !strings.Contains(r.stdout, "verdict: bad-credentials") || !strings.Contains(r.stdout, "from SCANWARDEN (10.77.0.2)") ||
		!strings.Contains(r.stdout, "— the server logged the status the check met") {
		t.Errorf("agreement not said:\n%s", r.stdout)
	}
	// The scan account is never the reading account.
	r = cli(exitOK, "check", "//"+lab.EvtIP+"/scans", "--user", "scanuser", "--password-file", pw, "--eventlog-user", "scanuser", "--eventlog-password-file", pw)
	if !strings.Contains(r.stdout, "the reading account scanuser is the scan account: not used") {
		t.Errorf("scan account used as the reader:\n%s", r.stdout)
	}
}
