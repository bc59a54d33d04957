package registry

import (
	"net/netip"
	"strings"
)

// LinkLocalSetting is the config key (scanwarden.toml, top level) that lets
// a destination or a webhook name a link-local address.
const LinkLocalSetting = "allow_link_local"

// LinkLocalReason is why such an address is refused, for a field error.
const LinkLocalReason = "a link-local address (169.254.0.0/16, fe80::/10: where cloud metadata services answer); " +
	"refused unless " + LinkLocalSetting + " = true in scanwarden.toml"

// LinkLocal says whether host — an address as a destination or a URL
// writes it ("169.254.169.254", "[fe80::1%eth0]") — is a link-local
// address. A name is not resolved here.
func LinkLocal(host string) bool {
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return false
	}
	a = a.Unmap()
	return a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast()
}

// CheckLinkLocal refuses a destination whose server is a link-local
// address unless allow (the config's allow_link_local): a *FieldError
// naming the setting.
func (d Destination) CheckLinkLocal(allow bool) error {
	if !allow && LinkLocal(d.Host) {
		return badField("host", d.Host, LinkLocalReason)
	}
	return nil
}
