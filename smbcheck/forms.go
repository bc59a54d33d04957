package smbcheck

import (
	"strings"
)

// FormKind names a way of writing a user name.
type FormKind string

// The user name forms a check knows.
const (
	FormStored FormKind = "stored" // exactly as typed on the MFP
	FormBare   FormKind = "user"
	FormDomain FormKind = `DOMAIN\user`
	FormUPN    FormKind = "user@upn"
	FormLocal  FormKind = `.\user`
	FormHost   FormKind = `HOST\user`
)

// storedForm is how the MFP puts what was typed on the wire: DOMAIN\user is
// split into the NTLM Domain field; a UPN or a bare name goes in User with
// an empty Domain.
func storedForm(typed string) Form {
	f := Form{Kind: FormStored, User: typed, Typed: typed}
	if d, u, ok := strings.Cut(typed, `\`); ok {
		f.Domain, f.User = d, u
	}
	return f
}

// baseUser strips any domain, host or UPN suffix from a typed name; a
// forward slash, a frequent typo for the backslash, counts as a separator.
func baseUser(typed string) (user, upnSuffix string) {
	u := typed
	if i := strings.LastIndexAny(u, `\/`); i >= 0 {
		u = u[i+1:]
	}
	if name, suffix, ok := strings.Cut(u, "@"); ok {
		return name, suffix
	}
	return u, ""
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
		add(FormUPN, h.UPN, "", h.UPN)
		if h.NetBIOSDomain != "" {
			add(FormDomain, h.SAM, h.NetBIOSDomain, h.NetBIOSDomain+`\`+h.SAM)
		}
		add(FormBare, h.SAM, "", h.SAM)
		return out
	}
	dns := h.DNSDomain
	if dns == "" && suffix != "" {
		dns = suffix
	}
	if dns != "" && h.DNSDomain != "" {
		add(FormUPN, user+"@"+strings.ToLower(dns), "", user+"@"+strings.ToLower(dns))
	}
	if h.NetBIOSDomain != "" {
		add(FormDomain, user, h.NetBIOSDomain, h.NetBIOSDomain+`\`+user)
	}
	add(FormBare, user, "", user)
	if h.ServerName != "" && !strings.EqualFold(h.ServerName, h.NetBIOSDomain) {
		add(FormHost, user, h.ServerName, h.ServerName+`\`+user)
	}
	add(FormLocal, user, ".", `.\`+user)
	return out
}

func key(f Form) string { return strings.ToLower(f.Domain) + `\` + strings.ToLower(f.User) }
