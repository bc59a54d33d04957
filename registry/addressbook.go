package registry

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/scanwarden/scanwarden"
)

// A Kyocera address book (Command Center RX → Address Book → Export, or
// KYOCERA Net Viewer) is one root element DeviceAddressBook_v5_2 (or another
// DeviceAddressBook_v*) holding flat <Item> elements: Type="Contact" with
// the destinations as attributes (DisplayName, MailAddress, SmbHostName,
// SmbPath, SmbLoginName, SmbLoginPasswd, SmbPort, Ftp…, Fax…), and
// Type="OneTouchKey" / Type="Group" items that point at contacts.

// Contact is one SMB contact of an address book.
type Contact struct {
	Line        int // line of its <Item> in the file
	ID          string
	DisplayName string
	Host        string
	Port        int // as stored; 0 when the field is empty (445)
	Share       string
	Path        string // below the share, "/" separated
	User        string // SmbLoginName exactly as stored
	Password    scanwarden.Secret
	// PasswordUnreadable says why SmbLoginPasswd could not be read (not the
	// device's encrypted hex form); the contact is imported without a
	// password. "" when it was read.
	PasswordUnreadable string
}

// AddressBook is what an export holds for scanwarden.
type AddressBook struct {
	Root     string    // the root element (format version)
	Contacts []Contact // SMB contacts, in file order
	Skipped  int       // contacts without an SMB destination (e-mail, FTP, fax only)
	Ignored  int       // items that are not contacts (one-touch keys, groups)
}

// Limits on an address book: far above what a device holds (a few thousand
// contacts), far below what could hurt.
const (
	MaxAddressBookSize = 16 << 20
	maxAttr            = 4096
	maxItems           = 100_000
	// MaxDepth is the deepest element nesting accepted (a device's export
	// is 2 deep: the root and its items); MaxAttrs the most attributes on
	// one element (a contact has about 40).
	MaxDepth = 8
	MaxAttrs = 256
)

// BookError is an address book that cannot be imported; it names the line
// and, when known, the contact.
type BookError struct {
	Line    int
	Contact string // `Id="…" DisplayName="…"`, "" when not inside a contact
	Err     error
}

func (e *BookError) Error() string {
	s := "address book"
	if e.Line > 0 {
		s += fmt.Sprintf(" line %d", e.Line)
	}
	if e.Contact != "" {
		s += " contact " + e.Contact
	}
	return s + ": " + e.Err.Error()
}

func (e *BookError) Unwrap() error { return e.Err }

var rootPattern = regexp.MustCompile(`^DeviceAddressBook_v[0-9]+(_[0-9]+)*$`)

// ErrTooLarge is the error of a file beyond MaxAddressBookSize.
var ErrTooLarge = fmt.Errorf("larger than %d MiB: not an address book", MaxAddressBookSize>>20)

// limitReader fails (instead of EOF) past its limit.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// ErrTooManyAttrs is the error of an element with more than MaxAttrs
// attributes.
var ErrTooManyAttrs = fmt.Errorf("more than %d attributes on one element", MaxAttrs)

// attrGuard counts the attributes of each tag in the raw bytes, before
// encoding/xml builds the tag (which it does whole, however many attributes
// it has): a tag with more than MaxAttrs is refused as it streams in, naming
// its line. An attribute is counted at its '=' outside quotes inside a tag;
// comments, CDATA and processing instructions are not tags here (their
// insides are skipped up to their own end).
type attrGuard struct {
	r     io.Reader
	line  int
	state int  // guardText, guardTag, guardQuote, guardSpecial
	quote byte // the open quote in guardQuote
	attrs int
	// In guardSpecial: the terminator awaited ("-->", "]]>", "?>" or
	// ">"), and how much of it has been seen.
	end  string
	seen int
	err  error
}

const (
	guardText = iota
	guardTag
	guardQuote
	guardSpecial
	guardOpen // just after '<'
	guardBang // after "<!"
)

func (g *attrGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			g.line++
		}
		switch g.state {
		case guardText:
			if b == '<' {
				g.state = guardOpen
			}
		case guardOpen:
			switch b {
			case '!':
				g.state = guardBang
			case '?':
				g.state, g.end, g.seen = guardSpecial, "?>", 0
			default:
				g.state, g.attrs = guardTag, 0
			}
		case guardBang:
			switch b {
			case '-':
				g.state, g.end, g.seen = guardSpecial, "-->", 0
			case '[':
				g.state, g.end, g.seen = guardSpecial, "]]>", 0
			default:
				g.state, g.end, g.seen = guardSpecial, ">", 0 // <!DOCTYPE …>
			}
		case guardSpecial:
			switch {
			case b == g.end[g.seen]:
				if g.seen++; g.seen == len(g.end) {
					g.state = guardText
				}
			case b == g.end[0]:
				g.seen = 1
			default:
				g.seen = 0
			}
		case guardTag:
			switch b {
			case '"', '\'':
				g.state, g.quote = guardQuote, b
			case '=':
				if g.attrs++; g.attrs > MaxAttrs {
					g.err = &BookError{Line: g.line, Err: ErrTooManyAttrs}
					return 0, g.err
				}
			case '>':
				g.state = guardText
			}
		case guardQuote:
			if b == g.quote {
				g.state = guardTag
			}
		}
	}
	return n, err
}

// ReadAddressBook reads a Kyocera address-book export. It reads at most
// MaxAddressBookSize bytes, expands no entity beyond XML's five (a
// "billion laughs" file is refused), refuses elements nested deeper than
// MaxDepth or carrying more than MaxAttrs attributes (both before the XML
// decoder spends memory on them), refuses over-long attributes, and
// checks every SMB contact completely (host, share, port) so that an import
// is all or nothing. Passwords are decoded (DecodePassword); a contact whose
// password cannot be decoded is kept without one (Contact.PasswordUnreadable).
func ReadAddressBook(r io.Reader) (*AddressBook, error) {
	dec := xml.NewDecoder(&attrGuard{r: &limitReader{r: r, n: MaxAddressBookSize}, line: 1})
	dec.Strict = true
	dec.CharsetReader = charsetReader
	b := &bookReader{dec: dec, book: &AddressBook{}, ids: map[string]int{}}
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, tokenError(dec, line, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := b.start(t, line); err != nil {
				return nil, err
			}
		case xml.EndElement:
			b.depth--
		case xml.Directive:
			// <!DOCTYPE …>: encoding/xml reads it as text and never expands
			// its entities; an entity used later is an error. Refuse any
			// internal subset outright.
			if bytes.Contains(t, []byte("ENTITY")) {
				return nil, &BookError{Line: line, Err: errors.New("the file declares entities (<!ENTITY>): an address book has none")}
			}
		}
	}
	if b.book.Root == "" {
		return nil, &BookError{Err: errors.New("no root element: empty or not XML")}
	}
	return b.book, nil
}

// tokenError is the BookError for the decoder's err, read at line (or
// where the decoder stopped, when it knows): the guard's own as it is,
// encoding/xml's cleaned.
func tokenError(dec *xml.Decoder, line int, err error) error {
	l, _ := dec.InputPos()
	if l == 0 {
		l = line
	}
	var be *BookError
	if errors.As(err, &be) {
		return be
	}
	return &BookError{Line: l, Err: cleanXMLError(err)}
}

// bookReader is ReadAddressBook's state: the book so far, the contacts'
// ids (each on its line), the depth and the items read.
type bookReader struct {
	dec          *xml.Decoder
	book         *AddressBook
	ids          map[string]int
	depth, items int
}

// start takes an element's start at line: the root, an <Item> (a contact
// kept, skipped or ignored), or anything else within the bounds.
func (b *bookReader) start(t xml.StartElement, line int) error {
	b.depth++
	if b.depth > MaxDepth {
		return &BookError{Line: line, Err: fmt.Errorf("element <%s> nested %d deep, more than %d: not an address book", clip(t.Name.Local), b.depth, MaxDepth)}
	}
	if len(t.Attr) > MaxAttrs {
		return &BookError{Line: line, Err: fmt.Errorf("element <%s> has %d attributes, more than %d", clip(t.Name.Local), len(t.Attr), MaxAttrs)}
	}
	if b.depth == 1 {
		if !rootPattern.MatchString(t.Name.Local) {
			return &BookError{Line: line, Err: fmt.Errorf("root element <%s>: not a Kyocera address book (want DeviceAddressBook_v…)", clip(t.Name.Local))}
		}
		b.book.Root = t.Name.Local
		return nil
	}
	if t.Name.Local != "Item" {
		return nil
	}
	if b.items++; b.items > maxItems {
		return &BookError{Line: line, Err: fmt.Errorf("more than %d items", maxItems)}
	}
	l, _ := b.dec.InputPos()
	c, isContact, smb, err := readItem(t, l)
	if err != nil {
		return err
	}
	switch {
	case !isContact:
		b.book.Ignored++
	case !smb:
		b.book.Skipped++
	default:
		if first, dup := b.ids[c.ID]; dup {
			return &BookError{Line: c.Line, Contact: c.label(), Err: fmt.Errorf("the Id %s repeats the contact on line %d", shownValue(clip(c.ID)), first)}
		}
		b.ids[c.ID] = c.Line
		b.book.Contacts = append(b.book.Contacts, c)
	}
	return nil
}

// readItem reads one <Item>: its contact, whether it is a contact at all,
// and whether it has an SMB destination.
func readItem(t xml.StartElement, line int) (Contact, bool, bool, error) {
	attrs := map[string]string{}
	for _, a := range t.Attr {
		if len(a.Value) > maxAttr {
			return Contact{}, false, false, &BookError{Line: line, Contact: itemLabel(t), Err: fmt.Errorf("attribute %s: %d bytes, more than %d", clip(a.Name.Local), len(a.Value), maxAttr)}
		}
		attrs[a.Name.Local] = a.Value
	}
	c := Contact{Line: line, ID: attrs["Id"], DisplayName: attrs["DisplayName"]}
	if attrs["Type"] != "Contact" {
		return c, false, false, nil
	}
	c.Host = strings.TrimSpace(attrs["SmbHostName"])
	smbPath := strings.TrimSpace(attrs["SmbPath"])
	if c.Host == "" && smbPath == "" {
		return c, true, false, nil
	}
	fail := func(format string, a ...any) (Contact, bool, bool, error) {
		return c, true, true, &BookError{Line: line, Contact: c.label(), Err: fmt.Errorf(format, a...)}
	}
	if strings.TrimSpace(c.ID) == "" {
		return fail("no Id")
	}
	for name, v := range attrs {
		if !utf8.ValidString(v) || strings.ContainsAny(v, "\x00") {
			return fail("attribute %s: not text", clip(name))
		}
	}
	if c.Host == "" {
		return fail("SmbPath is set but SmbHostName is empty")
	}
	parts := strings.FieldsFunc(smbPath, func(r rune) bool { return r == '\\' || r == '/' })
	if len(parts) == 0 {
		return fail("SmbPath %s names no share", shownValue(clip(smbPath)))
	}
	c.Share, c.Path = parts[0], strings.Join(parts[1:], "/")
	if p := strings.TrimSpace(attrs["SmbPort"]); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fail("SmbPort %s: not a port", shownValue(clip(p)))
		}
		c.Port = n
	}
	c.User = attrs["SmbLoginName"]
	if pw, err := DecodePassword(attrs["SmbLoginPasswd"]); err != nil {
		// Taken without it: the admin enters it (the check says so).
		c.PasswordUnreadable = "SmbLoginPasswd: " + err.Error()
	} else {
		c.Password = scanwarden.NewSecret(pw)
	}
	d := Destination{Name: "x", Host: c.Host, Port: c.Port, Share: c.Share, Path: c.Path, User: c.User,
		DisplayName: c.DisplayName, AddressBookID: c.ID, Source: SourceImported}
	if err := d.Validate(); err != nil {
		return fail("%w", err)
	}
	return c, true, true, nil
}

func (c Contact) label() string {
	return fmt.Sprintf("Id=%s DisplayName=%s", shownValue(clip(c.ID)), shownValue(clip(c.DisplayName)))
}

func itemLabel(t xml.StartElement) string {
	var id, name string
	for _, a := range t.Attr {
		switch a.Name.Local {
		case "Id":
			id = a.Value
		case "DisplayName":
			name = a.Value
		}
	}
	return Contact{ID: id, DisplayName: name}.label()
}

// clip shortens device-provided text quoted in an error.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	i := 64
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// cleanXMLError keeps encoding/xml's message but drops its own line prefix
// (BookError names the line).
func cleanXMLError(err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("not well-formed XML: %s", clip(se.Msg))
	}
	if errors.Is(err, ErrTooLarge) {
		return ErrTooLarge
	}
	return err
}

// charsetReader accepts the encodings an export may declare.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "latin1", "latin-1", "iso8859-1":
		return &latin1Reader{r: in}, nil
	}
	return nil, fmt.Errorf("encoding %s is not supported: save the export as UTF-8", shownValue(clip(label)))
}

type latin1Reader struct {
	r   io.Reader
	buf []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	if len(l.buf) == 0 {
		raw := make([]byte, (len(p)+1)/2)
		n, err := l.r.Read(raw)
		for _, b := range raw[:n] {
			l.buf = utf8.AppendRune(l.buf, rune(b))
		}
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}
