package config

import (
	"time"

	"github.com/scanwarden/scanwarden/warning"
)

// Warnings is [warnings]: when a destination whose checks pass is
// said to be about to fail (a warning beside the verdict, never changing
// it); 0 turns that warning off.
type Warnings struct {
	// PasswordDays: the scan account's password expires within this many
	// days (password-expires-soon).
	PasswordDays int `toml:"password_days"`
	// AccountDays: the scan account itself (accountExpires) expires within
	// this many days (account-expires-soon).
	AccountDays int `toml:"account_days"`
	// DiskPercent: the destination's volume has less than this percentage
	// free — said at once (disk-filling).
	DiskPercent int `toml:"disk_percent"`
	// DiskFloorBytes: the volume has fewer than this many bytes free — said
	// at once (disk-filling).
	DiskFloorBytes int64 `toml:"disk_floor_bytes"`
	// DiskDays: the free space the last checks measured, as a trend, runs
	// out within this many days (disk-filling, with the projected day).
	// The trend is the median slope of the samples (Theil–Sen: temporary
	// files coming and going do not move it) and is said only from at
	// least 5 checks over a span of at least 6 hours and half the time to
	// full it announces; the headline states the span.
	DiskDays int `toml:"disk_days"`
	// LockoutRise: this many bad passwords or more between two checks of a
	// destination that scanwarden did not send (lockout-pressure).
	LockoutRise int `toml:"lockout_rise"`
	// LockoutQuiet: lockout-pressure stays raised until no bad password
	// that scanwarden did not send has reached the DC for this long
	// (default "8h", a working day), through the good logons that reset
	// the DC's count meanwhile; raised once, cleared once. scanwarden's own
	// failed logons are never counted: each one is matched by its time.
	LockoutQuiet Duration `toml:"lockout_quiet"`
	// OldPasswordPeriod: how long the DC keeps accepting an account's
	// previous password over NTLM after a change (default "60m", as
	// Windows' and Samba's "old password allowed period"). A check that
	// logs on with a password last known current before the account's
	// pwdLastSet raises previous-password, naming when the DC stops
	// accepting it; "0s" turns that warning off.
	OldPasswordPeriod Duration `toml:"old_password_period"`
}

// Thresholds is the section as package warning takes it.
func (w Warnings) Thresholds() warning.Thresholds {
	return warning.Thresholds{PasswordDays: w.PasswordDays, AccountDays: w.AccountDays, DiskPercent: w.DiskPercent,
		DiskFloorBytes: w.DiskFloorBytes, DiskDays: w.DiskDays, LockoutRise: w.LockoutRise, LockoutQuiet: w.LockoutQuiet.D(),
		OldPasswordPeriod: w.OldPasswordPeriod.D()}
}

func defaultWarnings() Warnings {
	t := warning.DefaultThresholds()
	return Warnings{PasswordDays: t.PasswordDays, AccountDays: t.AccountDays, DiskPercent: t.DiskPercent,
		DiskFloorBytes: t.DiskFloorBytes, DiskDays: t.DiskDays, LockoutRise: t.LockoutRise, LockoutQuiet: Duration(t.LockoutQuiet),
		OldPasswordPeriod: Duration(t.OldPasswordPeriod)}
}

// validate checks [warnings].
func (wc Warnings) validate(bad badValue) {
	for _, d := range []struct {
		key string
		v   int
	}{{"warnings.password_days", wc.PasswordDays}, {"warnings.account_days", wc.AccountDays}, {"warnings.disk_days", wc.DiskDays}} {
		if d.v < 0 || d.v > 366 {
			bad(d.key, d.v, "0 (off) .. 366 days")
		}
	}
	if wc.DiskPercent < 0 || wc.DiskPercent > 99 {
		bad("warnings.disk_percent", wc.DiskPercent, "0 (off) .. 99")
	}
	if wc.DiskFloorBytes < 0 {
		bad("warnings.disk_floor_bytes", wc.DiskFloorBytes, "0 (off) or more")
	}
	if wc.LockoutRise < 0 || wc.LockoutRise > 100 {
		bad("warnings.lockout_rise", wc.LockoutRise, "0 (off) .. 100")
	}
	if q := wc.LockoutQuiet.D(); q < 0 || q > 7*24*time.Hour {
		bad("warnings.lockout_quiet", q, "0s .. 168h (the own failed logons it is judged against are kept 8 days)")
	}
	if p := wc.OldPasswordPeriod.D(); p < 0 || p > 24*time.Hour {
		bad("warnings.old_password_period", p, "0s (off) .. 24h")
	}
}
