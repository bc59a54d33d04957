package registry

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
)

// Fallback is scanwarden's fallback share, as an MFP should reach it.
type Fallback struct {
	Host     string
	Port     int    // 0 = 445
	Share    string // "" = samba.DefaultShare
	User     string
	Password scanwarden.Secret
}

// shareAndPort is fb's share and port with the defaults filled in.
func (fb Fallback) shareAndPort() (string, int) {
	share := fb.Share
	if share == "" {
		share = samba.DefaultShare
	}
	return share, scanwarden.DialPort(fb.Port)
}

// FallbackContacts turns a device's destinations into address-book contacts
// that point at their folders on the fallback share
// (\\HOST\SHARE\<Folder(name)>), keeping each contact's Id and display name
// so the device matches them to its own. Destinations without an
// address-book Id (added by hand) get Ids after the highest numeric one.
func FallbackContacts(dests []Destination, fb Fallback) []Contact {
	share, port := fb.shareAndPort()
	next := 0
	for _, d := range dests {
		if n, err := strconv.Atoi(d.AddressBookID); err == nil && n > next {
			next = n
		}
	}
	var out []Contact
	for _, d := range dests {
		id := d.AddressBookID
		if id == "" {
			next++
			id = strconv.Itoa(next)
		}
		name := d.DisplayName
		if name == "" {
			name = d.Name
		}
		out = append(out, Contact{ID: id, DisplayName: name, Host: fb.Host, Port: port, Share: share,
			Path: d.Folder(), User: fb.User, Password: fb.Password})
	}
	sort.SliceStable(out, func(i, j int) bool { return idLess(out[i].ID, out[j].ID) })
	return out
}

func idLess(a, b string) bool {
	na, ea := strconv.Atoi(a)
	nb, eb := strconv.Atoi(b)
	if ea == nil && eb == nil {
		return na < nb
	}
	return a < b
}

// AddressBookRoot is the root element exports are written with.
const AddressBookRoot = "DeviceAddressBook_v5_2"

// WriteAddressBook writes contacts as a Kyocera address-book export
// (AddressBookRoot; each contact an <Item Type="Contact"> with the SMB
// fields set, the password encrypted the Kyocera way (EncodePassword), and
// the other fields at the defaults exports carry). The format was built from
// exports, not tested on a device.
func WriteAddressBook(w io.Writer, contacts []Contact) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n<" + AddressBookRoot + ">\n<!--Main Address Book-->\n")
	for _, c := range contacts {
		path := `\` + c.Share
		if c.Path != "" {
			path += `\` + strings.ReplaceAll(c.Path, "/", `\`)
		}
		port := ""
		if c.Port != 0 {
			port = strconv.Itoa(c.Port)
		}
		attrs := [][2]string{
			{"Type", "Contact"}, {"Id", c.ID}, {"DisplayName", c.DisplayName}, {"SendKeisyou", "0"},
			{"DisplayNameKana", c.DisplayName}, {"MailAddress", ""}, {"SendCorpName", ""}, {"SendPostName", ""},
			{"SmbHostName", c.Host}, {"SmbPath", path}, {"SmbLoginName", c.User},
			{"SmbLoginPasswd", EncodePassword(c.Password.Reveal())}, {"SmbPort", port},
			{"FtpPath", ""}, {"FtpHostName", ""}, {"FtpLoginName", ""}, {"FtpLoginPasswd", ""}, {"FtpPort", "21"},
			{"FaxNumber", ""}, {"FaxSubaddress", ""}, {"FaxPassword", ""}, {"FaxCommSpeed", "BPS_33600"},
			{"FaxECM", "On"}, {"FaxEncryptKeyNumber", "0"}, {"FaxEncryption", "Off"}, {"FaxEncryptBoxEnabled", "Off"},
			{"FaxEncryptBoxID", "0000"}, {"InetFAXAddr", ""}, {"InetFAXMode", "Simple"}, {"InetFAXResolution", "3"},
			{"InetFAXFileType", "TIFF_MH"}, {"IFaxSendModeType", "IFAX"}, {"InetFAXDataSize", "1"},
			{"InetFAXPaperSize", "1"}, {"InetFAXResolutionEnum", "Default"}, {"InetFAXPaperSizeEnum", "Default"},
		}
		bw.WriteString("<Item")
		for _, a := range attrs {
			bw.WriteString(" " + a[0] + `="`)
			if err := xml.EscapeText(bw, []byte(a[1])); err != nil {
				return err
			}
			bw.WriteString(`"`)
		}
		bw.WriteString("/>\n")
	}
	bw.WriteString("</" + AddressBookRoot + ">\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write address book: %w", err)
	}
	return nil
}

// RewriteForFallback copies an address-book export (the device's own, as
// imported) to w with every SMB contact pointed at its folder on the
// fallback share, and everything else — e-mail, FTP and fax fields, other
// contacts, one-touch keys, groups, comments — as it was, so the device's
// import changes nothing but the SMB destinations. folder gives a contact
// Id's fallback folder ("" : a known contact kept as it is, one not
// bridged when only the bridged are pointed there); a contact it does not
// know is an error (import the export first). The input is checked as
// ReadAddressBook checks it. It returns how many contacts were rewritten.
func RewriteForFallback(r io.Reader, w io.Writer, folder func(id string) (string, bool), fb Fallback) (int, error) {
	raw, err := io.ReadAll(&limitReader{r: r, n: MaxAddressBookSize})
	if err != nil {
		return 0, &BookError{Err: cleanXMLError(err)}
	}
	book, err := ReadAddressBook(bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	smb := map[string]bool{}
	for _, c := range book.Contacts {
		if _, ok := folder(c.ID); !ok {
			return 0, &BookError{Line: c.Line, Contact: c.label(), Err: errors.New("not in the registry for this device: import this export first")}
		}
		smb[c.ID] = true
	}
	share, port := fb.shareAndPort()
	dec := xml.NewDecoder(bytes.NewReader(raw))
	dec.Strict = true
	dec.CharsetReader = charsetReader
	bw := bufio.NewWriter(w)
	enc := xml.NewEncoder(bw)
	n := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, &BookError{Err: cleanXMLError(err)}
		}
		switch t := tok.(type) {
		case xml.ProcInst:
			if t.Target == "xml" {
				// The copy is UTF-8 whatever the original declared.
				t = xml.ProcInst{Target: "xml", Inst: []byte(`version="1.0" encoding="utf-8"`)}
			}
			tok = t
		case xml.StartElement:
			f, _ := folder(attr(t, "Id"))
			if t.Name.Local == "Item" && attr(t, "Type") == "Contact" && smb[attr(t, "Id")] && f != "" {
				t.Attr = fb.pointAt(t.Attr, share, port, f)
				n++
			}
			tok = t
		}
		if err := enc.EncodeToken(xml.CopyToken(tok)); err != nil {
			return 0, fmt.Errorf("write address book: %w", err)
		}
	}
	if err := enc.Flush(); err != nil {
		return 0, fmt.Errorf("write address book: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("write address book: %w", err)
	}
	return n, nil
}

// pointAt returns a contact's attributes with its SMB fields pointed at
// folder on the fallback share (share, port): a field the contact has is
// changed where it is, one it lacks is appended.
func (fb Fallback) pointAt(attrs []xml.Attr, share string, port int, folder string) []xml.Attr {
	set := map[string]string{
		"SmbHostName": fb.Host, "SmbPath": `\` + share + `\` + folder, "SmbLoginName": fb.User,
		"SmbLoginPasswd": EncodePassword(fb.Password.Reveal()), "SmbPort": strconv.Itoa(port),
	}
	out := make([]xml.Attr, 0, len(attrs)+len(set))
	for _, a := range attrs {
		if v, ok := set[a.Name.Local]; ok {
			a.Value = v
			delete(set, a.Name.Local)
		}
		out = append(out, a)
	}
	for _, k := range []string{"SmbHostName", "SmbPath", "SmbLoginName", "SmbLoginPasswd", "SmbPort"} {
		if v, ok := set[k]; ok {
			out = append(out, xml.Attr{Name: xml.Name{Local: k}, Value: v})
		}
	}
	return out
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
