package smbclient

import (
	"strings"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbconn"
)

// FormKind names a way of writing a user name.
type FormKind string

// formStored is the form exactly as typed on the MFP.
const formStored FormKind = "stored"

// Form is one way of writing the user name, split as it goes on the wire.
type Form struct {
	Kind   FormKind `json:"kind"`
	User   string   `json:"user"`   // NTLM User field
	Domain string   `json:"domain"` // NTLM Domain field
	Typed  string   `json:"typed"`  // what to type on the panel for this form
}

func (f Form) String() string { return f.Typed }

// UserName is a user name as typed on the MFP, split into its parts: the
// one parser of typed names, for the check's user name forms and for the
// directory's lookup (package ad).
type UserName struct {
	Typed  string
	Kind   string // bare, domain (PREFIX\user), local (.\user), upn (user@suffix), invalid
	Prefix string // before the (first) backslash
	User   string // the name part
	Suffix string // after the (last) @ of a UPN
}

// ParseUserName splits s exactly as typed (no trimming: the MFP sends every
// byte). A name with an empty part, or a backslash left in the name part,
// is Kind invalid; its parts are still filled as far as they go.
func ParseUserName(s string) UserName {
	u := UserName{Typed: s}
	switch {
	case strings.Contains(s, `\`):
		u.Prefix, u.User, _ = strings.Cut(s, `\`)
		u.Kind = "domain"
		if u.Prefix == "." {
			u.Kind = "local"
		}
	case strings.Contains(s, "@"):
		i := strings.LastIndex(s, "@")
		u.User, u.Suffix, u.Kind = s[:i], s[i+1:], "upn"
	default:
		u.User, u.Kind = s, "bare"
	}
	if u.User == "" || (u.Kind == "domain" && u.Prefix == "") || (u.Kind == "upn" && u.Suffix == "") || strings.Contains(u.User, `\`) {
		u.Kind = "invalid"
	}
	return u
}

// StoredForm is how the MFP puts what was typed on the wire: DOMAIN\user is
// split into the NTLM Domain field; a UPN or a bare name goes in User with
// an empty Domain.
func StoredForm(typed string) Form {
	f := Form{Kind: formStored, User: typed, Typed: typed}
	if u := ParseUserName(typed); u.Prefix != "" || strings.HasPrefix(typed, `\`) {
		f.Domain, f.User = u.Prefix, u.User
	}
	return f
}

// BaseUser strips any domain, host or UPN suffix from a typed name; a
// forward slash, a frequent typo for the backslash, counts as a separator.
func BaseUser(typed string) (user, upnSuffix string) {
	u := ParseUserName(typed)
	name := u.User
	if i := strings.LastIndexAny(name, `\/`); i >= 0 {
		name = name[i+1:]
	}
	return name, u.Suffix
}

// Credentials is what an NTLM logon as form f sends for t: the MFP's
// NetBIOS name as workstation.
func Credentials(f Form, t scanwarden.Target) smbconn.Credentials {
	return smbconn.Credentials{User: f.User, Domain: f.Domain, Password: t.Password.Reveal(), Workstation: t.WorkstationName(), Typed: f.Typed}
}
