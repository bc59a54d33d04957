package daemon

import (
	"context"
	"net/netip"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// deviceLearner keeps what the fallback share saw of each MFP's SMB
// client in that device's profile (receiver.Observer): the observation's
// address is matched to the one registered device whose address (an IP,
// or a name resolved as the share's allowlist resolves it) it is. An
// address no device or several devices have teaches nothing.
// changed, when set, is called after a device's client changed: its
// destinations are checked again as that client at once.
type deviceLearner struct {
	p       *receiverPart
	changed func()
}

// Observe implements receiver.Observer.
func (l deviceLearner) Observe(ctx context.Context, o samba.Observation) {
	ip, err := netip.ParseAddr(o.Address)
	if err != nil {
		return
	}
	devs, err := l.p.st.Devices().Devices(ctx)
	if err != nil {
		l.p.log.Warn("device profile not learned", "address", o.Address, "err", err)
		return
	}
	name := ""
	for _, d := range l.p.resolveDevices(ctx, devs) {
		for _, a := range d.Addrs {
			if a.Unmap() != ip.Unmap() {
				continue
			}
			if name != "" && name != d.Name {
				l.p.log.Info("device profile not learned: two devices have the address", "address", o.Address, "devices", []string{name, d.Name})
				return
			}
			name = d.Name
		}
	}
	if name == "" {
		return
	}
	changed, err := l.p.st.Devices().LearnDevice(ctx, name, o)
	if err != nil {
		l.p.log.Warn("device profile not learned", "device", name, "err", err)
		return
	}
	if !changed {
		return
	}
	l.p.log.Info("device's SMB client learned on the fallback share: its destinations are checked as it", "device", name, "session", o.Session())
	if l.changed != nil {
		l.changed()
	}
}
