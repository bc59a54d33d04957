package registry

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
)

// Address is where a device answers SNMP, as stored or as a poll names it:
// HOST or HOST:PORT ([v6]:PORT), port 161 when left out.
type Address string

// SNMPAddr is the address in one spelling: lower-case HOST:PORT with the
// port always given, so "MFP1", "mfp1:161" and "mfp1" are one device. ""
// stays ""; an address snmp.ParseHostPort refuses is only lower-cased.
func (a Address) SNMPAddr() string {
	if a == "" {
		return ""
	}
	host, port, err := a.hostPort()
	if err != nil {
		return strings.ToLower(string(a))
	}
	return strings.ToLower(net.JoinHostPort(host, strconv.Itoa(int(port))))
}

// Host is the address's host, a name or an IP address (without brackets),
// as it is looked up; an address snmp.ParseHostPort refuses is given whole
// (it resolves to nothing).
func (a Address) Host() string {
	host, _, err := a.hostPort()
	if err != nil {
		return string(a)
	}
	return host
}

// hostPort is snmp.ParseHostPort over a, which may also be a bracketed
// IPv6 address without a port; the host comes without brackets.
func (a Address) hostPort() (string, uint16, error) {
	s := string(a)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1] // a bracketed IPv6 address without a port
	}
	host, port, err := snmp.ParseHostPort(s)
	return strings.Trim(host, "[]"), port, err
}

// Same reports whether a and b are one device's address.
func (a Address) Same(b Address) bool { return a != "" && a.SNMPAddr() == b.SNMPAddr() }

// SNMPAddr is the device's address in one spelling (Address.SNMPAddr).
func (d Device) SNMPAddr() string { return Address(d.Address).SNMPAddr() }

// Reachable reports whether a device polled every interval and last heard
// from at seen still counts as answering: within two intervals (one poll
// may be lost) and 10 s (a slow answer). A device never heard from is not.
func Reachable(seen time.Time, interval time.Duration) bool {
	return !seen.IsZero() && time.Since(seen) < 2*interval+10*time.Second
}

// Resolved is a stored destination as it is replayed: with its device (nil
// when it has none, or names one not registered), the scanwarden.Target
// built from both and the device's client its checks replay (Client; for a
// bridged destination scanwarden's own, zero).
type Resolved struct {
	Destination
	Device *Device
	Target scanwarden.Target
	Client smbcheck.Device
	// Profile is what the check's report keeps of Client's origins (nil:
	// no device, or bridged).
	Profile *smbcheck.Profile
}

// Resolve pairs each destination with its device (names match without
// regard to case) and the target to replay.
func Resolve(ds []Destination, devs []Device) []Resolved {
	byName := make(map[string]*Device, len(devs))
	for i := range devs {
		byName[strings.ToLower(devs[i].Name)] = &devs[i]
	}
	out := make([]Resolved, 0, len(ds))
	for _, d := range ds {
		var dev *Device
		if d.Device != "" {
			dev = byName[strings.ToLower(d.Device)]
		}
		client := dev.Client()
		var prof *smbcheck.Profile
		if d.Bridged() {
			// the MFP speaks only to the fallback share; the real folder
			// gets scanwarden's own client, the forwarder's
			client = smbcheck.Device{}
		} else if dev != nil {
			prof = ReportProfile(dev.Name, dev.Values())
		}
		out = append(out, Resolved{Destination: d, Device: dev, Target: d.Target(dev), Client: client, Profile: prof})
	}
	return out
}
