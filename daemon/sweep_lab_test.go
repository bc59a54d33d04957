package daemon

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp/snmptest"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
	"github.com/scanwarden/scanwarden/web"
)

// labContact is one address-book contact of the lab's file servers.
type labContact struct {
	id, name, host, path, user string
}

// labBook is a Kyocera address-book export of contacts, every password the
// lab's (in the device's encrypted form).
func labBook(lab *testlab.Lab, contacts ...labContact) []byte {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DeviceAddressBook_v5_2>\n")
	for _, c := range contacts {
		fmt.Fprintf(&b, `<Item Type="Contact" Id="%s" DisplayName="%s" SmbHostName="%s" SmbPath="%s" SmbLoginName="%s" SmbLoginPasswd="%s" SmbPort="445" FtpPort="21"/>`+"\n",
			c.id, c.name, c.host, c.path, c.user, registry.EncodePassword(lab.Password))
	}
	b.WriteString("</DeviceAddressBook_v5_2>\n")
	return []byte(b.String())
}

// labConsole is a Kyocera MFP whose console shows what the fixture file
// says: "Ready to print." when idle, or a send error that names no folder.
func labConsole(t *testing.T, lines ...string) string {
	t.Helper()
	b, err := os.ReadFile("../testlab/snmp/kyocera-idle.snmprec")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "1.3.6.1.2.1.43.16.5.1.2.1.1|"):
			l = "1.3.6.1.2.1.43.16.5.1.2.1.1|4|" + lines[0]
		case strings.HasPrefix(l, "1.3.6.1.2.1.43.16.5.1.2.1.2|"):
			l = "1.3.6.1.2.1.43.16.5.1.2.1.2|4|" + lines[1]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// An admin imports an address book into a running `serve` whose interval
// is a day: every destination is checked at once (within 30 s), not after
// the interval.
func TestLabServeImportChecksAtOnce(t *testing.T) {
	lab := testlab.Require(t)
	ctx := context.Background()
	cfg := testConfig(t, `
[checks]
interval = "24h"
timeout = "5s"
`)
	m, _ := startMain(t, cfg)
	// An import into a running serve: once the monitor has its first list
	// (before it, the destinations would be its first round, spread over
	// the 90 s jitter — CI once imported in that instant).
	waitUntil(t, 10*time.Second, "the monitor's first destination list", func() bool {
		mon := m.Monitor()
		return mon != nil && mon.Loaded()
	})
	book := labBook(lab,
		labContact{"1", "Alice", lab.DCHost, `\scans`, `KYOLAB\alice`},
		labContact{"2", "Scan user", lab.SMB2IP, `\scans`, "scanuser"},
		labContact{"3", "Read only", lab.DCHost, `\scans\readonly`, `KYOLAB\alice`})
	t0 := time.Now()
	res, err := webImporter{m}.Import(ctx, "MFP-IMPORT", book, false)
	if err != nil || len(res.Entries) != 3 {
		t.Fatalf("import: %+v %v", res, err)
	}
	var got map[string]store.LatestVerdict
	waitUntil(t, 30*time.Second, "every imported destination checked", func() bool {
		got, err = m.Store().Reports().LatestVerdicts(ctx)
		return err == nil && len(got) == 3
	})
	t.Logf("import → three destinations checked in %v (interval 24h)", time.Since(t0).Round(time.Millisecond))
	causes := map[scanwarden.Cause]int{}
	for name, v := range got {
		causes[v.Verdict.Cause]++
		if v.At.Before(t0.Add(-time.Second)) {
			t.Errorf("%s: checked at %v, before the import", name, v.At)
		}
	}
	if causes[scanwarden.CauseOK] != 2 || len(causes) != 2 {
		t.Errorf("causes %v: want two ok and the read-only folder failing", causes)
	}
}

// An MFP's console says "Cannot send. Error 1103" and names no folder. Its
// three destinations (one of them a folder the account cannot write) are
// checked, and within one poll interval + 30 s an incident opens for the
// broken one alone; the event says which were checked and what they found.
// Another MFP whose destinations all work shows the same console text: the
// event says they all accept scans now, with the device's own status, and
// no incident opens.
func TestLabServeConsole1103ChecksDestinations(t *testing.T) {
	lab := testlab.Require(t)
	ctx := context.Background()
	const pollEvery = 2 * time.Second
	idle := labConsole(t, "Ready to print.", "")
	failed := labConsole(t, "Cannot send.", "Error 1103")
	dirs := map[string]string{}
	devs := map[string]string{}
	for _, name := range []string{"MFP-SWEEP", "MFP-FINE"} {
		// Not t.TempDir(): snmpsimd runs as nobody and must read it.
		dir, err := os.MkdirTemp("", "swsweep")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.Chmod(dir, 0o755)
		writeFixture(t, dir, idle)
		dirs[name] = dir
		devs[name] = "127.0.0.1:" + itoa(snmptest.StartSim(t, dir, 1)[0])
	}
	cfg := testConfig(t, `
[checks]
interval = "24h"
jitter = "0s"
timeout = "5s"
event_gap = "0s"
[snmp]
interval = "`+pollEvery.String()+`"
`)

	// The registry before the daemon starts: both devices, their address
	// books, and a check of each destination from when all of them worked
	// (so none is due: only the device's failure can start a check). Then
	// one contact of MFP-SWEEP is changed to a folder alice cannot write.
	st := testStore(t, cfg)
	alice := labContact{"1", "Alice", lab.DCHost, `\scans`, `KYOLAB\alice`}
	scanuser := labContact{"2", "Scan user", lab.SMB2IP, `\scans`, "scanuser"}
	broken := labContact{"3", "Walt", lab.DCHost, `\scans`, `KYOLAB\alice`}
	importBook := func(device string, contacts ...labContact) map[string]registry.Destination {
		t.Helper()
		book, err := registry.ReadAddressBook(strings.NewReader(string(labBook(lab, contacts...))))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Destinations().ImportAddressBook(ctx, device, book, false); err != nil {
			t.Fatal(err)
		}
		ds, err := st.Destinations().Destinations(ctx, device)
		if err != nil || len(ds) != len(contacts) {
			t.Fatalf("%s: imported %+v %v", device, ds, err)
		}
		byID := map[string]registry.Destination{}
		for _, d := range ds {
			byID[d.AddressBookID] = d
		}
		return byID
	}
	for name, addr := range devs {
		if err := st.Devices().PutDevice(ctx, registry.Device{Name: name, Address: addr,
			SNMP: registry.SNMP{Version: "2c", Community: scanwarden.NewSecret("servelab")}}); err != nil {
			t.Fatal(err)
		}
	}
	sweepDests := importBook("MFP-SWEEP", alice, scanuser, broken)
	fineDests := importBook("MFP-FINE", labContact{"1", "Alice fine", lab.DCHost, `\scans`, `KYOLAB\alice`},
		labContact{"2", "Scan user fine", lab.SMB2IP, `\scans`, "scanuser"})
	for _, set := range []map[string]registry.Destination{sweepDests, fineDests} {
		for _, d := range set {
			rep := smbcheck.Run(ctx, d.Target(nil), smbcheck.Options{Ledger: st.Ledger(), MaxFailures: smbcheck.DefaultMaxFailures, StepTimeout: 5 * time.Second})
			if !rep.OK() {
				t.Fatalf("%s does not work before the test: %+v", d.Name, rep.Verdict)
			}
			if err := st.Reports().AddReport(ctx, d.Name, rep); err != nil {
				t.Fatal(err)
			}
		}
	}
	broken.path = `\scans\readonly`
	sweepDests = importBook("MFP-SWEEP", alice, scanuser, broken)
	walt := sweepDests["3"].Name
	st.Close()

	m, logs := startMain(t, cfg)
	waitUntil(t, 20*time.Second, "both devices polled", func() bool {
		inv, _ := m.Store().Events().SNMPDevices(ctx)
		return len(inv) == 2
	})
	reportsBefore := func() int {
		n := 0
		for _, set := range []map[string]registry.Destination{sweepDests, fineDests} {
			for _, d := range set {
				rs, _ := m.Store().Reports().Reports(ctx, d.Name, 10)
				n += len(rs)
			}
		}
		return n
	}
	if n := reportsBefore(); n != 5 {
		t.Fatalf("%d reports before the failure, want the 5 stored ones (nothing due)", n)
	}

	// The console of MFP-SWEEP shows 1103, naming no folder.
	t0 := time.Now()
	writeFixture(t, dirs["MFP-SWEEP"], failed)
	var incs []incident.Incident
	waitUntil(t, pollEvery+30*time.Second, "an incident for the broken destination", func() bool {
		incs, _ = m.Store().Incidents().Incidents(ctx, store.IncidentFilter{State: incident.StateOpen})
		return len(incs) > 0
	})
	latency := time.Since(t0)
	t.Logf("console 1103 → incident for %s: %v (poll interval %v)", walt, latency.Round(time.Millisecond), pollEvery)
	if len(incs) != 1 || incs[0].Destination != walt || incs[0].Cause == scanwarden.CauseOK || incs[0].Device != "MFP-SWEEP" {
		t.Fatalf("open incidents %+v, want %s's alone", incs, walt)
	}
	var ev *incident.EventView
	waitUntil(t, 10*time.Second, "the event's finding", func() bool {
		evs, err := webBackend{m}.Events(ctx, web.EventQuery{Device: "MFP-SWEEP", Limit: 10})
		if err != nil || len(evs) == 0 || evs[0].Swept == nil {
			return false
		}
		ev = &evs[0]
		return true
	})
	if ev.Code != "1103" || ev.Destination != "" || len(ev.Swept.Checked) != 3 {
		t.Fatalf("event %+v, swept %+v", ev, ev.Swept)
	}
	for _, c := range ev.Swept.Checked {
		wantOK := c.Destination != walt
		if !c.Fresh || (c.Cause == scanwarden.CauseOK) != wantOK {
			t.Errorf("checked %+v", c)
		}
	}
	t.Logf("MFP-SWEEP's event: %s", ev.Swept.Finding)
	if !strings.Contains(ev.Swept.Finding, "only "+walt+" fails") || !strings.Contains(ev.Swept.Finding, "reports: idle") {
		t.Errorf("finding %q", ev.Swept.Finding)
	}
	tl, err := m.Store().Incidents().Timeline(ctx, incs[0].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var said string
	for _, e := range tl {
		if e.Kind == incident.EntryDeviceEvent {
			said = e.Text
		}
	}
	for _, d := range sweepDests {
		if !strings.Contains(said, d.Name+": ") {
			t.Errorf("incident's timeline %q does not say what %s's check found", said, d.Name)
		}
	}

	// The same text on MFP-FINE, whose destinations all work.
	writeFixture(t, dirs["MFP-FINE"], failed)
	waitUntil(t, pollEvery+30*time.Second, "the healthy device's finding", func() bool {
		evs, err := webBackend{m}.Events(ctx, web.EventQuery{Device: "MFP-FINE", Limit: 10})
		if err != nil || len(evs) == 0 || evs[0].Swept == nil {
			return false
		}
		ev = &evs[0]
		return true
	})
	t.Logf("MFP-FINE's event: %s", ev.Swept.Finding)
	if len(ev.Swept.Checked) != 2 || !strings.Contains(ev.Swept.Finding, incident.AllAcceptNow) ||
		!strings.Contains(ev.Swept.Finding, "The device itself reports: idle") {
		t.Errorf("healthy device: %+v", ev.Swept)
	}
	for _, c := range ev.Swept.Checked {
		if !c.Fresh || c.Cause != scanwarden.CauseOK {
			t.Errorf("checked %+v", c)
		}
	}
	incs, _ = m.Store().Incidents().Incidents(ctx, store.IncidentFilter{})
	if len(incs) != 1 {
		t.Errorf("incidents %+v, want only %s's", incs, walt)
	}
	if strings.Contains(logs.String(), lab.Password) {
		t.Fatal("a password reached the log")
	}
}
