package config

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/scanwarden/scanwarden/internal/localname"
)

// Checks is [checks]: the scheduler.
type Checks struct {
	Interval Duration `toml:"interval"` // every destination is checked this often
	Jitter   Duration `toml:"jitter"`   // each check lands up to this much later, spreading the load
	// MaxConcurrent is the cap on checks running at once; at most one runs
	// at a time per file server whatever this says.
	MaxConcurrent int `toml:"max_concurrent"`
	// MaxFailures is the failed-logon budget per account and 30 minutes, as
	// `check --max-failures`; 0 replays nothing that can fail.
	MaxFailures int `toml:"max_failures"`
	// FailureWindow is the budget's window: set it to the domain's lockout
	// observation window when that is longer than 30 minutes.
	FailureWindow Duration `toml:"failure_window"`
	Timeout       Duration `toml:"timeout"`  // per network step
	NoWrite       bool     `toml:"no_write"` // skip the canary write
	// EventGap: device failures for one destination within this span of its
	// last event-triggered check trigger no further check (a burst of 1102s
	// is one check); a failure that names no destination checks the
	// device's destinations whose last check is older than this.
	EventGap Duration `toml:"event_gap"`
	// WINS are WINS servers (IPv4 addresses) that a check asks, besides a
	// NetBIOS broadcast and LLMNR on the box's own networks, for a host
	// name DNS does not know: an answer names the cause name-not-in-dns.
	WINS []string `toml:"wins"`
}

// WINSServers are WINS's addresses (validate has checked them).
func (ck Checks) WINSServers() []netip.Addr {
	var out []netip.Addr
	for _, s := range ck.WINS {
		if a, err := localname.ParseWINS(s); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// Incidents is [incidents].
type Incidents struct {
	CloseAfter Duration `toml:"close_after"` // green this long, with no device failure, closes an incident
}

// validate checks [checks].
func (ck Checks) validate(bad badValue) {
	if ck.Interval.D() < 10*time.Second {
		bad("checks.interval", ck.Interval.D(), "at least 10s")
	}
	if ck.Jitter.D() < 0 || ck.Jitter.D() > ck.Interval.D() {
		bad("checks.jitter", ck.Jitter.D(), "0 up to checks.interval")
	}
	if ck.MaxConcurrent < 1 || ck.MaxConcurrent > 64 {
		bad("checks.max_concurrent", ck.MaxConcurrent, "1..64")
	}
	if ck.MaxFailures < 0 || ck.MaxFailures > 10 {
		bad("checks.max_failures", ck.MaxFailures, "0 (replay nothing that can fail) .. 10")
	}
	if ck.FailureWindow.D() < time.Second {
		bad("checks.failure_window", ck.FailureWindow.D(), "at least 1s (the domain's lockout observation window)")
	}
	if ck.Timeout.D() < time.Second || ck.Timeout.D() > 2*time.Minute {
		bad("checks.timeout", ck.Timeout.D(), "1s..2m")
	}
	if ck.EventGap.D() < 0 {
		bad("checks.event_gap", ck.EventGap.D(), "0 or more")
	}
	for _, s := range ck.WINS {
		if _, err := localname.ParseWINS(s); err != nil {
			bad("checks.wins", strconv.Quote(s), "an IPv4 address such as 10.0.0.5")
		}
	}
	if len(ck.WINS) > 4 {
		bad("checks.wins", len(ck.WINS), "at most 4 servers")
	}
}

// validate checks [incidents].
func (i Incidents) validate(bad badValue) {
	if i.CloseAfter.D() < 0 {
		bad("incidents.close_after", i.CloseAfter.D(), "0 or more")
	}
}
