package smbcheck

import (
	"strings"

	"github.com/scanwarden/scanwarden/smbclient"
)

// The user name forms a check knows.
const (
	formBare   smbclient.FormKind = "user"
	formDomain smbclient.FormKind = `DOMAIN\user`
	formUPN    smbclient.FormKind = "user@upn"
	formLocal  smbclient.FormKind = `.\user`
	formHost   smbclient.FormKind = `HOST\user`
)

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
func candidateForms(typed string, h formHints) []smbclient.Form {
	stored := smbclient.StoredForm(typed)
	user, suffix := smbclient.BaseUser(typed)
	var out []smbclient.Form
	seen := map[string]bool{key(stored): true}
	add := func(kind smbclient.FormKind, u, d, shown string) {
		if u == "" {
			return
		}
		f := smbclient.Form{Kind: kind, User: u, Domain: d, Typed: shown}
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

func key(f smbclient.Form) string { return strings.ToLower(f.Domain) + `\` + strings.ToLower(f.User) }
