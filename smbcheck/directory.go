package smbcheck

import (
	"context"
	"time"

	"github.com/scanwarden/scanwarden/smbclient"
)

// Directory is what a check asks Active Directory. Package ad implements it;
// a check works without one.
type Directory interface {
	smbclient.Accounts
	// Host looks up, in one question, the computer object of the target
	// host by its name as stored (DNS or NetBIOS name, or an address) or any
	// of its aliases (e.g. the NetBIOS name the server gives in NTLM).
	Host(ctx context.Context, name string, aliases ...string) (*Host, error)
}

// Host is what the directory knows of the target computer.
type Host struct {
	Found     bool
	Name      string
	OS        string // operatingSystem, e.g. "Windows 11 Pro"
	OSVersion string // operatingSystemVersion, e.g. "10.0 (26100)"
	// DomainController is true when the host is a DC: it has no local
	// accounts, so .\user and HOST\user name domain accounts there.
	DomainController bool
	// Warnings are worth showing even when the check passes: a Windows
	// client edition allows 20 inbound sessions; 24H2 requires signing.
	Warnings []string
	Evidence Evidence
}

// foresight puts what tells days ahead that the account will stop working
// into the ad step's evidence, under stable keys that the warnings read
// back from a stored report: account (DOMAIN\sam), password_expires,
// account_expires, last_bad_password, password_last_set (RFC 3339, absent
// when not known or never), bad_pwd_count and lockout_threshold.
func foresight(a *smbclient.Account, ev Evidence) {
	who := a.SAM
	if a.NetBIOSDomain != "" {
		who = a.NetBIOSDomain + `\` + a.SAM
	}
	ev["account"] = who
	ev["bad_pwd_count"] = a.BadPwdCount
	ev["lockout_threshold"] = a.LockoutThreshold
	for k, t := range map[string]time.Time{"password_expires": a.PasswordExpires, "account_expires": a.AccountExpires,
		"last_bad_password": a.LastBadPassword, "password_last_set": a.PasswordLastSet} {
		if !t.IsZero() {
			// To the DC's precision: a bad password or a password change
			// is compared with when scanwarden's own logons went out.
			ev[k] = t.UTC().Format(time.RFC3339Nano)
		}
	}
}
