// Package registry is scanwarden's list of devices (the MFPs) and scan
// destinations (their SMB address-book contacts), as pure data: the types,
// the step from a stored destination to a scanwarden.Target, the Kyocera
// address-book import and fallback export, and Match, which finds the
// destination a device's send-failure text names. Package store keeps them
// (secrets sealed); nothing here speaks SQL or touches the network.
package registry

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
)

// Device is an MFP.
type Device struct {
	Name    string // unique, chosen by the admin
	Address string // HOST[:PORT] it answers SNMP on ("" when not polled)
	SNMP    SNMP
	// What SNMP learnt (filled in by the poller or by hand).
	Serial  string
	Model   string
	SysName string // the NetBIOS name it sends as NTLM workstation
	// Workstation overrides SysName as the name its destinations are
	// replayed with.
	Workstation string
	// Profile is its SMB client: set by the admin, seen on the fallback
	// share (Values, Client).
	Profile Profile
	Created time.Time
	Updated time.Time
}

// SNMP are a device's SNMP credentials. Secrets are sealed at rest.
type SNMP struct {
	Version     string            // "1", "2c" or "3"; "" for the poller's default
	Community   scanwarden.Secret // v1/v2c
	V3User      string
	V3AuthProto string // MD5, SHA, SHA256, … as snmp takes them
	V3Auth      scanwarden.Secret
	V3PrivProto string // DES, AES, …
	V3Priv      scanwarden.Secret
}

// WorkstationName is the NetBIOS name the device sends: the override, else
// its sysName ("" when unknown: smbcheck then sends its default).
func (d Device) WorkstationName() string {
	if d.Workstation != "" {
		return d.Workstation
	}
	return d.SysName
}

// Source tells how a destination came into the registry.
type Source string

// Sources.
const (
	SourceImported Source = "imported" // from a device's address-book export
	SourceAdded    Source = "added"    // by hand (CLI, web)
)

// Destination is one scan-to-folder destination exactly as the MFP stores
// it.
type Destination struct {
	Name     string // unique (case-insensitively), see ValidName
	Host     string // as stored on the device
	Port     int    // 0 = 445
	Share    string
	Path     string // folder below the share, "/" separated; "" = share root
	User     string // login user name exactly as stored ("" = anonymous)
	Password scanwarden.Secret
	Device   string // the device's name; "" when not tied to one
	// Workstation overrides the device's name for this destination.
	Workstation string
	// Auth is how the MFP logs on: ntlm ("" too, what MFPs send),
	// kerberos (a Kerberos-capable MFP) or auto (Kerberos, then NTLM).
	Auth          scanwarden.Auth
	AddressBookID string // the contact's Id in the device's address book
	DisplayName   string // the contact's DisplayName
	// PasswordUnreadable says why the address book's password could not be
	// read ("" : the password is known); the destination then has none
	// until one is entered, and its check says so without a logon.
	PasswordUnreadable string
	Source             Source
	Created            time.Time
	Updated            time.Time
	// BridgedAt is when the destination was bridged (zero: it is not): its
	// MFP scans to its folder on the fallback share and scanwarden's
	// forwarder delivers with scanwarden's own client, so its checks
	// replay that client, not the device's (Resolve).
	BridgedAt time.Time
}

// Bridged reports whether the destination is bridged.
func (d Destination) Bridged() bool { return !d.BridgedAt.IsZero() }

// Folder is the destination's folder name on the fallback share (receiver)
// and in exports: Folder(Name).
func (d Destination) Folder() string { return Folder(d.Name) }

// URL is //HOST[:PORT]/SHARE[/PATH].
func (d Destination) URL() string {
	s := "//" + d.Host
	if scanwarden.NonDefaultPort(d.Port) {
		s += fmt.Sprintf(":%d", d.Port)
	}
	s += "/" + d.Share
	if d.Path != "" {
		s += "/" + d.Path
	}
	return s
}

// PasswordUnreadableMark is how every output marks a destination whose
// imported password could not be read.
const PasswordUnreadableMark = "password unreadable — enter it"

// Target is what smbcheck replays: the stored fields, and as workstation the
// destination's override, else the device's (dev may be nil).
func (d Destination) Target(dev *Device) scanwarden.Target {
	ws := d.Workstation
	if ws == "" && dev != nil {
		ws = dev.WorkstationName()
	}
	return scanwarden.Target{
		Host: d.Host, Port: d.Port, Share: d.Share, Path: d.Path,
		User: d.User, Password: d.Password, Workstation: ws, Auth: d.Auth,
	}
}

// maxName is the longest destination or device name.
const maxName = 64

// badField is the *scanwarden.FieldError for a field of a device or
// destination that cannot be stored (the CLI, the web form and the importer
// each name the field in their own words). Its value shows quoted as typed —
// never Go-escaped: a path's backslashes stay single — and clipped; never a
// secret's.
func badField(field, value, reason string) error {
	var v any
	if value != "" {
		v = shownValue(clip(value))
	}
	return scanwarden.BadField(field, v, reason)
}

// shownValue prints in plain double quotes.
type shownValue string

func (s shownValue) String() string { return `"` + string(s) + `"` }

// ValidName reports whether name can name a destination or a device: 1 to
// 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit. Such a name is
// also a safe folder name and needs no quoting on a command line. The error
// is a *scanwarden.FieldError.
func ValidName(name string) error {
	if name == "" {
		return badField("name", "", "empty")
	}
	if len(name) > maxName {
		return badField("name", name, fmt.Sprintf("longer than %d characters", maxName))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			reason := "use ASCII letters a-z, digits and . _ - (starting with a letter or digit)"
			if slug := Slug(name); slug != "" && slug != name {
				reason += fmt.Sprintf(", e.g. %q", slug)
			}
			return badField("name", name, reason)
		}
	}
	return nil
}

// Folder makes a destination name safe as one folder name on the fallback
// share: a valid name (ValidName) is kept as it is; anything else becomes
// its slug. Stable: the same name always gives the same folder.
func Folder(name string) string {
	if ValidName(name) == nil {
		return name
	}
	if s := Slug(name); s != "" {
		return s
	}
	return "destination"
}

// Validate names the first field of a destination that cannot be stored
// (a *scanwarden.FieldError).
func (d Destination) Validate() error {
	if err := ValidName(d.Name); err != nil {
		return err
	}
	// Where and how it logs on: smbcheck's rules (an empty login is stored
	// as the device stores it: guest).
	t := d.Target(nil)
	t.User = "x"
	if err := t.Validate(); err != nil {
		var fe *scanwarden.FieldError
		if !errors.As(err, &fe) {
			return badField("destination", d.URL(), err.Error())
		}
		v := ""
		if fe.Value != nil {
			v = fmt.Sprint(fe.Value)
		}
		return badField(fe.Field, v, fe.Reason)
	}
	for _, f := range []struct{ name, v string }{{"host", d.Host}, {"share", d.Share}, {"user", d.User}, {"display_name", d.DisplayName}, {"address_book_id", d.AddressBookID}, {"path", d.Path}, {"workstation", d.Workstation}} {
		if len(f.v) > 1024 || !utf8.ValidString(f.v) || strings.ContainsAny(f.v, "\x00\r\n") {
			return badField(f.name, "", "too long, not UTF-8 or has control characters")
		}
	}
	switch d.Source {
	case SourceImported, SourceAdded:
	default:
		return badField("source", string(d.Source), "want "+string(SourceImported)+" or "+string(SourceAdded))
	}
	return nil
}

// Validate names the first field of a device that cannot be stored (a
// *scanwarden.FieldError).
func (d Device) Validate() error {
	if err := ValidName(d.Name); err != nil {
		return err
	}
	if strings.ContainsAny(d.Address, " \t/\\") {
		return badField("address", d.Address, "want HOST[:PORT]")
	}
	switch d.SNMP.Version {
	case "", "1", "2c", "3":
	default:
		return badField("snmp_version", d.SNMP.Version, "want 1, 2c or 3")
	}
	for _, f := range []struct{ name, v string }{{"address", d.Address}, {"serial", d.Serial}, {"model", d.Model}, {"sys_name", d.SysName}, {"workstation", d.Workstation}, {"snmp_v3_user", d.SNMP.V3User}} {
		if len(f.v) > 1024 || !utf8.ValidString(f.v) || strings.ContainsAny(f.v, "\x00\r\n") {
			return badField(f.name, "", "too long, not UTF-8 or has control characters")
		}
	}
	return d.Profile.Validate()
}

// Slug makes a readable, command-line friendly name out of free text (a
// contact's display name): lower case ASCII letters and digits, runs of
// anything else as one "-", common accented letters folded, at most 48
// characters. "" when nothing is left.
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		var out string
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			out = string(r)
		case r >= 'A' && r <= 'Z':
			out = string(r + 'a' - 'A')
		default:
			out = fold[r]
		}
		if out == "" {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteString(out)
		if b.Len() >= 48 {
			break
		}
	}
	s = b.String()
	if len(s) > 48 {
		s = s[:48]
	}
	return strings.TrimRight(s, "-")
}

var fold = func() map[rune]string {
	m := map[rune]string{'ß': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o", 'đ': "d", 'Đ': "d", 'ł': "l", 'Ł': "l", 'þ': "th", 'Þ': "th"}
	for base, letters := range map[string]string{
		"a": "àáâãäåāăąÀÁÂÃÄÅĀĂĄ", "c": "çćčÇĆČ", "e": "èéêëēėęěÈÉÊËĒĖĘĚ", "i": "ìíîïīįıÌÍÎÏĪĮİ",
		"n": "ñńňÑŃŇ", "o": "òóôõöōőÒÓÔÕÖŌŐ", "u": "ùúûüūůűųÙÚÛÜŪŮŰŲ", "y": "ýÿÝŸ", "s": "śšşŚŠŞ",
		"z": "źżžŹŻŽ", "r": "řŘ", "t": "ťţŤŢ", "g": "ğĞ", "d": "ďĎ", "l": "ľĺĽĹ",
	} {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()

// Report is one check of a destination as kept in its history.
type Report struct {
	ID          int64
	Destination string
	At          time.Time
	Cause       scanwarden.Cause
	KyoceraCode string
	Summary     string
	// Report is the whole report; JSON is it as stored (what --json printed).
	Report smbcheck.Report
	JSON   []byte
}

// HasSNMPCredentials says whether the device stores an SNMP secret (a
// community or v3 passphrases).
func (d Device) HasSNMPCredentials() bool {
	return !d.SNMP.Community.IsZero() || !d.SNMP.V3Auth.IsZero() || !d.SNMP.V3Priv.IsZero()
}

// SNMPTarget is the SNMP target of a device with an address: its version
// and credentials, community (the config's) when it has none. The error is
// the address's; the target is not validated.
func (d Device) SNMPTarget(community scanwarden.Secret) (snmp.Target, error) {
	host, port, err := snmp.ParseHostPort(d.Address)
	if err != nil {
		return snmp.Target{}, err
	}
	t := snmp.Target{Host: host, Port: port, Version: snmp.V2c, Community: community,
		Timeout: snmp.DefaultTimeout, Retries: snmp.DefaultRetries}
	switch d.SNMP.Version {
	case "1":
		t.Version = snmp.V1
	case "3":
		t.Version = snmp.V3
		t.V3 = &snmp.V3Auth{User: d.SNMP.V3User, AuthProto: d.SNMP.V3AuthProto, AuthPass: d.SNMP.V3Auth,
			PrivProto: d.SNMP.V3PrivProto, PrivPass: d.SNMP.V3Priv}
	}
	if !d.SNMP.Community.IsZero() {
		t.Community = d.SNMP.Community
	}
	return t, nil
}

// Over is d, a change to the stored device old, with what d leaves empty
// kept from old. Without new credentials (withCredentials false) old's
// stay — but only at the address they were given for: moving a device
// with stored credentials to another agent without giving them again is
// refused (a *scanwarden.FieldError on "community"), so they are never
// sent to an address they were not meant for.
func (d Device) Over(old Device, withCredentials bool) (Device, error) {
	for _, f := range []struct {
		dst *string
		old string
	}{
		{&d.Address, old.Address}, {&d.SysName, old.SysName}, {&d.Workstation, old.Workstation},
		{&d.Serial, old.Serial}, {&d.Model, old.Model},
	} {
		if *f.dst == "" {
			*f.dst = f.old
		}
	}
	if withCredentials {
		return d, nil
	}
	if old.HasSNMPCredentials() && d.Address != old.Address && !Address(d.Address).Same(Address(old.Address)) {
		return d, badField("community", "", fmt.Sprintf("the stored SNMP credentials were given for %s and are never sent to another address: give them again for %s", old.Address, d.Address))
	}
	v := d.SNMP.Version
	d.SNMP = old.SNMP
	if v != "" {
		d.SNMP.Version = v
	}
	return d, nil
}
