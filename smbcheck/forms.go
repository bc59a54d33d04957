package smbcheck

import (
	"strings"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbconn"
)

// FormKind names a way of writing a user name.
type FormKind string

// Form is one way of writing the user name, split as it goes on the wire.
type Form struct {
	Kind   FormKind `json:"kind"`
	User   string   `json:"user"`   // NTLM User field
	Domain string   `json:"domain"` // NTLM Domain field
	Typed  string   `json:"typed"`  // what to type on the panel for this form
}

func (f Form) String() string { return f.Typed }

// The user name forms a check knows.
const (
	formStored FormKind = "stored" // exactly as typed on the MFP
	formBare   FormKind = "user"
	formDomain FormKind = `DOMAIN\user`
	formUPN    FormKind = "user@upn"
	formLocal  FormKind = `.\user`
	formHost   FormKind = `HOST\user`
)

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

// storedForm is how the MFP puts what was typed on the wire: DOMAIN\user is
// split into the NTLM Domain field; a UPN or a bare name goes in User with
// an empty Domain.
func storedForm(typed string) Form {
	f := Form{Kind: formStored, User: typed, Typed: typed}
	if u := ParseUserName(typed); u.Prefix != "" || strings.HasPrefix(typed, `\`) {
		f.Domain, f.User = u.Prefix, u.User
	}
	return f
}

// baseUser strips any domain, host or UPN suffix from a typed name; a
// forward slash, a frequent typo for the backslash, counts as a separator.
func baseUser(typed string) (user, upnSuffix string) {
	u := ParseUserName(typed)
	name := u.User
	if i := strings.LastIndexAny(name, `\/`); i >= 0 {
		name = name[i+1:]
	}
	return name, u.Suffix
}

// formHints is what is known about the names the server accepts.
type formHints struct {
	NetBIOSDomain string // the account's (or server's) NetBIOS domain
	DNSDomain     string // for the UPN form
	ServerName    string // the server's NetBIOS name, for HOST\user
	// From the directory, when it found the account:
	SAM string
	UPN string
}

// candidateForms lists the forms worth trying after the stored one failed,
// most likely first, without duplicates and without the stored form.
func candidateForms(typed string, h formHints) []Form {
	stored := storedForm(typed)
	user, suffix := baseUser(typed)
	var out []Form
	seen := map[string]bool{key(stored): true}
	add := func(kind FormKind, u, d, shown string) {
		if u == "" {
			return
		}
		f := Form{Kind: kind, User: u, Domain: d, Typed: shown}
		if seen[key(f)] {
			return
		}
		seen[key(f)] = true
		out = append(out, f)
	}
	if h.SAM != "" || h.UPN != "" {
		// The directory knows the account: its real names come first.
		add(formUPN, h.UPN, "", h.UPN)
		if h.NetBIOSDomain != "" {
			add(formDomain, h.SAM, h.NetBIOSDomain, h.NetBIOSDomain+`\`+h.SAM)
		}
		add(formBare, h.SAM, "", h.SAM)
		return out
	}
	dns := h.DNSDomain
	if dns == "" && suffix != "" {
		dns = suffix
	}
	if dns != "" && h.DNSDomain != "" {
		add(formUPN, user+"@"+strings.ToLower(dns), "", user+"@"+strings.ToLower(dns))
	}
	if h.NetBIOSDomain != "" {
		add(formDomain, user, h.NetBIOSDomain, h.NetBIOSDomain+`\`+user)
	}
	add(formBare, user, "", user)
	if h.ServerName != "" && !strings.EqualFold(h.ServerName, h.NetBIOSDomain) {
		add(formHost, user, h.ServerName, h.ServerName+`\`+user)
	}
	add(formLocal, user, ".", `.\`+user)
	return out
}

func key(f Form) string { return strings.ToLower(f.Domain) + `\` + strings.ToLower(f.User) }

// credentials is what an NTLM logon as form f sends for t: the MFP's
// NetBIOS name as workstation.
func credentials(f Form, t scanwarden.Target) smbconn.Credentials {
	return smbconn.Credentials{User: f.User, Domain: f.Domain, Password: t.Password.Reveal(), Workstation: t.WorkstationName(), Typed: f.Typed}
}
