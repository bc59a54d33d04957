package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/snmp"
)

// SNMP is [snmp]: the watch loop over the registry's devices.
type SNMP struct {
	Interval          Duration `toml:"interval"`            // how often every device is polled
	CommunityFile     string   `toml:"community_file"`      // "" = community "public"
	TrapListen        string   `toml:"trap_listen"`         // "" = off, e.g. ":162"
	TrapCommunityFile string   `toml:"trap_community_file"` // file holding the community traps must carry (trap_listen needs it or trap_v3_user)
	// An SNMPv3 user whose traps are taken, beside or instead of the
	// community: authNoPriv, or authPriv with trap_v3_priv_file; never noAuth.
	TrapV3User      string   `toml:"trap_v3_user"`
	TrapV3AuthProto string   `toml:"trap_v3_auth_proto"` // "" = SHA
	TrapV3AuthFile  string   `toml:"trap_v3_auth_file"`  // file holding trap_v3_user's auth password (required with it: noAuth traps are never taken)
	TrapV3PrivProto string   `toml:"trap_v3_priv_proto"` // "" = AES
	TrapV3PrivFile  string   `toml:"trap_v3_priv_file"`  // "" = authNoPriv
	SMTPListen      string   `toml:"smtp_listen"`        // "" = off, e.g. ":2525"
	CIDR            []string `toml:"cidr"`               // networks swept for Kyocera devices
	Allow           []string `toml:"allow"`              // networks whose traps and mail are taken besides the devices' (a mail relay)
	RulesFile       string   `toml:"rules_file"`         // a YAML file of send-failure rules replacing the built-in ones ("" = built in)

	Community     scanwarden.Secret `toml:"-"`
	TrapCommunity scanwarden.Secret `toml:"-"`
	TrapV3Auth    scanwarden.Secret `toml:"-"`
	TrapV3Priv    scanwarden.Secret `toml:"-"`
}

// TrapV3 is the configured SNMPv3 trap user, nil when none.
func (s SNMP) TrapV3() *snmp.V3Auth {
	if s.TrapV3User == "" {
		return nil
	}
	return &snmp.V3Auth{User: s.TrapV3User, AuthProto: s.TrapV3AuthProto, AuthPass: s.TrapV3Auth,
		PrivProto: s.TrapV3PrivProto, PrivPass: s.TrapV3Priv}
}

// validate checks [snmp].
func (s SNMP) validate(bad badValue) {
	if s.Interval.D() < time.Second {
		bad("snmp.interval", s.Interval.D(), "at least 1s")
	}
	for _, l := range []struct{ key, v string }{{"snmp.trap_listen", s.TrapListen}, {"snmp.smtp_listen", s.SMTPListen}} {
		if l.v == "" {
			continue
		}
		if err := checkListen(l.v, true); err != nil {
			bad(l.key, strconv.Quote(l.v), err.Error())
		}
	}
	if s.TrapCommunityFile != "" && s.TrapListen == "" {
		bad("snmp.trap_community_file", strconv.Quote(s.TrapCommunityFile), "needs snmp.trap_listen")
	}
	if s.TrapListen != "" && s.TrapCommunityFile == "" && s.TrapCommunity.IsZero() && s.TrapV3User == "" {
		bad("snmp.trap_listen", strconv.Quote(s.TrapListen), "needs snmp.trap_community_file or snmp.trap_v3_user (traps with any community are not taken)")
	}
	s.validateTrapV3(bad)
	for _, a := range s.Allow {
		if _, err := samba.ParseAllowEntry(a); err != nil {
			bad("snmp.allow", strconv.Quote(a), "not a network such as 192.168.10.0/24, or an address")
		}
	}
	if len(s.Allow) > 0 && s.TrapListen == "" && s.SMTPListen == "" {
		bad("snmp.allow", fmt.Sprint(s.Allow), "needs snmp.trap_listen or snmp.smtp_listen")
	}
	for _, cidr := range s.CIDR {
		p, err := samba.ParseAllowEntry(cidr)
		if err != nil {
			bad("snmp.cidr", strconv.Quote(cidr), "not a network such as 192.168.10.0/24, or an address")
		} else if _, err := snmp.ExpandPrefix(p, snmp.DefaultSweepMax); err != nil {
			bad("snmp.cidr", strconv.Quote(cidr), "at most 1,024 addresses")
		}
	}
}

// Networks are [snmp] cidr, AllowNets [snmp] allow, read with
// samba.ParseAllowEntry as the validation reads them (the one parser of
// an address or a network). An entry that does not parse is an error
// naming it, never left out.
func (s SNMP) Networks() ([]netip.Prefix, error) { return parseNets("snmp.cidr", s.CIDR) }

// AllowNets: see Networks.
func (s SNMP) AllowNets() ([]netip.Prefix, error) { return parseNets("snmp.allow", s.Allow) }

func parseNets(key string, entries []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, e := range entries {
		p, err := samba.ParseAllowEntry(e)
		if err != nil {
			return nil, configError("", 0, key, strconv.Quote(e), err.Error())
		}
		out = append(out, p)
	}
	return out, nil
}

// validateTrapV3 checks the snmp.trap_v3_* keys.
func (s SNMP) validateTrapV3(bad badValue) {
	if s.TrapV3User != "" && s.TrapListen == "" {
		bad("snmp.trap_v3_user", strconv.Quote(s.TrapV3User), "needs snmp.trap_listen")
	}
	for _, k := range []struct{ key, v string }{{"snmp.trap_v3_auth_file", s.TrapV3AuthFile}, {"snmp.trap_v3_priv_file", s.TrapV3PrivFile},
		{"snmp.trap_v3_auth_proto", s.TrapV3AuthProto}, {"snmp.trap_v3_priv_proto", s.TrapV3PrivProto}} {
		if k.v != "" && s.TrapV3User == "" {
			bad(k.key, strconv.Quote(k.v), "needs snmp.trap_v3_user")
		}
	}
	if s.TrapV3User != "" && s.TrapV3AuthFile == "" && s.TrapV3Auth.IsZero() {
		bad("snmp.trap_v3_user", strconv.Quote(s.TrapV3User), "needs snmp.trap_v3_auth_file (noAuth traps are not taken)")
	} else if u := s.TrapV3(); u != nil && !u.AuthPass.IsZero() {
		if err := u.Validate(); err != nil {
			bad("snmp.trap_v3_user", strconv.Quote(s.TrapV3User), err.Error())
		}
	} else if u != nil {
		// Passphrases not read yet (Validate before finish): check what can be.
		probe := *u
		probe.AuthPass = scanwarden.NewSecret("12345678")
		if !u.PrivPass.IsZero() || s.TrapV3PrivFile != "" {
			probe.PrivPass = probe.AuthPass
		}
		if err := probe.Validate(); err != nil {
			bad("snmp.trap_v3_user", strconv.Quote(s.TrapV3User), err.Error())
		}
	}
}
