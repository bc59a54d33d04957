package ad

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/secdesc"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
)

// User is what AD says of the account a name typed on the MFP refers to.
// It is the `ad user --json` answer; Account() narrows it for smbcheck.
type User struct {
	Typed       string `json:"typed"`
	Workstation string `json:"workstation"` // the name the MFP sends, judged against workstations
	Found       bool   `json:"found"`
	// MatchedBy says how the typed name found the account: sAMAccountName,
	// userPrincipalName, implicit-upn (sAMAccountName@DNS domain) or
	// upn-prefix (a bare name that is the UPN's part before @, not the
	// sAMAccountName: the MFP must then send the full UPN).
	MatchedBy     string `json:"matched_by,omitempty"`
	DN            string `json:"dn,omitempty"`
	SAM           string `json:"sam"`
	UPN           string `json:"upn"`
	NetBIOSDomain string `json:"netbios_domain"`
	DNSDomain     string `json:"dns_domain"`
	// Cause is the first reason the account cannot log on now, or ok;
	// Causes lists all of them.
	Cause   scanwarden.Cause   `json:"cause"`
	Causes  []scanwarden.Cause `json:"causes"`
	Certain bool               `json:"certain"`
	Summary string             `json:"summary"`
	Fix     string             `json:"fix"`

	Enabled          bool       `json:"enabled"`
	Locked           bool       `json:"locked"`
	BadPwdCount      int        `json:"bad_pwd_count"` // as the DC counts it now (0 once the observation window passed)
	LastBadPassword  *time.Time `json:"last_bad_password"`
	LockoutThreshold int        `json:"lockout_threshold"`
	// Budget is how many more failed logons a check may cause: lockout
	// threshold − bad_pwd_count − margin, at least 0; −1: no lockout policy.
	Budget               int               `json:"budget"`
	LockedSince          *time.Time        `json:"locked_since"`
	LockedUntil          *time.Time        `json:"locked_until"` // null while locked: until an administrator unlocks
	PasswordLastSet      *time.Time        `json:"password_last_set"`
	PasswordExpires      *time.Time        `json:"password_expires"`
	PasswordNeverExpires bool              `json:"password_never_expires"`
	MustChangePassword   bool              `json:"must_change_password"`
	AccountExpires       *time.Time        `json:"account_expires"`
	Workstations         []string          `json:"workstations"`
	LogonHours           string            `json:"logon_hours"` // all, none, or "Mon 07-19, … UTC"
	Groups               []string          `json:"groups"`      // memberOf, by name
	SIDs                 []string          `json:"sids"`        // own SID first, then tokenGroups
	SIDNames             map[string]string `json:"sid_names"`   // SID → DOMAIN\name of the account and its groups
	Policy               map[string]any    `json:"policy"`
	Evidence             smbcheck.Evidence `json:"evidence"`
}

// Account implements smbcheck.Directory.
func (d *Directory) Account(ctx context.Context, typed, workstation string) (*smbclient.Account, error) {
	u, err := d.User(ctx, typed, workstation)
	if err != nil {
		return nil, err
	}
	return u.Account(), nil
}

// Account narrows u to what a check needs.
func (u *User) Account() *smbclient.Account {
	a := &smbclient.Account{
		Found: u.Found, SAM: u.SAM, UPN: u.UPN, NetBIOSDomain: u.NetBIOSDomain, DNSDomain: u.DNSDomain,
		Cause: u.Cause, Certain: u.Certain, Summary: u.Summary, Fix: u.Fix, Budget: u.Budget,
		SIDs: slices.Clone(u.SIDs), SIDNames: u.SIDNames, Evidence: u.Evidence,
		BadPwdCount: u.BadPwdCount, LockoutThreshold: u.LockoutThreshold,
		PasswordExpires: deref(u.PasswordExpires), AccountExpires: deref(u.AccountExpires), LastBadPassword: deref(u.LastBadPassword),
	}
	if u.PasswordLastSet != nil {
		a.PasswordLastSet = *u.PasswordLastSet
	}
	return a
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// User looks up the account that typed (any form the MFP may hold: user,
// DOMAIN\user, user@upn, .\user, HOST\user) refers to, and judges whether it
// can log on now from workstation. An error means AD could not be asked; an
// unknown name is a User with Found false and cause unknown-user.
func (d *Directory) User(ctx context.Context, typed, workstation string) (*User, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	s, dom, err := d.connectDomain(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	now := d.now(dom)
	t := parseTyped(typed)
	ws := normWorkstation(workstation)

	var (
		entries []*ldap.Entry
		how     string
		tried   []string
	)
	for _, a := range lookupPlan(t, dom) {
		tried = append(tried, a.what)
		req := ldap.NewSearchRequest(dom.BaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, maxCandidates, 0, false,
			a.filter, []string{"sAMAccountName", "userPrincipalName"}, nil)
		res, err := s.search("find the account", req)
		if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
			return nil, err
		}
		if res != nil && len(res.Entries) > 0 {
			entries, how = res.Entries, a.how
			break
		}
	}
	ev := smbcheck.Evidence{"dc": s.ep.addr(), "transport": s.transport, "typed_form": t.Kind, "searched": tried}
	if len(entries) != 1 {
		u := notFound(t, ws, dom, entries, tried)
		for k, v := range ev {
			u.Evidence[k] = v
		}
		return u, nil
	}

	// A base-scope read of the one account: the constructed attributes
	// (tokenGroups, the computed flags and expiry) come only this way.
	e, err := s.base("read the account", entries[0].DN, userAttrs...)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("read the account on DC %s: %s vanished", s.ep.addr(), entries[0].DN)
	}
	rec, err := parseUser(e)
	if err != nil {
		return nil, fmt.Errorf("account %s: %w", e.DN, err)
	}
	pol := dom.Policy
	if rec.PSO != "" {
		if p, err := s.psoPolicy(rec.PSO); err == nil {
			pol = p
		} else {
			ev["pso_unreadable"] = err.Error()
		}
	}
	u := judge(rec, t, how, ws, dom, pol, now, d.cfg.Margin, d.cfg.Location)
	u.SIDNames = s.sidNames(dom, u.SIDs)
	for k, v := range ev {
		u.Evidence[k] = v
	}
	u.Evidence["dc_time"] = now.Format(time.RFC3339)
	return u, nil
}

// sidNames names the account's own and group SIDs (DOMAIN\sAMAccountName)
// in one search; a SID the directory does not hold (well-known ones) is
// left out. A failed search only costs the names.
func (s *session) sidNames(dom *domainInfo, sids []string) map[string]string {
	names := map[string]string{}
	if len(sids) == 0 {
		return names
	}
	var b strings.Builder
	b.WriteString("(|")
	for _, sid := range sids {
		b.WriteString("(objectSid=" + ldap.EscapeFilter(sid) + ")")
	}
	b.WriteString(")")
	req := ldap.NewSearchRequest(dom.BaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, len(sids), 0, false,
		b.String(), []string{"sAMAccountName", "objectSid"}, nil)
	res, err := s.search("name the account's groups", req)
	if err != nil || res == nil {
		return names
	}
	for _, e := range res.Entries {
		sid, err := secdesc.SIDString(e.GetRawAttributeValue("objectSid"))
		if sam := e.GetAttributeValue("sAMAccountName"); err == nil && sam != "" {
			names[sid] = dom.NetBIOS + `\` + sam
		}
	}
	return names
}

// now is the DC's clock when known, so lockout and expiry compare with the
// clock that set them; Config.Now overrides it.
func (d *Directory) now(dom *domainInfo) time.Time {
	switch {
	case d.cfg.Now != nil:
		return d.cfg.Now()
	case !dom.DCTime.IsZero():
		return dom.DCTime
	}
	return time.Now()
}
