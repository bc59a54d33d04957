package scanwarden

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Target is one scan destination exactly as the MFP stores it.
type Target struct {
	Host  string // host name or address, as typed on the MFP
	Port  int    // 445 or 139 as stored (0 means 445)
	Share string
	Path  string // folder below the share, "/" or "\" separated; "" for the share root
	// User is the login user name exactly as typed on the MFP: user,
	// DOMAIN\user, user@upn, .\user or HOST\user.
	User     string
	Password Secret
	// Workstation is the NetBIOS name the MFP sends in NTLM (its host name);
	// a "log on to" restriction is judged against it.
	Workstation string
	// Auth is how the MFP logs on: ntlm ("" too), kerberos or auto.
	Auth Auth
}

// DefaultWorkstation is sent when the MFP's name is not known.
const DefaultWorkstation = "SCANWARDEN"

// TargetInfo is the target without its secret, as reports show it.
type TargetInfo struct {
	Host        string `json:"host"`
	Port        int    `json:"port"`
	Share       string `json:"share"`
	Path        string `json:"path"`
	User        string `json:"user"`
	Workstation string `json:"workstation"`
	Auth        Auth   `json:"auth,omitempty"` // "" for ntlm, the default
}

// Info is the target without its secret.
func (t Target) Info() TargetInfo {
	return TargetInfo{Host: t.Host, Port: t.DialPort(), Share: t.Share, Path: t.Path, User: t.User, Workstation: t.WorkstationName(), Auth: t.infoAuth()}
}

// LogonAuth is how the destination logs on: Auth, or AuthNTLM when empty.
func (t Target) LogonAuth() Auth {
	if t.Auth == "" {
		return AuthNTLM
	}
	return t.Auth
}

// infoAuth is the auth a report shows: none for the default, NTLM.
func (t Target) infoAuth() Auth {
	if t.LogonAuth() == AuthNTLM {
		return ""
	}
	return t.Auth
}

// DefaultPort is the SMB port of a destination whose Port Number is
// empty (stored as 0).
const DefaultPort = 445

// DialPort is the port a stored SMB port number means: port, or
// DefaultPort when it is 0. The one rule for "port 0 means 445".
func DialPort(port int) int {
	if port == 0 {
		return DefaultPort
	}
	return port
}

// NonDefaultPort reports whether a stored SMB port number means another
// port than DefaultPort: the one a destination shown to the admin names.
func NonDefaultPort(port int) bool { return DialPort(port) != DefaultPort }

// DialPort is the port to connect to: Port, or DefaultPort when it is 0.
func (t Target) DialPort() int { return DialPort(t.Port) }

// WorkstationName is the NetBIOS name the MFP sends: Workstation in
// upper case, or DefaultWorkstation when it is not known.
func (t Target) WorkstationName() string {
	if t.Workstation == "" {
		return DefaultWorkstation
	}
	return strings.ToUpper(t.Workstation)
}

// Folders splits Path into its folder components.
func (t Target) Folders() []string {
	var parts []string
	for _, p := range strings.FieldsFunc(t.Path, func(r rune) bool { return r == '/' || r == '\\' }) {
		if p != "" && p != "." {
			parts = append(parts, p)
		}
	}
	return parts
}

// PanelPath is the destination folder as the panel's Path shows it: the share
// and its folders, separated by backslashes.
func (t Target) PanelPath() string {
	return strings.Join(append([]string{t.Share}, t.Folders()...), `\`)
}

// Validate names the first field that cannot be used, as a
// *FieldError whose Field is host, port, share, path, auth or user.
func (t Target) Validate() error {
	bad := BadField
	switch {
	case strings.TrimSpace(t.Host) == "":
		return bad("host", "", "empty")
	case strings.ContainsAny(t.Host, "/\\ \t"):
		return bad("host", t.Host, "contains a slash or a space")
	case t.Port < 0 || t.Port > 65535:
		return bad("port", t.Port, "out of range (1 to 65535; 0 means 445)")
	case strings.TrimSpace(t.Share) == "":
		return bad("share", "", "empty (the destination path must start with the share name)")
	case strings.ContainsAny(t.Share, `\/:*?"<>|`):
		return bad("share", t.Share, "contains a character not allowed in a share name")
	case t.Auth != "" && t.Auth != AuthNTLM && t.Auth != AuthKerberos && t.Auth != AuthAuto:
		return bad("auth", string(t.Auth), "not ntlm, kerberos or auto")
	case t.User != "" && strings.TrimSpace(t.User) == "":
		// An empty user is what the MFP stores for an anonymous (guest)
		// logon; spaces alone are a typo.
		return bad("user", t.User, "only spaces (leave the Login User Name empty for an anonymous logon)")
	}
	for _, p := range t.Folders() {
		if p == ".." {
			return bad("path", t.Path, "contains ..")
		}
	}
	return nil
}

// UNC is a folder as the admin types it on the MFP's panel or in Windows:
// \\HOST\SHARE\PATH, backslashes only (path may use / or \). The port is
// not part of it: show a port other than 445 beside it.
func UNC(host, share, path string) string {
	parts := []string{`\\` + host, share}
	parts = append(parts, strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '\\' })...)
	return strings.Join(parts, `\`)
}

// ParseDestination reads //HOST[:PORT]/SHARE[/PATH] (or the Windows form
// \\HOST\SHARE\PATH) into the address part of a Target.
func ParseDestination(s string) (Target, error) {
	var t Target
	orig := s
	s = strings.ReplaceAll(s, `\`, "/")
	if !strings.HasPrefix(s, "//") {
		return t, fmt.Errorf("destination %q: want //HOST[:PORT]/SHARE[/PATH]", orig)
	}
	s = strings.TrimPrefix(s, "//")
	hostport, rest, _ := strings.Cut(s, "/")
	share, path, _ := strings.Cut(rest, "/")
	host := hostport
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return t, fmt.Errorf("destination %q: port %q is not a number from 1 to 65535", orig, p)
		}
		host, t.Port = h, n
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = strings.Trim(hostport, "[]")
	}
	t.Host, t.Share, t.Path = host, share, strings.Trim(path, "/")
	if t.Host == "" {
		return t, fmt.Errorf("destination %q: no host", orig)
	}
	if t.Share == "" {
		return t, fmt.Errorf("destination %q: no share", orig)
	}
	return t, nil
}

// Auth says how a destination logs on.
type Auth string

// The ways of logging on.
const (
	// AuthNTLM is what an MFP sends (NTLMv2); the default ("" reads as it).
	AuthNTLM Auth = "ntlm"
	// AuthKerberos is a Kerberos-capable MFP: the whole check runs over
	// Kerberos.
	AuthKerberos Auth = "kerberos"
	// AuthAuto tries Kerberos, then NTLM when Kerberos could not judge the
	// password (no KDC, no realm, an address for a host, clock skew).
	AuthAuto Auth = "auto"
)

// ParseAuth reads ntlm, kerberos or auto ("" is ntlm).
func ParseAuth(s string) (Auth, error) {
	switch a := Auth(strings.ToLower(strings.TrimSpace(s))); a {
	case "", AuthNTLM:
		return AuthNTLM, nil
	case AuthKerberos, AuthAuto:
		return a, nil
	}
	return "", fmt.Errorf("auth %q: want ntlm, kerberos or auto", s)
}
