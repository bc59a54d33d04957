package registry

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

func readFixture(t *testing.T) *AddressBook {
	t.Helper()
	f, err := os.Open("testdata/addressbook.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := ReadAddressBook(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadAddressBookFixture(t *testing.T) {
	b := readFixture(t)
	if b.Root != "DeviceAddressBook_v5_2" || len(b.Contacts) != 10 || b.Skipped != 1 || b.Ignored != 2 {
		t.Fatalf("root %s, %d contacts, %d skipped, %d ignored", b.Root, len(b.Contacts), b.Skipped, b.Ignored)
	}
	want := []struct {
		id, host string
		port     int
		share    string
		path     string
		user     string
		pw       string
	}{
		{"1", "fs01.kyolab.test", 445, "scans", "alice", `KYOLAB\alice`, "Scan-Alice-1"},
		{"2", "fs01", 139, "scans", "bob/in box", "bob", `Bob&<pw>"1`},
		{"3", "10.77.0.10", 445, "scans", "", "carol@kyolab.test", "upn-Pw-4"},
		{"4", "fs02", 445, "scans", "dot", `.\scan`, "dot-Pw-5"},
		{"5", "fs02", 0, "scans", "host", `FS02\scan`, "host-Pw-6"},
		{"6", "fs01", 445, "scans", "ka", "swb", "swb333"},
		{"7", "nas01", 445, "public", "scans", "", ""},
		{"9", "fs01", 445, "scans", "alice2", "alice", "Pässwörd-3"},
		{"10", "fs01", 445, "scans", "keiri", "keiri", "swb333"},
		{"11", "fs01", 445, "scans", "noname", "x", "swb333"},
	}
	for i, w := range want {
		c := b.Contacts[i]
		if c.ID != w.id || c.Host != w.host || c.Port != w.port || c.Share != w.share || c.Path != w.path ||
			c.User != w.user || c.Password.Reveal() != w.pw || c.Line == 0 {
			t.Errorf("contact %d: %+v (password ok: %v), want %+v", i, c, c.Password.Reveal() == w.pw, w)
		}
	}
	if b.Contacts[1].DisplayName != `Bob "the scanner" <O'Neil> & Co` || b.Contacts[8].DisplayName != "経理部 スキャン" {
		t.Errorf("display names %q %q", b.Contacts[1].DisplayName, b.Contacts[8].DisplayName)
	}
}

const head = `<?xml version="1.0"?>` + "\n<DeviceAddressBook_v5_2>\n"
const tail = "</DeviceAddressBook_v5_2>\n"

func contact(attrs string) string {
	return `<Item Type="Contact" Id="1" DisplayName="A" ` + attrs + "/>\n"
}

func TestReadAddressBookRefuses(t *testing.T) {
	laughs := `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<DeviceAddressBook_v5_2><Item Type="Contact" Id="1" DisplayName="&lol3;" SmbHostName="h" SmbPath="\s"/></DeviceAddressBook_v5_2>`
	cases := []struct {
		name, file string
		line       int
		want       string // in the message
	}{
		{"not XML", "this is not xml", 0, "no root element"},
		{"empty", "", 0, "no root element"},
		{"other root", `<?xml version="1.0"?><html><body/></html>`, 1, "not a Kyocera address book"},
		{"billion laughs", laughs, 2, "entities"},
		{"undeclared entity", head + contact(`SmbHostName="&lol;" SmbPath="\s"`) + tail, 3, "not well-formed"},
		{"no share", head + contact(`SmbHostName="h" SmbPath="\"`) + tail, 3, "names no share"},
		{"no host", head + contact(`SmbPath="\s"`) + tail, 3, "SmbHostName is empty"},
		{"bad port", head + contact(`SmbHostName="h" SmbPath="\s" SmbPort="99999"`) + tail, 3, "not a port"},
		{"dot dot", head + contact(`SmbHostName="h" SmbPath="\s\..\x"`) + tail, 3, ".."},
		{"duplicate id", head + contact(`SmbHostName="h" SmbPath="\s"`) + contact(`SmbHostName="h" SmbPath="\t"`) + tail, 4, "repeats"},
		{"long attribute", head + contact(`SmbHostName="h" SmbPath="\s" SmbLoginName="`+strings.Repeat("u", 5000)+`"`) + tail, 3, "more than 4096"},
		{"truncated", head + contact(`SmbHostName="h" SmbPath="\s"`), 4, "not well-formed"},
		{"unsupported encoding", `<?xml version="1.0" encoding="Shift_JIS"?><DeviceAddressBook_v5_2/>`, 1, "not supported"},
		{"host with slash", head + contact(`SmbHostName="h/x" SmbPath="\s"`) + tail, 3, "host"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadAddressBook(strings.NewReader(c.file))
			var be *BookError
			if !errors.As(err, &be) {
				t.Fatalf("err %v, want a BookError", err)
			}
			if be.Line != c.line || !strings.Contains(err.Error(), c.want) {
				t.Errorf("line %d %q, want line %d and %q", be.Line, err, c.line, c.want)
			}
			if c.name == "bad port" {
				if !strings.Contains(err.Error(), `Id="1"`) {
					t.Errorf("error does not name the contact: %v", err)
				}
			}
		})
	}
}

// hugeReader is an address book whose one attribute never ends (1 GB+).
type hugeReader struct {
	head string
	n    int64
}

func (h *hugeReader) Read(p []byte) (int, error) {
	if h.head != "" {
		n := copy(p, h.head)
		h.head = h.head[n:]
		return n, nil
	}
	if h.n <= 0 {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'a'
	}
	h.n -= int64(len(p))
	return len(p), nil
}

func TestReadAddressBookHugeAttribute(t *testing.T) {
	r := &hugeReader{head: head + `<Item Type="Contact" Id="1" DisplayName="`, n: 1 << 30}
	_, err := ReadAddressBook(r)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v", err)
	}
	if r.n < 1<<30-2*MaxAddressBookSize {
		t.Fatalf("read %d bytes of the attribute", 1<<30-r.n)
	}
}

func TestReadAddressBookLatin1(t *testing.T) {
	file := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<DeviceAddressBook_v4_0>" +
		"<Item Type=\"Contact\" Id=\"7\" DisplayName=\"J\xfcrgen\" SmbHostName=\"h\" SmbPath=\"\\s\" SmbLoginName=\"j\" SmbLoginPasswd=\"\"/></DeviceAddressBook_v4_0>"
	b, err := ReadAddressBook(strings.NewReader(file))
	if err != nil || len(b.Contacts) != 1 || b.Contacts[0].DisplayName != "Jürgen" {
		t.Fatalf("%+v %v", b, err)
	}
}

func TestPlanImport(t *testing.T) {
	b := readFixture(t)
	hand := Destination{Name: "alice-muller", Host: "x", Share: "s", Source: SourceAdded}
	p := PlanImport("mfp01", []Destination{hand}, b)
	names := map[string]string{}
	for i, d := range p.Put {
		if !p.New[i] || d.Device != "mfp01" || d.Source != SourceImported || ValidName(d.Name) != nil {
			t.Errorf("put %+v new=%v", d, p.New[i])
		}
		if other, dup := names[strings.ToLower(d.Name)]; dup {
			t.Errorf("name %s given twice (%s)", d.Name, other)
		}
		names[strings.ToLower(d.Name)] = d.AddressBookID
	}
	for id, want := range map[string]string{"1": "alice-muller-mfp01", "9": "alice-muller-2", "2": "bob-the-scanner-o-neil-co", "10": "contact-10", "11": "contact-11"} {
		found := false
		for _, d := range p.Put {
			if d.AddressBookID == id {
				found = true
				if d.Name != want {
					t.Errorf("contact %s named %s, want %s", id, d.Name, want)
				}
			}
		}
		if !found {
			t.Errorf("contact %s not planned", id)
		}
	}
	if p.Put[4].Port != 445 {
		t.Errorf("empty SmbPort stored as %d", p.Put[4].Port)
	}

	// Re-import: the same names, nothing new; a contact gone is removed;
	// another device's destinations and hand-added ones are untouched.
	existing := append([]Destination{hand}, p.Put...)
	existing = append(existing, Destination{Name: "other", Device: "mfp02", AddressBookID: "3", Source: SourceImported})
	b2 := *b
	b2.Contacts = append([]Contact(nil), b.Contacts[1:]...)
	b2.Contacts[0].DisplayName = "Bob renamed"
	p2 := PlanImport("MFP01", existing, &b2)
	if len(p2.Removed) != 1 || p2.Removed[0].AddressBookID != "1" {
		t.Fatalf("removed %+v", p2.Removed)
	}
	for i, d := range p2.Put {
		if p2.New[i] || d.Name != p.Put[i+1].Name {
			t.Errorf("re-import %d: %s new=%v, was %s", i, d.Name, p2.New[i], p.Put[i+1].Name)
		}
	}
	if p2.Put[0].DisplayName != "Bob renamed" {
		t.Errorf("display name not updated: %q", p2.Put[0].DisplayName)
	}
}

func TestSlugAndFolder(t *testing.T) {
	for in, want := range map[string]string{
		"Alice Müller":          "alice-muller",
		"  --Straße / Øre-- ":   "strasse-ore",
		"経理部":                   "",
		"a\x00b":                "a-b",
		strings.Repeat("x", 90): strings.Repeat("x", 48),
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"alice": "alice", "A.b_c-1": "A.b_c-1", "../etc": "etc", "経理": "destination", "a b": "a-b"} {
		if got := Folder(in); got != want {
			t.Errorf("Folder(%q) = %q, want %q", in, got, want)
		}
	}
}

// Nesting and attribute floods are refused with the line and the reason,
// before they cost memory (8 MiB of nested elements used to take 319 MB).
func TestAttackAddressBookNestingAndAttributes(t *testing.T) {
	head := "<?xml version=\"1.0\"?>\n<!-- a comment with a=b c=\"d\" > -->\n<DeviceAddressBook_v5_2>\n"
	deep := head + strings.Repeat("<a>", 4<<20/3) + strings.Repeat("</a>", 4<<20/3) + "</DeviceAddressBook_v5_2>"
	var many strings.Builder
	many.WriteString(head + "<Item Type=\"Contact\" Id=\"1\"\n")
	for i := 0; i < 200_000; i++ {
		fmt.Fprintf(&many, " a%d=\"x=y\"", i)
	}
	many.WriteString("/>\n</DeviceAddressBook_v5_2>")
	for _, c := range []struct {
		name, xml string
		line      int
		want      string
	}{
		{"4 MiB of nested elements", deep, 4, "nested 9 deep, more than 8"},
		{"200,000 attributes on one item", many.String(), 5, "more than 256 attributes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := ReadAddressBook(strings.NewReader(c.xml))
			runtime.ReadMemStats(&after)
			var be *BookError
			if !errors.As(err, &be) || be.Line != c.line || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want line %d: %s", err, c.line, c.want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("allocated %d MiB reading a %d MiB file", grew>>20, len(c.xml)>>20)
			}
		})
	}
	// A book at the limits is read: 8 deep, 256 attributes.
	var ok strings.Builder
	ok.WriteString(head + "<x><x><x><x><x><x><Item Type=\"Contact\" Id=\"1\" DisplayName=\"A\" SmbHostName=\"fs1\" SmbPath=\"scans\" SmbLoginName=\"u\"")
	for i := 0; i < MaxAttrs-6; i++ {
		fmt.Fprintf(&ok, " z%d=\"\"", i)
	}
	ok.WriteString("/></x></x></x></x></x></x>\n</DeviceAddressBook_v5_2>")
	if b, err := ReadAddressBook(strings.NewReader(ok.String())); err != nil || len(b.Contacts) != 1 {
		t.Fatalf("a book at the limits: %v", err)
	}
}

// TestReadAddressBookUnreadablePassword: a contact whose password is not in
// the device's encrypted hex form (a generator script's, an odd firmware's)
// is taken without a password, saying why; the contacts around it are
// read as usual.
func TestReadAddressBookUnreadablePassword(t *testing.T) {
	for _, c := range []struct{ name, pw, why string }{
		{"bad hex", "XYZ1", "not hex"},
		{"plain text", "Summer2026!", "not hex"},
		{"wrong length", "ED1CE55E300539", "8-byte DES blocks"},
		{"bad padding", "0000000000000000", "padding"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := head + "<!-- written by a script -->\n" +
				`<Item Type="Contact" Id="1" DisplayName="ok1" SmbHostName="h" SmbPath="\s\a" SmbLoginName="u" SmbLoginPasswd="ED1CE55E30053916"/>` + "\n" +
				`<Item Type="Contact" Id="2" DisplayName="odd" SmbHostName="h" SmbPath="\s\b" SmbLoginName="u" SmbLoginPasswd="` + c.pw + `"/>` + "\n" +
				`<Item Type="Contact" Id="3" DisplayName="mail only" MailAddress="m@x.test"/>` + "\n" +
				`<Item Type="OneTouchKey" Id="1" AddressId="1" AddressType="SMB" DisplayName="ok1"/>` + "\n" +
				`<Item Type="Contact" Id="4" DisplayName="ok2" SmbHostName="h" SmbPath="\s\c" SmbLoginName="u" SmbLoginPasswd="ED1CE55E30053916"/>` + "\n" + tail
			book, err := ReadAddressBook(strings.NewReader(file))
			if err != nil {
				t.Fatalf("refused whole: %v", err)
			}
			if len(book.Contacts) != 3 || book.Skipped != 1 || book.Ignored != 1 {
				t.Fatalf("contacts %d skipped %d ignored %d, want 3, 1, 1", len(book.Contacts), book.Skipped, book.Ignored)
			}
			odd := book.Contacts[1]
			if odd.ID != "2" || !odd.Password.IsZero() || !strings.Contains(odd.PasswordUnreadable, c.why) ||
				!strings.HasPrefix(odd.PasswordUnreadable, "SmbLoginPasswd: ") {
				t.Errorf("odd contact: id %s, password set %v, unreadable %q (want %q)", odd.ID, !odd.Password.IsZero(), odd.PasswordUnreadable, c.why)
			}
			if strings.Contains(odd.PasswordUnreadable, c.pw) {
				t.Errorf("the reason repeats the stored value: %q", odd.PasswordUnreadable)
			}
			for _, i := range []int{0, 2} {
				if got := book.Contacts[i]; got.PasswordUnreadable != "" || got.Password.Reveal() != "swb333" {
					t.Errorf("contact %s: unreadable %q", got.ID, got.PasswordUnreadable)
				}
			}
			plan := PlanImport("mfp01", nil, book)
			if plan.Put[1].PasswordUnreadable != odd.PasswordUnreadable || plan.Put[0].PasswordUnreadable != "" {
				t.Errorf("plan: %q / %q", plan.Put[1].PasswordUnreadable, plan.Put[0].PasswordUnreadable)
			}
		})
	}
}
