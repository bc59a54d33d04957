package ad

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// userAccountControl and msDS-User-Account-Control-Computed bits that the
// judgement uses (MS-ADTS 2.2.16).
const (
	uacAccountDisable     = 0x00000002
	uacLockout            = 0x00000010
	uacDontExpirePassword = 0x00010000
	uacSmartcardRequired  = 0x00040000
	uacPasswordExpired    = 0x00800000
)

// uacNames names every bit, for the evidence.
var uacNames = []struct {
	bit  uint32
	name string
}{
	{0x00000001, "SCRIPT"}, {uacAccountDisable, "ACCOUNTDISABLE"}, {0x00000008, "HOMEDIR_REQUIRED"},
	{uacLockout, "LOCKOUT"}, {0x00000020, "PASSWD_NOTREQD"}, {0x00000040, "PASSWD_CANT_CHANGE"},
	{0x00000080, "ENCRYPTED_TEXT_PWD_ALLOWED"}, {0x00000100, "TEMP_DUPLICATE_ACCOUNT"},
	{0x00000200, "NORMAL_ACCOUNT"}, {0x00000800, "INTERDOMAIN_TRUST_ACCOUNT"},
	{0x00001000, "WORKSTATION_TRUST_ACCOUNT"}, {0x00002000, "SERVER_TRUST_ACCOUNT"},
	{uacDontExpirePassword, "DONT_EXPIRE_PASSWORD"}, {0x00020000, "MNS_LOGON_ACCOUNT"},
	{uacSmartcardRequired, "SMARTCARD_REQUIRED"}, {0x00080000, "TRUSTED_FOR_DELEGATION"},
	{0x00100000, "NOT_DELEGATED"}, {0x00200000, "USE_DES_KEY_ONLY"},
	{0x00400000, "DONT_REQ_PREAUTH"}, {uacPasswordExpired, "PASSWORD_EXPIRED"},
	{0x01000000, "TRUSTED_TO_AUTH_FOR_DELEGATION"}, {0x02000000, "NO_AUTH_DATA_REQUIRED"},
	{0x04000000, "PARTIAL_SECRETS_ACCOUNT"},
}

// uacString renders a userAccountControl value as hex and flag names, e.g.
// "0x00000202 ACCOUNTDISABLE|NORMAL_ACCOUNT".
func uacString(v uint32) string {
	var names []string
	rest := v
	for _, n := range uacNames {
		if v&n.bit != 0 {
			names = append(names, n.name)
			rest &^= n.bit
		}
	}
	if rest != 0 {
		names = append(names, fmt.Sprintf("0x%x", rest))
	}
	s := fmt.Sprintf("0x%08x", v)
	if len(names) > 0 {
		s += " " + strings.Join(names, "|")
	}
	return s
}

// fileTimeNever is the FILETIME AD uses for "never" (accountExpires,
// msDS-UserPasswordExpiryTimeComputed), next to 0.
const fileTimeNever = math.MaxInt64

// fileTimeEpochDelta is 1601-01-01 to 1970-01-01 in 100 ns units.
const fileTimeEpochDelta = 116444736000000000

// parseInt64 reads an LDAP integer attribute value.
func parseInt64(name, s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: not an integer", name, s)
	}
	return v, nil
}

// fileTime converts a FILETIME (100 ns since 1601, UTC) to a time.
func fileTime(v int64) time.Time {
	sec := (v - fileTimeEpochDelta) / 1e7
	nsec := ((v - fileTimeEpochDelta) % 1e7) * 100
	return time.Unix(sec, nsec).UTC()
}

// interval converts an AD interval (a negative count of 100 ns, as in
// lockoutDuration or maxPwdAge) to a duration. forever is true for the
// "never" value (the most negative int64) or one too long for a duration.
func interval(v int64) (d time.Duration, forever bool) {
	if v == math.MinInt64 {
		return 0, true
	}
	if v < 0 {
		v = -v
	}
	if v > math.MaxInt64/100 {
		return 0, true
	}
	return time.Duration(v * 100), false
}

// unbounded reads an interval in which 0, too, means without end, as in
// lockoutDuration (locked until an administrator unlocks) and maxPwdAge
// (passwords never expire).
func unbounded(v int64) (d time.Duration, forever bool) {
	d, forever = interval(v)
	return d, forever || v == 0
}

// generalizedTime parses an LDAP GeneralizedTime such as AD's RootDSE
// currentTime "20251130061500.0Z".
func generalizedTime(s string) (time.Time, error) {
	for _, layout := range []string{"20060102150405.0Z0700", "20060102150405Z0700", "20060102150405.0Z", "20060102150405Z"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("generalized time %q: unrecognised", s)
}

// logonHours is AD's logonHours: 21 bytes, 168 bits, one per hour of the
// week in UTC, starting Sunday 00:00, least significant bit first.
type logonHours []byte

const hoursPerWeek = 7 * 24

// valid reports whether the bitmap has the one size AD uses.
func (h logonHours) valid() bool { return len(h) == hoursPerWeek/8 }

func hourOfWeek(t time.Time) int {
	t = t.UTC()
	return int(t.Weekday())*24 + t.Hour()
}

// allowed reports whether a logon at t is allowed.
func (h logonHours) allowed(t time.Time) bool {
	return h.bit(hourOfWeek(t))
}

func (h logonHours) bit(i int) bool {
	i = ((i % hoursPerWeek) + hoursPerWeek) % hoursPerWeek
	return h[i/8]&(1<<(i%8)) != 0
}

// next returns the start of the next allowed hour after t; ok is false when
// no hour of the week is allowed.
func (h logonHours) next(t time.Time) (time.Time, bool) {
	start := t.UTC().Truncate(time.Hour)
	for k := 1; k <= hoursPerWeek; k++ {
		c := start.Add(time.Duration(k) * time.Hour)
		if h.allowed(c) {
			return c, true
		}
	}
	return time.Time{}, false
}

// count is the number of allowed hours in the week.
func (h logonHours) count() int {
	n := 0
	for i := range hoursPerWeek {
		if h.bit(i) {
			n++
		}
	}
	return n
}

// String summarises the allowed hours per UTC day: "none", "all", or
// "Mon 07-19, Tue 07-19 UTC".
func (h logonHours) String() string {
	switch n := h.count(); n {
	case 0:
		return "none"
	case hoursPerWeek:
		return "all"
	}
	var days []string
	for d := range 7 {
		var spans []string
		for hr := 0; hr < 24; {
			if !h.bit(d*24 + hr) {
				hr++
				continue
			}
			from := hr
			for hr < 24 && h.bit(d*24+hr) {
				hr++
			}
			spans = append(spans, fmt.Sprintf("%02d-%02d", from, hr))
		}
		if len(spans) > 0 {
			days = append(days, time.Weekday(d).String()[:3]+" "+strings.Join(spans, "+"))
		}
	}
	return strings.Join(days, ", ") + " UTC"
}
