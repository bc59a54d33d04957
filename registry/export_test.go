package registry

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
)

func TestFallbackExportRoundTrip(t *testing.T) {
	b := readFixture(t)
	p := PlanImport("mfp01", nil, b)
	dests := append(p.Put, Destination{Name: "by-hand", Host: "h", Share: "s", Source: SourceAdded})
	fb := Fallback{Host: "scanwarden.kyolab.test", Port: 445, User: `SCANWARDEN\mfp`, Password: scanwarden.NewSecret(`Fallback&<"Pw`)}
	var buf bytes.Buffer
	if err := WriteAddressBook(&buf, FallbackContacts(dests, fb)); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte(fb.Password.Reveal())) {
		t.Fatal("the fallback password is in clear in the export")
	}
	back, err := ReadAddressBook(&buf)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if len(back.Contacts) != len(dests) {
		t.Fatalf("%d contacts back, want %d", len(back.Contacts), len(dests))
	}
	byID := map[string]Contact{}
	for _, c := range back.Contacts {
		byID[c.ID] = c
		if c.Host != fb.Host || c.Port != 445 || c.Share != "scans" || c.User != fb.User || c.Password.Reveal() != fb.Password.Reveal() {
			t.Errorf("contact %+v", c)
		}
	}
	for _, d := range p.Put {
		c, ok := byID[d.AddressBookID]
		want := d.DisplayName
		if want == "" {
			want = d.Name
		}
		if !ok || c.Path != d.Folder() || c.DisplayName != want {
			t.Errorf("destination %s: contact %+v", d.Name, c)
		}
	}
	if c := byID["12"]; c.Path != "by-hand" || c.DisplayName != "by-hand" {
		t.Errorf("hand-added destination: %+v", c)
	}
}

func FuzzReadAddressBook(f *testing.F) {
	seed, err := os.ReadFile("testdata/addressbook.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(head + contact(`SmbHostName="h" SmbPath="\s\x" SmbLoginPasswd="ED1CE55E30053916"`) + tail))
	f.Add([]byte("<DeviceAddressBook_v1><Item Type=\"Contact\" Id=\"\" SmbHostName=\"&amp;\"/></DeviceAddressBook_v1>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ReadAddressBook(bytes.NewReader(data))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error: %q", err)
			}
			return
		}
		// Whatever is accepted is storable, and survives an export.
		p := PlanImport("dev", nil, b)
		for _, d := range p.Put {
			if err := d.Validate(); err != nil {
				t.Fatalf("accepted contact does not validate: %v (%+v)", err, d)
			}
		}
		var buf bytes.Buffer
		var cs []Contact
		for _, c := range b.Contacts {
			c.Port = 445
			cs = append(cs, c)
		}
		if err := WriteAddressBook(&buf, cs); err != nil {
			t.Fatal(err)
		}
		back, err := ReadAddressBook(&buf)
		if err != nil {
			t.Fatalf("own export refused: %v\n%s", err, buf.String())
		}
		if len(back.Contacts) != len(cs) {
			t.Fatalf("%d contacts back, want %d", len(back.Contacts), len(cs))
		}
		for i, c := range back.Contacts {
			w := cs[i]
			if c.ID != w.ID || c.Host != w.Host || c.Share != w.Share || c.Path != w.Path || c.User != w.User ||
				c.Password.Reveal() != w.Password.Reveal() || c.DisplayName != w.DisplayName {
				t.Fatalf("round trip:\n got %+v\nwant %+v", c, w)
			}
		}
	})
}

func TestRewriteForFallback(t *testing.T) {
	orig, err := os.ReadFile("testdata/addressbook.xml")
	if err != nil {
		t.Fatal(err)
	}
	p := PlanImport("mfp01", nil, readFixture(t))
	folders := map[string]string{}
	for _, d := range p.Put {
		folders[d.AddressBookID] = d.Folder()
	}
	fb := Fallback{Host: "sw", User: "mfp", Password: scanwarden.NewSecret("Fb-Pw-1")}
	var out bytes.Buffer
	n, err := RewriteForFallback(bytes.NewReader(orig), &out, func(id string) (string, bool) { f, ok := folders[id]; return f, ok }, fb)
	if err != nil || n != 10 {
		t.Fatalf("rewrote %d: %v", n, err)
	}
	s := out.String()
	for _, keep := range []string{`MailAddress="erin@kyolab.test"`, `Type="OneTouchKey"`, `Type="Group"`, "Main Address Book", `FaxCommSpeed="BPS_33600"`, `MailAddress="alice@kyolab.test"`} {
		if !strings.Contains(s, keep) {
			t.Errorf("lost %s:\n%s", keep, s)
		}
	}
	if strings.Contains(s, "Fb-Pw-1") || strings.Contains(s, "3E137D64E18568669A28709251B1404A") {
		t.Error("a password in clear, or an original password, is left")
	}
	back, err := ReadAddressBook(&out)
	if err != nil || len(back.Contacts) != 10 || back.Skipped != 1 || back.Ignored != 2 {
		t.Fatalf("read back: %+v %v", back, err)
	}
	for _, c := range back.Contacts {
		if c.Host != "sw" || c.Port != 445 || c.Share != "scans" || c.Path != folders[c.ID] || c.User != "mfp" || c.Password.Reveal() != "Fb-Pw-1" {
			t.Errorf("contact %+v", c)
		}
	}
	delete(folders, "2")
	if _, err := RewriteForFallback(bytes.NewReader(orig), &out, func(id string) (string, bool) { f, ok := folders[id]; return f, ok }, fb); err == nil || !strings.Contains(err.Error(), `Id="2"`) {
		t.Errorf("unknown contact: %v", err)
	}
}
