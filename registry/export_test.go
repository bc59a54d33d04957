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
