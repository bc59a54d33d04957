package ad

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden/internal/secdesc"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// userAttrs are read from the account; nothing secret among them.
var userAttrs = []string{
	"sAMAccountName", "userPrincipalName", "displayName", "userAccountControl",
	"msDS-User-Account-Control-Computed", "lockoutTime", "badPwdCount", "badPasswordTime",
	"pwdLastSet", "msDS-UserPasswordExpiryTimeComputed", "accountExpires", "userWorkstations",
	"logonHours", "memberOf", "objectSid", "tokenGroups", "msDS-ResultantPSO",
}

// record is an account's attributes, decoded.
type record struct {
	DN, SAM, UPN, Display string
	UAC                   uint32
	UACComputed           uint32
	HasUACComputed        bool
	LockoutTime           int64 // FILETIME, 0: not locked
	BadPwdCount           int
	BadPasswordTime       int64
	PwdLastSet            int64
	PwdExpiry             int64 // msDS-UserPasswordExpiryTimeComputed
	HasPwdExpiry          bool
	AccountExpires        int64
	Workstations          []string
	LogonHours            logonHours
	HasLogonHours         bool
	MemberOf              []string
	SID                   string
	TokenGroups           []string
	PSO                   string
	Raw                   smbcheck.Evidence
}

func parseUser(e *ldap.Entry) (*record, error) {
	r := &record{DN: e.DN, SAM: e.GetAttributeValue("sAMAccountName"), UPN: e.GetAttributeValue("userPrincipalName"),
		Display: e.GetAttributeValue("displayName"), MemberOf: e.GetAttributeValues("memberOf"),
		PSO: e.GetAttributeValue("msDS-ResultantPSO"), Raw: smbcheck.Evidence{}}
	if err := r.parseCounters(e); err != nil {
		return nil, err
	}
	if s := e.GetAttributeValue("userWorkstations"); s != "" {
		r.Raw["userWorkstations"] = s
		for _, w := range strings.Split(s, ",") {
			if w = strings.TrimSpace(w); w != "" {
				r.Workstations = append(r.Workstations, w)
			}
		}
	}
	if vals := e.GetRawAttributeValues("logonHours"); len(vals) > 0 {
		r.LogonHours, r.HasLogonHours = logonHours(vals[0]), true
		r.Raw["logonHours"] = hex.EncodeToString(vals[0])
	}
	if err := r.parseSIDs(e); err != nil {
		return nil, err
	}
	for _, name := range []string{"sAMAccountName", "userPrincipalName", "displayName", "msDS-ResultantPSO"} {
		if s := e.GetAttributeValue(name); s != "" {
			r.Raw[name] = s
		}
	}
	if len(r.MemberOf) > 0 {
		r.Raw["memberOf"] = r.MemberOf
	}
	return r, nil
}

// parseCounters reads the numeric attributes: times (FILETIME), the
// userAccountControl flags and badPwdCount.
func (r *record) parseCounters(e *ldap.Entry) error {
	var err error
	// num reads one integer attribute, its text kept as evidence; ok is
	// false when it is absent (or an earlier one was no number).
	num := func(name string) (v int64, ok bool) {
		s := e.GetAttributeValue(name)
		if s == "" || err != nil {
			return 0, false
		}
		if v, err = parseInt64(name, s); err != nil {
			return 0, false
		}
		r.Raw[name] = s
		return v, true
	}
	r.LockoutTime, _ = num("lockoutTime")
	r.BadPasswordTime, _ = num("badPasswordTime")
	r.PwdLastSet, _ = num("pwdLastSet")
	r.PwdExpiry, r.HasPwdExpiry = num("msDS-UserPasswordExpiryTimeComputed")
	r.AccountExpires, _ = num("accountExpires")
	if v, ok := num("userAccountControl"); ok {
		r.UAC = uint32(v)
		r.Raw["userAccountControl"] = uacString(r.UAC)
	}
	if v, ok := num("msDS-User-Account-Control-Computed"); ok {
		r.UACComputed, r.HasUACComputed = uint32(v), true
		r.Raw["msDS-User-Account-Control-Computed"] = uacString(r.UACComputed)
	}
	if v, ok := num("badPwdCount"); ok {
		r.BadPwdCount = int(max(0, min(v, 1<<16)))
		r.Raw["badPwdCount"] = r.BadPwdCount
	}
	return err
}

// parseSIDs reads the account's own SID and its groups' (tokenGroups).
func (r *record) parseSIDs(e *ldap.Entry) error {
	if b := e.GetRawAttributeValue("objectSid"); len(b) > 0 {
		sid, err := secdesc.SIDString(b)
		if err != nil {
			return fmt.Errorf("objectSid: %w", err)
		}
		r.SID = sid
		r.Raw["objectSid"] = sid
	}
	for _, b := range e.GetRawAttributeValues("tokenGroups") {
		sid, err := secdesc.SIDString(b)
		if err != nil {
			return fmt.Errorf("tokenGroups: %w", err)
		}
		r.TokenGroups = append(r.TokenGroups, sid)
	}
	if len(r.TokenGroups) > 0 {
		r.Raw["tokenGroups"] = r.TokenGroups
	}
	return nil
}
