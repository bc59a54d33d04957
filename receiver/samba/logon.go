package samba

import (
	"encoding/json"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scanwarden/scanwarden/smbconn"
)

// What smbd's log tells about a client, as smb.conf asks for it:
//
//   - "log level = 1 auth_json_audit:3": one JSON line per session setup,
//     `{"type": "Authentication", "Authentication": {"remoteAddress":
//     "ipv4:10.0.0.5:51234", "passwordType": "NTLMv2", "workstation":
//     "MFP01", "clientAccount": "mfp", "clientDomain": "WORKGROUP", …}}`
//     (Samba 4.17: passwordType NTLMv1, NTLMv2 or Kerberos; written for a
//     failed logon too, and the response type it shows is the client's all
//     the same);
//   - full_audit's connect with the prefix %U|%I|%m|%R: the tree connect's
//     client address and the negotiated dialect (NT1, SMB2_02 … SMB3_11).
//
// Every field is the client's to choose: each is bounded, checked against
// what it may be (an address, a dialect, one of three password types) or
// cleaned to printable text, and is never used as a path or a command.

// probeWorkstation is the NetBIOS name the share probe (ProbeShare) logs
// on with: its logons are scanwarden's own, never an MFP's observation.
const probeWorkstation = "SCANWARDEN-PROBE"

// maxObservedText bounds a workstation, user or domain name from the log.
const maxObservedText = 128

// authLine is the part of an auth_json_audit record that is used.
type authLine struct {
	Type           string `json:"type"`
	Timestamp      string `json:"timestamp"`
	Authentication struct {
		RemoteAddress      string `json:"remoteAddress"`
		ServiceDescription string `json:"serviceDescription"`
		ClientDomain       string `json:"clientDomain"`
		ClientAccount      string `json:"clientAccount"`
		Workstation        string `json:"workstation"`
		PasswordType       string `json:"passwordType"`
	} `json:"Authentication"`
}

// parseAuthLine reads one auth_json_audit line (already trimmed); ok false
// for anything else or a record that says nothing usable.
func parseAuthLine(l string, now time.Time) (Observation, bool) {
	var o Observation
	if len(l) > 16<<10 || !strings.HasPrefix(l, "{") || !strings.Contains(l, `"Authentication"`) {
		return o, false
	}
	var a authLine
	if err := json.Unmarshal([]byte(l), &a); err != nil || a.Type != "Authentication" {
		return o, false
	}
	au := a.Authentication
	switch au.ServiceDescription {
	case "SMB", "SMB2":
	default:
		return o, false // not an SMB session setup (e.g. a local tool)
	}
	addr, ok := remoteAddr(au.RemoteAddress)
	if !ok {
		return o, false
	}
	o.Address, o.At = addr.String(), now
	if t, err := time.Parse("2006-01-02T15:04:05.999999-0700", a.Timestamp); err == nil && t.Sub(now).Abs() < 24*time.Hour {
		o.At = t
	}
	switch au.PasswordType {
	case "NTLMv1", "NTLMv2", "Kerberos":
		o.Password = au.PasswordType
	}
	if strings.EqualFold(au.Workstation, probeWorkstation) {
		return o, false // the share probe's own logon
	}
	o.Workstation = observedText(au.Workstation)
	o.User = observedText(au.ClientAccount)
	o.Domain = observedText(au.ClientDomain)
	if o.Password == "" && o.Workstation == "" && o.User == "" {
		return o, false
	}
	return o, true
}

// remoteAddr reads Samba's tsocket address "ipv4:ADDR:PORT" or
// "ipv6:ADDR:PORT" into the client's IP address (IPv4 unmapped).
func remoteAddr(s string) (netip.Addr, bool) {
	if len(s) > 80 {
		return netip.Addr{}, false
	}
	fam, rest, ok := strings.Cut(s, ":")
	if !ok || (fam != "ipv4" && fam != "ipv6") {
		return netip.Addr{}, false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(rest[:i])
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// observedText is a client-chosen name fit to keep: valid UTF-8, no
// control characters, at most maxObservedText bytes; "" for anything
// else or a name Samba writes for none ("(null)").
func observedText(s string) string {
	if s == "" || len(s) > maxObservedText || !utf8.ValidString(s) || s == "(null)" {
		return ""
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return ""
		}
	}
	return s
}

// connectObservation is full_audit's connect record (fields split at |:
// user, address, machine, protocol, "connect", "ok", share) as an
// observation of the dialect.
func connectObservation(f []string, now time.Time) (Observation, bool) {
	var o Observation
	if len(f) < 6 || f[4] != "connect" || f[5] != "ok" || strings.EqualFold(f[2], probeWorkstation) {
		return o, false // not a connect, or the share probe's own
	}
	a, err := netip.ParseAddr(f[1])
	if err != nil || a.Zone() != "" {
		return o, false
	}
	d, err := smbconn.ParseDialect(f[3])
	if err != nil || d == 0 || len(f[3]) > 16 {
		return o, false
	}
	return Observation{Address: a.Unmap().String(), At: now, Dialect: d.String()}, true
}

// Observation is what one logon or one file on the fallback share showed
// about the client at Address. Every text is device-provided, checked
// here (observedText) and cleaned again where it is stored.
type Observation struct {
	Address  string // the client's IP address
	At       time.Time
	Dialect  string // negotiated (smbconn.Dialect's spelling); "" not in this observation
	Password string // NTLMv1, NTLMv2 or Kerberos (Samba's passwordType); ""
	// Workstation and User are as the client sent them at session setup;
	// Domain the domain it sent with the user ("" none).
	Workstation, User, Domain string
	FileType                  string // the type of a scan it wrote (smbconn.FileType); ""
}

// Session words the observation's session, as shown beside a seen value.
func (o Observation) Session() string {
	parts := []string{"from " + o.Address}
	if o.Dialect != "" {
		parts = append(parts, "SMB "+o.Dialect)
	}
	if o.Password != "" {
		parts = append(parts, o.Password)
	}
	if o.Workstation != "" {
		parts = append(parts, "workstation "+o.Workstation)
	}
	if o.User != "" {
		parts = append(parts, "user "+o.UserForm())
	}
	if o.FileType != "" {
		parts = append(parts, "a scan of type "+o.FileType)
	}
	return strings.Join(parts, ", ")
}

// UserForm is the login name as the client sent it: DOMAIN\user,
// user@upn or user.
func (o Observation) UserForm() string {
	if o.Domain != "" && !strings.Contains(o.User, "@") {
		return o.Domain + `\` + o.User
	}
	return o.User
}
