package daemon

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
	"github.com/scanwarden/scanwarden/web"
	"github.com/scanwarden/scanwarden/web/webtest"
)

// TestWebManage is the browser test of managing the registry from
// the page, against the whole daemon and the lab's DC: the getting-started
// list; a device added (its community never sent back), refused with the
// error beside the field, edited; a destination tested before saving (a
// real verdict from the DC's share, nothing stored), added, edited with
// its password kept; an imported contact whose password was unreadable
// given one; the sortable lists with hostile names shown as text; a
// destination with held scans removed twice (its scans delivered to
// another, then discarded); the device removed; every write in the audit
// log, no secret in it.
func TestWebManage(t *testing.T) {
	lab := testlab.Require(t)
	m, base := openWebDaemonOn(t, registry.Destination{}, "")
	st := m.Store()
	ctx := context.Background()
	b := webtest.Start(t, 3*time.Minute)
	shots := os.Getenv("WEB_SCREENSHOTS")
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b.Ctx, actions...); err != nil {
			b.Screenshot(t, shots, "manage-failed", 1280)
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string { return strings.Join(strings.Fields(b.Text(t, sel)), " ") }
	b.Login(t, base, "web test password")

	// The overview without destinations: getting started.
	do("overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`#getting-started`)))
	if got := text(`#start-device`); !strings.Contains(got, "done") {
		t.Errorf("register the MFP (one device exists): %q", got)
	}
	if got := text(`#start-destinations`); !strings.Contains(got, "to do") || !strings.Contains(got, "Add a destination") {
		t.Errorf("destinations step: %q", got)
	}
	b.Screenshot(t, shots, "manage-getting-started", 1280)

	// A device: a name the registry refuses is said beside the field.
	const community = "c0mmunity-S3cret"
	do("device form", chromedp.Navigate(base+"/devices"), chromedp.Click(chromedp.CSS(`#device-add`)),
		chromedp.WaitVisible(chromedp.CSS(`#device-form`)),
		chromedp.SetValue(chromedp.CSS(`#device-form input[name=name]`), "büro-mfp"),
		chromedp.SetValue(chromedp.CSS(`#device-form input[name=address]`), lab.Getenv("SWLAB_SNMPSIM_IP")+":161"),
		chromedp.SetValue(chromedp.CSS(`#device-form input[name=community]`), community),
		chromedp.Click(chromedp.CSS(`#device-save`)), chromedp.WaitVisible(chromedp.CSS(`label.bad .field-error`)))
	if got := text(`label.bad`); !strings.HasPrefix(got, "Name") || !strings.Contains(got, "letters") {
		t.Errorf("the refused name's label: %q", got)
	}
	do("device add", chromedp.SetValue(chromedp.CSS(`#device-form input[name=name]`), "mfp-lab"),
		chromedp.SetValue(chromedp.CSS(`#device-form input[name=community]`), community),
		chromedp.Click(chromedp.CSS(`#device-save`)), chromedp.WaitVisible(chromedp.CSS(`#device-edit`)))
	dev, err := st.Devices().Device(ctx, "mfp-lab")
	if err != nil || dev.SNMP.Community.Reveal() != community || dev.Address != lab.Getenv("SWLAB_SNMPSIM_IP")+":161" {
		t.Fatalf("device stored: %+v %v", dev, err)
	}
	do("device edit", chromedp.Click(chromedp.CSS(`#device-edit`)), chromedp.WaitVisible(chromedp.CSS(`#device-form`)))
	html, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil || strings.Contains(html, community) || !strings.Contains(text(`#snmp-credentials`), "stored") {
		t.Fatalf("the edit form: %v, community sent back %v", err, strings.Contains(html, community))
	}
	do("device save", chromedp.SetValue(chromedp.CSS(`#device-form input[name=workstation]`), "MFP01"),
		chromedp.Click(chromedp.CSS(`#device-save`)), chromedp.WaitVisible(chromedp.CSS(`#device-edit`)))
	if dev, err = st.Devices().Device(ctx, "mfp-lab"); err != nil || dev.Workstation != "MFP01" || dev.SNMP.Community.Reveal() != community {
		t.Fatalf("device after edit: %+v %v", dev, err)
	}

	// A destination: tested before saving against the DC's share (a real
	// verdict each time, nothing stored), then added.
	folder := `\\` + lab.DCHost + `\scans`
	fill := func(name, folder string) {
		do("destination form", chromedp.Navigate(base+"/destinations/_new?device=mfp-lab"),
			chromedp.WaitVisible(chromedp.CSS(`#destination-form[data-live]`)),
			chromedp.SetValue(chromedp.CSS(`#destination-form input[name=name]`), name),
			chromedp.SetValue(chromedp.CSS(`#destination-form input[name=folder]`), folder),
			chromedp.SetValue(chromedp.CSS(`#destination-form input[name=user]`), lab.Domain+`\alice`),
			chromedp.SetValue(chromedp.CSS(`#destination-form input[name=password]`), lab.Password))
	}
	try := func(want string) {
		t.Helper()
		do("test before saving", chromedp.Click(chromedp.CSS(`#destination-try`)))
		waitCtx, cancel := context.WithTimeout(b.Ctx, 90*time.Second)
		err := chromedp.Do(waitCtx, chromedp.WaitVisible(chromedp.CSS(`#try-verdict`)))
		cancel()
		if err != nil {
			b.Screenshot(t, shots, "manage-try-failed", 1280)
			t.Fatalf("no verdict: %v; state %q", err, text(`#try-state`))
		}
		n, _ := b.Count(`#try-steps li`)
		got := text(`#try-verdict`)
		t.Logf("test before saving: %d steps, verdict %q", n, got)
		if !strings.HasPrefix(got, want) || n < 3 {
			t.Errorf("verdict %q after %d steps, want %q", got, n, want)
		}
		if _, err := st.Destinations().Destination(ctx, "labscans"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the test stored the destination: %v", err)
		}
	}
	// A folder the form cannot use: said beside the field, nothing run.
	fill("labscans", "scans")
	do("test a bad folder", chromedp.Click(chromedp.CSS(`#destination-try`)), chromedp.WaitVisible(chromedp.CSS(`label.bad .field-error`)))
	if got := text(`label.bad`); !strings.HasPrefix(got, "Folder") {
		t.Errorf("the bad folder's label: %q", got)
	}
	fill("labscans", folder+`\readonly`)
	try("no-write-permission")
	fill("labscans", folder)
	try("ok")
	b.Screenshot(t, shots, "manage-try", 1280)
	do("destination add", chromedp.Click(chromedp.CSS(`#destination-save`)), chromedp.WaitVisible(chromedp.CSS(`#destination-edit`)))
	d, err := st.Destinations().Destination(ctx, "labscans")
	if err != nil || d.Host != lab.DCHost || d.Share != "scans" || d.User != lab.Domain+`\alice` || d.Password.Reveal() != lab.Password ||
		d.Device != "mfp-lab" || d.Source != registry.SourceAdded {
		t.Fatalf("destination stored: %+v %v", d, err)
	}
	// Edited: another folder, the password field left empty keeps it.
	do("destination edit", chromedp.Click(chromedp.CSS(`#destination-edit`)), chromedp.WaitVisible(chromedp.CSS(`#destination-form`)),
		chromedp.SetValue(chromedp.CSS(`#destination-form input[name=folder]`), folder+`\sub`),
		chromedp.Click(chromedp.CSS(`#destination-save`)), chromedp.WaitVisible(chromedp.CSS(`#destination-edit`)))
	if d, err = st.Destinations().Destination(ctx, "labscans"); err != nil || d.Path != "sub" || d.Password.Reveal() != lab.Password {
		t.Fatalf("destination after edit: path %q, password kept %v, %v", d.Path, d.Password.Reveal() == lab.Password, err)
	}

	// Another server with the stored password: refused, beside the field.
	do("destination moved", chromedp.Navigate(base+"/destinations/labscans/edit"), chromedp.WaitVisible(chromedp.CSS(`#destination-form`)),
		chromedp.SetValue(chromedp.CSS(`#destination-form input[name=folder]`), `\\`+lab.Getenv("SWLAB_SMB2_IP")+`\scans`),
		chromedp.Click(chromedp.CSS(`#destination-save`)), chromedp.WaitVisible(chromedp.CSS(`#password.bad .field-error`)))
	if d, err = st.Destinations().Destination(ctx, "labscans"); err != nil || d.Host != lab.DCHost {
		t.Fatalf("moved with its stored password: %+v %v", d, err)
	}

	// An imported contact whose password could not be read gets one; and
	// a contact whose names are markup and control characters.
	if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "imported1", Host: lab.DCHost, Share: "scans", User: lab.Domain + `\alice`,
		Device: "mfp-evil", Source: registry.SourceImported, AddressBookID: "7", DisplayName: "Reception",
		PasswordUnreadable: "encrypted with the device's own key"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "hostile", Host: "127.0.0.1", Share: "s", User: "\x1b[31mred\x07" + hostileName,
		Device: "mfp-evil", Source: registry.SourceImported, DisplayName: hostileName, Password: scanwarden.NewSecret("x")}); err != nil {
		t.Fatal(err)
	}
	do("destinations", chromedp.Navigate(base+"/destinations"), chromedp.WaitVisible(chromedp.CSS(`#destinations`)))
	if got := text(`tr[data-name=imported1] td.state`); !strings.Contains(got, "password unreadable — enter it") {
		t.Errorf("imported1's state: %q", got)
	}
	if !b.Escaped(t, hostileName) || !b.Escaped(t, `\x1b[31mred\x07`) {
		t.Error("the hostile display name or user is not shown as text, its control characters as escapes")
	}
	do("enter the password", chromedp.Click(chromedp.CSS(`tr[data-name=imported1] a[href$="/edit#password"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#password-unreadable`)),
		chromedp.SetValue(chromedp.CSS(`#destination-form input[name=password]`), lab.Password),
		chromedp.Click(chromedp.CSS(`#destination-save`)), chromedp.WaitVisible(chromedp.CSS(`#destination-edit`)))
	if d, err = st.Destinations().Destination(ctx, "imported1"); err != nil || d.PasswordUnreadable != "" || d.Password.Reveal() != lab.Password ||
		d.Source != registry.SourceImported || d.AddressBookID != "7" {
		t.Fatalf("imported1 after the password: %+v %v", d, err)
	}

	// The lists, sorted both ways by name.
	order := func(sel string) []string {
		names, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('`+sel+` tbody tr')).map(r => r.dataset.name)`))
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	do("destinations by name", chromedp.Navigate(base+"/destinations"), chromedp.Click(chromedp.CSS(`a[data-sort=name]`)),
		chromedp.WaitVisible(chromedp.CSS(`th[aria-sort=ascending] a[data-sort=name]`)))
	if got := order("#destinations"); strings.Join(got, ",") != "hostile,imported1,labscans" {
		t.Errorf("by name: %v", got)
	}
	do("destinations by name, descending", chromedp.Click(chromedp.CSS(`a[data-sort=name]`)),
		chromedp.WaitVisible(chromedp.CSS(`th[aria-sort=descending]`)))
	if got := order("#destinations"); strings.Join(got, ",") != "labscans,imported1,hostile" {
		t.Errorf("by name descending: %v", got)
	}
	b.Screenshot(t, shots, "manage-destinations", 1280)
	do("devices", chromedp.Navigate(base+"/devices"), chromedp.WaitVisible(chromedp.CSS(`#devices`)))
	if got := order("#devices"); strings.Join(got, ",") != "mfp-evil,mfp-lab" {
		t.Errorf("devices: %v", got)
	}
	if got := text(`tr[data-name=mfp-evil]`); !strings.Contains(got, hostileName) || !strings.Contains(got, "2") {
		t.Errorf("mfp-evil's row: %q", got)
	}
	if n, _ := b.Count(`main img, main script`); n != 0 {
		t.Errorf("%d img/script elements in the lists", n)
	}
	b.Screenshot(t, shots, "manage-devices", 1280)

	// A held scan for labscans: removing it asks; its scan goes to
	// imported1; removing imported1 discards it, file and row.
	rdir := filepath.Join(m.Config.DataDir, "receiver")
	os.MkdirAll(filepath.Join(rdir, "held", "2026-12-06"), 0o700)
	heldFile := filepath.Join(rdir, "held", "2026-12-06", "h1.pdf")
	os.WriteFile(heldFile, []byte("%PDF-1.4 held\n%%EOF\n"), 0o600)
	id, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "labscans", Folder: "labscans", File: "h1.pdf", Size: 20,
		State: receiver.Held, ReceivedAt: time.Now(), HeldPath: "held/2026-12-06/h1.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	do("remove labscans", chromedp.Navigate(base+"/destinations/labscans"), chromedp.Click(chromedp.CSS(`#destination-remove`)),
		chromedp.WaitVisible(chromedp.CSS(`#held`)), chromedp.Click(chromedp.CSS(`#destination-remove-confirm`)),
		chromedp.WaitVisible(chromedp.CSS(`#held .field-error`)))
	if _, err := st.Destinations().Destination(ctx, "labscans"); err != nil {
		t.Fatalf("removed without a choice for its held scan: %v", err)
	}
	b.Screenshot(t, shots, "manage-remove-held", 1280)
	do("remove labscans, deliver elsewhere", chromedp.Click(chromedp.CSS(`input[name=held][value=move]`)),
		chromedp.SetValue(chromedp.CSS(`select[name=to]`), "imported1"),
		chromedp.Click(chromedp.CSS(`#destination-remove-confirm`)), chromedp.WaitVisible(chromedp.CSS(`#destinations`)))
	if _, err := st.Destinations().Destination(ctx, "labscans"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("labscans after remove: %v", err)
	}
	if sc, err := st.Scans().Scan(ctx, id); err != nil || sc.Destination != "imported1" || sc.State != receiver.Held {
		t.Fatalf("the held scan: %+v %v", sc, err)
	}
	do("remove imported1, discard", chromedp.Navigate(base+"/destinations/imported1/remove"), chromedp.WaitVisible(chromedp.CSS(`#held`)),
		chromedp.Click(chromedp.CSS(`input[name=held][value=discard]`)),
		chromedp.Click(chromedp.CSS(`#destination-remove-confirm`)), chromedp.WaitVisible(chromedp.CSS(`#destinations`)))
	if _, err := st.Scans().Scan(ctx, id); err == nil {
		t.Error("the discarded scan is still catalogued")
	}
	if _, err := os.Stat(heldFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the discarded scan's file: %v", err)
	}

	// The device goes (it has no destination left).
	do("remove device", chromedp.Navigate(base+"/devices/mfp-lab"), chromedp.Click(chromedp.CSS(`#device-remove`)),
		chromedp.Click(chromedp.CSS(`#device-remove-confirm`)), chromedp.WaitVisible(chromedp.CSS(`#devices`)))
	if _, err := st.Devices().Device(ctx, "mfp-lab"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("mfp-lab after remove: %v", err)
	}

	// Every write is in the audit log; no secret is.
	audit, err := st.Auth().Audit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	var all strings.Builder
	for _, e := range audit {
		got[e.Action+" "+e.Target]++
		all.WriteString(e.Action + " " + e.Target + " " + e.Detail + "\n")
	}
	for k, n := range map[string]int{"device.add mfp-lab": 1, "device.edit mfp-lab": 1, "destination.test labscans": 2,
		"destination.add labscans": 1, "destination.edit labscans": 1, "destination.edit imported1": 1,
		"destination.remove labscans": 1, "destination.remove imported1": 1, "device.remove mfp-lab": 1} {
		if got[k] != n && !(k == "destination.test labscans" && got[k] >= n) {
			t.Errorf("audit: %d × %q, want %d", got[k], k, n)
		}
	}
	if s := all.String(); strings.Contains(s, lab.Password) || strings.Contains(s, community) {
		t.Errorf("a secret in the audit log:\n%s", s)
	}
	t.Logf("audit:\n%s", all.String())
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("dialogs fired: %v", d)
	}
}

// The same writes over the API: an admin token adds, changes and removes
// a device and a destination; a read token is refused (403); a bad value
// names its field (400); no secret comes back; each write is audited.
func TestWebManageAPI(t *testing.T) {
	m, base := openWebDaemon(t, registry.Destination{})
	ctx := context.Background()
	admin, err := web.CreateToken(ctx, m.Store().Auth(), "ops", "admin", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	read, err := web.CreateToken(ctx, m.Store().Auth(), "dash", "read", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	call := func(token, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	dev := `{"name": "mfp-api", "address": "127.0.0.1:9161", "community": "api-c0mm"}`
	if code, body := call(read, "/api/v1/devices", dev); code != http.StatusForbidden {
		t.Fatalf("read token adds a device: %d %s", code, body)
	}
	if code, body := call(admin, "/api/v1/devices", `{"name": "bad name"}`); code != http.StatusBadRequest || !strings.Contains(body, `"field": "name"`) {
		t.Fatalf("bad name: %d %s", code, body)
	}
	if code, body := call(admin, "/api/v1/devices", dev); code != http.StatusOK || strings.Contains(body, "api-c0mm") ||
		!strings.Contains(body, `"snmp_credentials": true`) {
		t.Fatalf("add device: %d %s", code, body)
	}
	if code, body := call(admin, "/api/v1/devices/mfp-api", `{"address": "127.0.0.2"}`); code != http.StatusBadRequest ||
		!strings.Contains(body, `"field": "community"`) {
		t.Fatalf("a move without credentials: %d %s", code, body)
	}
	// SNMPv3: a user needs both passphrases; another user, new ones.
	if code, body := call(admin, "/api/v1/devices", `{"name": "mfp-v3", "v3_user": "ops", "v3_auth": "auth-pass1"}`); code != http.StatusBadRequest ||
		!strings.Contains(body, `"field": "v3_priv"`) {
		t.Fatalf("v3 without a privacy passphrase: %d %s", code, body)
	}
	if code, body := call(admin, "/api/v1/devices", `{"name": "mfp-v3", "address": "127.0.0.1:9162", "v3_user": "ops", "v3_auth_proto": "SHA", "v3_auth": "auth-pass1", "v3_priv_proto": "AES", "v3_priv": "priv-pass1"}`); code != http.StatusOK ||
		strings.Contains(body, "pass1") || !strings.Contains(body, `"v3_user": "ops"`) {
		t.Fatalf("add a v3 device: %d %s", code, body)
	}
	if code, body := call(admin, "/api/v1/devices/mfp-v3", `{"v3_user": "other"}`); code != http.StatusBadRequest || !strings.Contains(body, `"field": "v3_auth"`) {
		t.Fatalf("another v3 user without passphrases: %d %s", code, body)
	}
	if code, body := call(admin, "/api/v1/devices/mfp-v3", `{"v3_user": "ops", "workstation": "MFPV3"}`); code != http.StatusOK {
		t.Fatalf("an edit keeping the v3 user: %d %s", code, body)
	}
	if d, err := m.Store().Devices().Device(ctx, "mfp-v3"); err != nil || d.SNMP.Version != "3" || d.SNMP.V3Priv.Reveal() != "priv-pass1" || d.Workstation != "MFPV3" {
		t.Fatalf("the v3 device: %+v %v", d, err)
	}
	dst := `{"name": "api-dest", "folder": "\\\\127.0.0.1\\scans\\in", "user": "KYOLAB\\alice", "password": "api-pw", "device": "mfp-api"}`
	if code, body := call(admin, "/api/v1/destinations", dst); code != http.StatusOK || strings.Contains(body, "api-pw") ||
		!strings.Contains(body, `"password_set": true`) {
		t.Fatalf("add destination: %d %s", code, body)
	}
	if code, body := call(admin, "/api/v1/destinations/api-dest", `{"folder": "//127.0.0.1/scans/out", "user": "alice"}`); code != http.StatusOK {
		t.Fatalf("change destination: %d %s", code, body)
	}
	d, err := m.Store().Destinations().Destination(ctx, "api-dest")
	if err != nil || d.Path != "out" || d.Password.Reveal() != "api-pw" || d.Device != "" {
		t.Fatalf("after the change: %+v %v", d, err)
	}
	// The stored password is never sent to another server.
	if code, body := call(admin, "/api/v1/destinations/api-dest", `{"folder": "//192.0.2.66/scans", "user": "alice"}`); code != http.StatusBadRequest ||
		!strings.Contains(body, `"field": "password"`) {
		t.Fatalf("moved to another server with the stored password: %d %s", code, body)
	}
	if d, err := m.Store().Destinations().Destination(ctx, "api-dest"); err != nil || d.Host != "127.0.0.1" {
		t.Fatalf("after the refused move: %+v %v", d, err)
	}
	if code, body := call(admin, "/api/v1/destinations/api-dest", `{"folder": "scans"}`); code != http.StatusBadRequest ||
		!strings.Contains(body, `"field": "folder"`) {
		t.Fatalf("a bad folder: %d %s", code, body)
	}
	// A held scan: removing asks what becomes of it; kept, it stays held
	// under the removed name.
	id, err := m.Store().Scans().AddScan(ctx, receiver.Scan{Destination: "api-dest", Folder: "api-dest", File: "k.pdf", Size: 1,
		State: receiver.Failed, ReceivedAt: time.Now(), HeldPath: "held/2026-12-06/k.pdf", Attempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := call(admin, "/api/v1/destinations/api-dest/remove", `{}`); code != http.StatusBadRequest || !strings.Contains(body, `"field": "held"`) {
		t.Fatalf("remove with a held scan and no choice: %d %s", code, body)
	}
	if code, body := call(admin, "/api/v1/destinations/api-dest/remove", `{"held": "move", "to": "api-dest"}`); code != http.StatusBadRequest ||
		!strings.Contains(body, `"field": "to"`) {
		t.Fatalf("moved to itself: %d %s", code, body)
	}
	if code, body := call(admin, "/api/v1/destinations/api-dest/remove", `{"held": "keep"}`); code != http.StatusOK {
		t.Fatalf("remove destination: %d %s", code, body)
	}
	if sc, err := m.Store().Scans().Scan(ctx, id); err != nil || sc.Destination != "api-dest" || sc.State != receiver.Failed {
		t.Fatalf("the kept scan: %+v %v", sc, err)
	}
	if code, body := call(admin, "/api/v1/devices/mfp-api/remove", `{}`); code != http.StatusOK {
		t.Fatalf("remove device: %d %s", code, body)
	}
	audit, err := m.Store().Auth().Audit(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for _, e := range audit {
		log.WriteString(e.Actor + " " + e.Action + " " + e.Target + " " + e.Detail + "\n")
	}
	for _, want := range []string{"device.add mfp-api", "destination.add api-dest", "destination.edit api-dest",
		"destination.remove api-dest", "device.remove mfp-api"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("audit lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "api-pw") || strings.Contains(log.String(), "api-c0mm") {
		t.Errorf("a secret in the audit:\n%s", log.String())
	}
}
