package registry

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// ProfileField names one ability of a device's SMB client.
type ProfileField string

// The fields of a device's SMB profile. Each value is a short word:
// dialects as smbcheck.ParseDialect writes them (SMB1, 2.0.2, 2.1, 3.0,
// 3.0.2, 3.1.1), yes/no, v1/v2, a file type (pdf, tiff, jpeg, xps, oxps).
const (
	FieldMaxDialect ProfileField = "max_dialect" // the highest dialect it speaks
	FieldMinDialect ProfileField = "min_dialect" // the lowest
	FieldSigning    ProfileField = "signing"     // yes: it signs when the server requires it
	FieldEncryption ProfileField = "encryption"  // yes: it can encrypt (SMB 3)
	FieldNTLM       ProfileField = "ntlm"        // v1 or v2
	FieldKerberos   ProfileField = "kerberos"    // yes: it can log on with Kerberos
	FieldFileType   ProfileField = "file_type"   // what it scans to
)

// ProfileFields are the fields in the order every output shows them.
var ProfileFields = []ProfileField{FieldMaxDialect, FieldMinDialect, FieldSigning, FieldEncryption, FieldNTLM, FieldKerberos, FieldFileType}

// Origin is where a profile value came from.
type Origin string

// Origins, strongest first: the admin's setting wins over what was seen
// until it is cleared; what was seen wins over the model family's default.
const (
	OriginAdmin   Origin = "admin"   // set by hand (device add, the device page)
	OriginSeen    Origin = "seen"    // the device's own logon on the fallback share
	OriginDefault Origin = "default" // the default for its model family
	OriginUnknown Origin = "unknown" // nothing known: the check uses scanwarden's own client
)

// Observed is a value seen on the fallback share: when, and in which
// session (its address, dialect, workstation and user, as smbd logged
// them).
type Observed struct {
	Value   string
	At      time.Time
	Session string
}

// Profile is what is stored about a device's SMB client: the admin's
// settings and what its own logons on the fallback share showed. The
// zero Profile knows nothing.
type Profile struct {
	Admin map[ProfileField]string
	Seen  map[ProfileField]Observed
	// Shown only: the NetBIOS name and the user name form it sent there.
	Workstation Observed
	UserForm    Observed
}

// ProfileValue is one field's value as a check uses it, with its origin;
// where the admin's setting hides what was seen, Seen still shows it.
type ProfileValue struct {
	Field   ProfileField `json:"field"`
	Value   string       `json:"value"` // "" when unknown
	Origin  Origin       `json:"origin"`
	SeenAt  *time.Time   `json:"seen_at,omitempty"`
	Session string       `json:"session,omitempty"`
	Seen    string       `json:"seen,omitempty"` // what was seen, when the admin's setting differs
	Note    string       `json:"note,omitempty"` // why a default is what it is
}

// ParseProfileValue reads one value of field as an admin types it and
// returns its one spelling; the error is a *scanwarden.FieldError naming
// the field as device_<field>.
func ParseProfileValue(field ProfileField, s string) (string, error) {
	name := "device_" + string(field)
	t := strings.ToLower(strings.TrimSpace(s))
	yesNo := func() (string, error) {
		switch t {
		case "yes", "true", "on", "1":
			return "yes", nil
		case "no", "false", "off", "0":
			return "no", nil
		}
		return "", scanwarden.BadField(name, s, "want yes or no")
	}
	switch field {
	case FieldMaxDialect, FieldMinDialect:
		d, err := smbcheck.ParseDialect(s)
		if err != nil || d == 0 {
			return "", scanwarden.BadField(name, s, "want SMB1, 2.0.2, 2.1, 3.0, 3.0.2 or 3.1.1")
		}
		return d.String(), nil
	case FieldSigning, FieldEncryption, FieldKerberos:
		return yesNo()
	case FieldNTLM:
		switch strings.TrimPrefix(t, "ntlm") {
		case "v1", "1":
			return "v1", nil
		case "v2", "2":
			return "v2", nil
		}
		return "", scanwarden.BadField(name, s, "want v1 or v2")
	case FieldFileType:
		f, err := smbcheck.ParseFileType(s)
		if err != nil || f == "" {
			return "", scanwarden.BadField(name, s, "want pdf, tiff, jpeg, xps or oxps (a high-compression PDF is pdf)")
		}
		return f.String(), nil
	}
	return "", scanwarden.BadField("device_profile", string(field), "not a profile field")
}

// ParseProfileField reads a field's name (max_dialect, max-dialect, …).
func ParseProfileField(s string) (ProfileField, error) {
	f := ProfileField(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_"))
	for _, k := range ProfileFields {
		if f == k {
			return f, nil
		}
	}
	names := make([]string, len(ProfileFields))
	for i, k := range ProfileFields {
		names[i] = string(k)
	}
	return "", scanwarden.BadField("device_profile", s, "not a profile field ("+strings.Join(names, ", ")+")")
}

// familyDefault is the default of a field for a model family, with the
// source that states it. No Kyocera document found here states what its
// SMB client speaks (dialects, signing, encryption, NTLM level, Kerberos)
// by model or firmware, so those stay unknown and the check replays
// scanwarden's own client, stating what the server demands. The file type
// is PDF: what the issue takes as an MFP's usual scan format.
func familyDefault(model string, f ProfileField) (value, note string) {
	if f == FieldFileType {
		return string(smbcheck.DefaultFileType), "the usual scan format; one scan to the fallback share shows the device's own"
	}
	return "", ""
}

// maxSeen bounds a seen value and its session text (device-provided).
const maxSeen = 256

// cleanSeen is a device-provided text fit to store and show: valid
// UTF-8, no control characters, at most maxSeen bytes.
func cleanSeen(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "?")
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
	for len(s) > maxSeen {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}

// Validate names the first admin setting that cannot be stored or
// replayed (a *scanwarden.FieldError naming device_<field>).
func (p Profile) Validate() error {
	for f, v := range p.Admin {
		w, err := ParseProfileValue(f, v)
		if err != nil {
			return err
		}
		if w != v {
			return scanwarden.BadField("device_"+string(f), v, "not in its one spelling ("+w+")")
		}
	}
	return nil
}

// Values is the device's profile as a check uses it: for each field the
// admin's setting, else what was seen, else its model family's default,
// else unknown.
func (d Device) Values() []ProfileValue {
	out := make([]ProfileValue, 0, len(ProfileFields))
	for _, f := range ProfileFields {
		v := ProfileValue{Field: f, Origin: OriginUnknown}
		seen, hasSeen := d.Profile.Seen[f]
		if hasSeen && seen.Value != "" {
			at := seen.At
			v.SeenAt, v.Session = &at, seen.Session
		} else {
			hasSeen = false
		}
		switch a := d.Profile.Admin[f]; {
		case a != "":
			v.Value, v.Origin = a, OriginAdmin
			if hasSeen && seen.Value != a {
				v.Seen = seen.Value
			}
		case hasSeen:
			v.Value, v.Origin = seen.Value, OriginSeen
		default:
			if def, note := familyDefault(d.Model, f); def != "" {
				v.Value, v.Origin, v.Note = def, OriginDefault, note
			}
		}
		out = append(out, v)
	}
	return out
}

// Learned reports whether anything of the profile was seen on the
// fallback share.
func (p Profile) Learned() bool {
	for _, o := range p.Seen {
		if o.Value != "" {
			return true
		}
	}
	return false
}

// Client is the device's SMB client as a check replays it: the one way
// from a stored profile (Values) to smbcheck.Device. A nil device (a
// destination without one) is replayed with scanwarden's own client.
func (d *Device) Client() smbcheck.Device { return d.ClientWith(nil) }

// ClientWith is Client with set put over the profile as the admin's
// settings: a one-off check's device flags (nil d: over nothing known).
func (d *Device) ClientWith(set map[ProfileField]string) smbcheck.Device {
	return ClientOf(d.ValuesWith(set))
}

// ValuesWith is Values with set put over them as the admin's (nil d: over
// nothing known): what ClientWith replays, for a report to show.
func (d *Device) ValuesWith(set map[ProfileField]string) []ProfileValue {
	var vs []ProfileValue
	if d != nil {
		vs = d.Values()
	} else {
		for _, f := range ProfileFields {
			vs = append(vs, ProfileValue{Field: f, Origin: OriginUnknown})
		}
	}
	return Overlay(vs, set)
}

// ClientOf turns profile values into the device a check replays; unknown
// values leave scanwarden's own client's ability in place.
func ClientOf(vs []ProfileValue) smbcheck.Device {
	var c smbcheck.Device
	for _, v := range vs {
		if v.Value == "" {
			continue
		}
		switch v.Field {
		case FieldMaxDialect:
			c.MaxDialect, _ = smbcheck.ParseDialect(v.Value)
			c.SMB1Only = c.MaxDialect == smbcheck.DialectSMB1
		case FieldMinDialect:
			c.MinDialect, _ = smbcheck.ParseDialect(v.Value)
		case FieldSigning:
			c.NoSigning = v.Value == "no"
		case FieldEncryption:
			c.NoEncryption = v.Value == "no"
		case FieldNTLM:
			c.NTLMv1 = v.Value == "v1"
		case FieldKerberos:
			c.NoKerberos = v.Value == "no"
		case FieldFileType:
			c.FileType, _ = smbcheck.ParseFileType(v.Value)
		}
	}
	return c
}

// ReportProfile is what a report keeps of the profile values vs of device
// a check replays (smbcheck.Options.Profile): each value with its origin.
func ReportProfile(device string, vs []ProfileValue) *smbcheck.Profile {
	p := &smbcheck.Profile{Device: device}
	for _, v := range vs {
		p.Values = append(p.Values, smbcheck.ProfileSource{Field: string(v.Field), Value: v.Value, Origin: string(v.Origin), SeenAt: v.SeenAt})
	}
	return p
}

// Overlay returns the values with the given settings put over them as the
// admin's (a one-off check's device flags over a stored device's
// profile).
func Overlay(vs []ProfileValue, set map[ProfileField]string) []ProfileValue {
	out := make([]ProfileValue, len(vs))
	copy(out, vs)
	for i := range out {
		if v, ok := set[out[i].Field]; ok && v != "" {
			if out[i].Origin == OriginSeen {
				out[i].Seen = out[i].Value
			}
			out[i].Value, out[i].Origin, out[i].Note = v, OriginAdmin, ""
		}
	}
	return out
}

// Learn returns the profile with what o shows put in as seen. What a
// logon shows: the dialect smbd negotiated — its highest, since the
// fallback share offers up to 3.1.1 (an SMB1 device's lowest too);
// signing (every SMB2 and later client signs when the server requires it);
// encryption (SMB 3 has it, 2.x and SMB1 do not); the NTLM version or
// Kerberos of its session setup. What a file shows: the type it scans to.
func (p Profile) Learn(o samba.Observation) Profile {
	q := Profile{Admin: p.Admin, Seen: make(map[ProfileField]Observed, len(p.Seen)+4), Workstation: p.Workstation, UserForm: p.UserForm}
	for k, v := range p.Seen {
		q.Seen[k] = v
	}
	d, err := smbcheck.ParseDialect(o.Dialect)
	if err != nil {
		d = 0
	}
	o.Dialect = d.String()
	session := cleanSeen(o.Session())
	put := func(f ProfileField, v string) { q.Seen[f] = Observed{Value: v, At: o.At, Session: session} }
	if d != 0 {
		put(FieldMaxDialect, d.String())
		if d == smbcheck.DialectSMB1 {
			put(FieldMinDialect, d.String())
		} else {
			put(FieldSigning, "yes")
		}
		if d >= smbcheck.DialectSMB30 {
			put(FieldEncryption, "yes")
		} else {
			put(FieldEncryption, "no")
		}
	}
	switch o.Password {
	case "NTLMv1":
		put(FieldNTLM, "v1")
	case "NTLMv2":
		put(FieldNTLM, "v2")
	case "Kerberos":
		put(FieldKerberos, "yes")
	}
	if f, err := smbcheck.ParseFileType(o.FileType); err == nil && f != "" {
		put(FieldFileType, f.String())
	}
	if o.Workstation != "" {
		q.Workstation = Observed{Value: cleanSeen(o.Workstation), At: o.At, Session: session}
	}
	if o.User != "" {
		q.UserForm = Observed{Value: cleanSeen(o.UserForm()), At: o.At, Session: session}
	}
	return q
}

// LearnHint says how a device that was never seen on the fallback share
// gets its profile learned.
const LearnHint = "Send one scan from this device to the fallback share (or press \"Test\" beside that destination in its Command Center RX address book): its logon there shows its SMB dialect, NTLM level and file type."

// DescribeValue words one profile value for a person: "2.1 (seen 2026-12-06
// 06:10 UTC, from 10.0.0.5, SMB 2.1, …)".
func DescribeValue(v ProfileValue) string {
	val := v.Value
	if val == "" {
		val = "unknown"
	}
	switch v.Origin {
	case OriginAdmin:
		s := val + " (set by the admin"
		if v.Seen != "" {
			s += "; seen: " + v.Seen
		}
		return s + ")"
	case OriginSeen:
		at := ""
		if v.SeenAt != nil {
			at = " " + v.SeenAt.UTC().Format("2006-01-02 15:04 MST")
		}
		return fmt.Sprintf("%s (seen%s, %s)", val, at, v.Session)
	case OriginDefault:
		return val + " (default for its model family: " + v.Note + ")"
	}
	return "unknown (scanwarden's own client is used and the server's demands are stated)"
}

// ProfileJSON is a device's SMB profile as the CLI's --json and the API
// show it: each field's value and origin, what else was seen, and how to
// learn it when nothing was.
type ProfileJSON struct {
	Values      []ProfileValue `json:"values"`
	Workstation *SeenJSON      `json:"workstation,omitempty"` // the NetBIOS name it sent on the fallback share
	UserForm    *SeenJSON      `json:"user_form,omitempty"`   // the login name form it sent there
	Learned     bool           `json:"learned"`               // anything seen on the fallback share
	Hint        string         `json:"hint,omitempty"`        // how to learn it, when nothing was seen
}

// SeenJSON is a value seen on the fallback share.
type SeenJSON struct {
	Value   string    `json:"value"`
	At      time.Time `json:"at"`
	Session string    `json:"session"`
}

// ProfileJSON is d's profile for JSON.
func (d Device) ProfileJSON() ProfileJSON {
	p := ProfileJSON{Values: d.Values(), Learned: d.Profile.Learned()}
	if o := d.Profile.Workstation; o.Value != "" {
		p.Workstation = &SeenJSON{o.Value, o.At.UTC(), o.Session}
	}
	if o := d.Profile.UserForm; o.Value != "" {
		p.UserForm = &SeenJSON{o.Value, o.At.UTC(), o.Session}
	}
	if !p.Learned {
		p.Hint = LearnHint
	}
	return p
}
