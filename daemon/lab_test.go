package daemon

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/ad"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/snmp/snmptest"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// labFixtures writes the device's two faces: idle (job 57 done) and the
// same device after two new jobs, 58 aborted with 1102 for \\dc1\scans.
func labFixtures(t *testing.T, dcHost string) (dir, idle, failed string) {
	t.Helper()
	b, err := os.ReadFile("../testlab/snmp/kyocera-job1102.snmprec")
	if err != nil {
		t.Fatal(err)
	}
	failed = strings.ReplaceAll(string(b), `\\fs01.kyolab.test\scans\alice`, `\\`+dcHost+`\scans`)
	if failed == string(b) {
		t.Fatal("fixture lost its destination line")
	}
	newJobs := regexp.MustCompile(`\.1\.5[89](\.|\|)`)
	var keep []string
	for _, line := range strings.Split(failed, "\n") {
		if !newJobs.MatchString(line) {
			keep = append(keep, line)
		}
	}
	idle = strings.Join(keep, "\n")
	// Not t.TempDir(): snmpsimd runs as nobody and must read it.
	dir, err = os.MkdirTemp("", "swserve")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	writeFixture(t, dir, idle)
	return dir, idle, failed
}

// writeFixture replaces the fixture atomically; snmpsimd re-reads a data
// file that changed.
func writeFixture(t *testing.T, dir, text string) {
	t.Helper()
	tmp := filepath.Join(dir, ".servelab.tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o644)
	// snmpsimd notices a changed data file by its mtime in whole seconds:
	// a file replaced within the same second as the one it replaces would
	// keep being served from the old index. Give it a later second.
	final := filepath.Join(dir, "servelab.snmprec")
	mtime := time.Now().Truncate(time.Second)
	if old, err := os.Stat(final); err == nil && !mtime.After(old.ModTime().Truncate(time.Second)) {
		mtime = old.ModTime().Truncate(time.Second).Add(time.Second)
	}
	if err := os.Chtimes(tmp, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
}

// The whole program against the lab (issue 11, item 8): an MFP (snmpsim)
// shows an aborted scan with 1102 for a destination imported with a wrong
// stored password → within one poll an incident opens with bad-credentials
// and the webhook hears incident.opened; however many more failures arrive,
// the account's badPwdCount stays below the lockout threshold; the password
// is corrected → green checks → the incident closes after close_after.
func TestLabServe1102ToWebhook(t *testing.T) {
	lab := testlab.Require(t)
	ctx := context.Background()
	const user = `KYOLAB\servewrong`
	dir, _, failed := labFixtures(t, lab.DCHost)
	port := snmptest.StartSim(t, dir, 1)[0]
	devAddr := "127.0.0.1:" + itoa(port)

	hook := newHookPeer(t)
	files := t.TempDir()
	adPw := filepath.Join(files, "ad.pw")
	os.WriteFile(adPw, []byte(lab.Password+"\n"), 0o600)
	dirAD, err := ad.New(ad.Config{URL: "ldaps://" + lab.DCHost, BindUser: "ldapreader@" + lab.DNSDomain,
		Password: scanwarden.NewSecret(lab.Password), CAFile: lab.CA, Margin: 1, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	badPwd := func() int {
		t.Helper()
		u, err := dirAD.User(ctx, user, "")
		if err != nil || !u.Found {
			t.Fatalf("AD: %v %+v", err, u)
		}
		return u.BadPwdCount
	}

	cfg := testConfig(t, `
[checks]
interval = "1h"
jitter = "0s"
max_failures = 1
failure_window = "15s"
timeout = "5s"
event_gap = "1m"
[incidents]
close_after = "4s"
[snmp]
interval = "2s"
[ad]
url = "ldaps://`+lab.DCHost+`"
bind_user = "ldapreader@`+lab.DNSDomain+`"
password_file = "`+adPw+`"
ca = "`+lab.CA+`"
[notify]
webhook_url = "`+hook.srv.URL+`/hook"
webhook_backoff = "100ms"
`)

	// The registry as an import leaves it: the device, and its address-book
	// contact. It worked when it was last checked; then the contact's
	// password was changed on the panel and the address book re-imported.
	st := testStore(t, cfg)
	if err := st.Devices().PutDevice(ctx, registry.Device{Name: "MFP-LAB", Address: devAddr,
		SNMP: registry.SNMP{Version: "2c", Community: scanwarden.NewSecret("servelab")}}); err != nil {
		t.Fatal(err)
	}
	// Import the device's address book (Kyocera XML export), as an admin
	// does: first as it was when it worked.
	importBook := func(st *store.Store, pw string) registry.Destination {
		t.Helper()
		xml := `<?xml version="1.0" encoding="UTF-8"?>
<DeviceAddressBook_v5_2>
<Item Type="Contact" Id="7" DisplayName="Serve lab" SmbHostName="` + lab.DCHost + `" SmbPath="\scans" SmbLoginName="` + user +
			`" SmbLoginPasswd="` + registry.EncodePassword(pw) + `" SmbPort="445" FtpPort="21"/>
</DeviceAddressBook_v5_2>
`
		book, err := registry.ReadAddressBook(strings.NewReader(xml))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Destinations().ImportAddressBook(ctx, "MFP-LAB", book, false); err != nil {
			t.Fatal(err)
		}
		ds, err := st.Destinations().Destinations(ctx, "MFP-LAB")
		if err != nil || len(ds) != 1 || ds[0].Source != registry.SourceImported {
			t.Fatalf("imported %+v %v", ds, err)
		}
		return ds[0]
	}
	d := importBook(st, lab.Password)
	rep := smbcheck.Run(ctx, d.Target(nil), smbcheck.Options{Ledger: st.Ledger(), MaxFailures: smbcheck.DefaultMaxFailures, StepTimeout: 5 * time.Second})
	if !rep.OK() {
		t.Fatalf("the destination does not work with the right password: %+v", rep.Verdict)
	}
	if err := st.Reports().AddReport(ctx, d.Name, rep); err != nil {
		t.Fatal(err)
	}
	// Then someone changes the contact's password on the panel, and the
	// address book is imported again.
	if got := importBook(st, "Not-"+lab.Password); got.Name != d.Name {
		t.Fatalf("re-import renamed the destination: %q", got.Name)
	}
	st.Close()
	if n := badPwd(); n != 0 {
		t.Fatalf("badPwdCount %d before the test", n)
	}

	m, logs := startMain(t, cfg)
	waitUntil(t, 20*time.Second, "the device polled", func() bool {
		inv, _ := m.Store().Events().SNMPDevices(ctx)
		return len(inv) == 1 && inv[0].SysName == "MFP02"
	})
	if ev := hook.events(); len(ev) != 0 {
		t.Fatalf("notified before the failure: %v", ev)
	}

	// The scan fails on the device.
	t0 := time.Now()
	writeFixture(t, dir, failed)
	waitUntil(t, 30*time.Second, "incident.opened at the webhook", func() bool { return len(hook.events()) > 0 })
	latency := time.Since(t0)
	hook.mu.Lock()
	msg := hook.msgs[0]
	hook.mu.Unlock()
	if msg.Event != "incident.opened" || msg.Incident.Cause != "bad-credentials" || msg.Incident.Destination != d.Name ||
		msg.Incident.KyoceraCode != "1102" || msg.Incident.Device != "MFP-LAB" || msg.Incident.ClosedAt != nil {
		t.Fatalf("webhook got %+v", msg)
	}
	t.Logf("1102 on the device → incident.opened at the webhook: %v (poll interval 2s)", latency.Round(time.Millisecond))
	if latency > 2*time.Second+2*time.Second+3*time.Second {
		t.Errorf("latency %v: more than one poll interval + 2 s (+3 s slack for a loaded machine)", latency)
	}

	// More failures arrive (traps, mails, a nervous admin pressing "check
	// now"): the account must not lock.
	for i := 0; i < 10; i++ {
		m.Monitor().Event(ctx, snmp.Event{Device: devAddr, Code: "1102", Text: "Send error. 1102", Destination: `\\` + lab.DCHost + `\scans`,
			Source: snmp.SourceTrap, Time: time.Now(), Key: "trap:" + itoa(i)})
	}
	for i := 0; i < 3; i++ {
		res, err := m.Monitor().CheckNow(ctx, d.Name, nil)
		if err != nil || res.Report.OK() {
			t.Fatalf("check now with the wrong password: %+v %v", res.Report.Verdict, err)
		}
	}
	if n := badPwd(); n >= 3 || n < 1 {
		t.Fatalf("badPwdCount %d: want 1..2 (threshold 3)", n)
	}

	// The admin corrects the password on the panel and imports the book again.
	importBook(m.Store(), lab.Password)
	m.SyncDevices(ctx)
	greenAt := time.Time{}
	waitUntil(t, 60*time.Second, "incident.closed at the webhook", func() bool {
		res, err := m.Monitor().CheckNow(ctx, d.Name, nil)
		if err == nil && res.Report.OK() && greenAt.IsZero() {
			greenAt = time.Now()
		}
		if n := badPwd(); n >= 3 {
			t.Fatalf("badPwdCount %d reached the threshold", n)
		}
		for _, e := range hook.events() {
			if strings.HasPrefix(e, "incident.closed") {
				return true
			}
		}
		time.Sleep(time.Second)
		return false
	})
	if greenAt.IsZero() {
		t.Fatal("closed without a green check")
	}
	if n := badPwd(); n != 0 {
		t.Fatalf("badPwdCount %d after a good logon", n)
	}
	incs, err := m.Store().Incidents().Incidents(ctx, store.IncidentFilter{Destination: d.Name})
	if err != nil || len(incs) != 1 || incs[0].State != incident.StateClosed || incs[0].AffectedJobs < 11 || incs[0].Cause != scanwarden.CauseBadCredentials {
		t.Fatalf("incidents %+v %v", incs, err)
	}
	tl, _ := m.Store().Incidents().Timeline(ctx, incs[0].ID, 0)
	kinds := map[incident.EntryKind]int{}
	for _, e := range tl {
		kinds[e.Kind]++
	}
	if kinds[incident.EntryOpened] != 1 || kinds[incident.EntryDeviceEvent] < 11 || kinds[incident.EntryCheck] < 2 ||
		kinds[incident.EntryNotification] < 1 || kinds[incident.EntryClosed] != 1 {
		t.Fatalf("timeline %v", kinds)
	}
	if strings.Contains(logs.String(), lab.Password) {
		t.Fatal("a password reached the log")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A DC that does not answer is a stated fault ("ad"); the check goes on
// without it and the destination is still judged.
func TestLabServeDCDownIsAFault(t *testing.T) {
	lab := testlab.Require(t)
	ctx := context.Background()
	files := t.TempDir()
	adPw := filepath.Join(files, "ad.pw")
	os.WriteFile(adPw, []byte(lab.Password+"\n"), 0o600)
	cfg := testConfig(t, `
[checks]
interval = "1h"
jitter = "1h"
timeout = "3s"
[ad]
url = "ldap://`+lab.GhostIP+`"
insecure_plain = true
bind_user = "ldapreader@`+lab.DNSDomain+`"
password_file = "`+adPw+`"
timeout = "2s"
`)
	st := testStore(t, cfg)
	if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "alice", Host: lab.DCHost, Share: "scans", User: `KYOLAB\alice`,
		Password: scanwarden.NewSecret(lab.Password), Source: registry.SourceAdded}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := m.Monitor().CheckNow(ctx, "alice", nil)
	if err != nil || !res.Report.OK() {
		t.Fatalf("check without the DC: %+v %v", res.Report.Verdict, err)
	}
	found := false
	for _, f := range m.Faults() {
		found = found || f.Part == "ad" && strings.Contains(f.Message, "could not be asked")
	}
	if !found {
		t.Fatalf("faults %+v", m.Faults())
	}
}
