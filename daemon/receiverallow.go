package daemon

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/registry"
)

// receiverAllow is who may connect to serve's fallback share: the
// registered devices' addresses (names resolved, 2 s each) and
// [receiver] allow — as the trap and mail listeners admit the watched
// devices and [snmp] allow. With neither (no MFP registered yet, none of
// their names resolving, no allow) it is the networks of this box's
// interfaces, with a standing warning: the admin setting the box up can
// point an MFP at the share and see it work, nothing beyond a router can
// connect, and the list narrows to the MFPs by itself once they are
// registered. (Refusing everyone would look like a broken share; admitting
// every address would let routed networks in.) When the box's networks
// cannot be read either, it is 127.0.0.1 alone (smb.conf: hosts allow
// 127.0.0.1, hosts deny ALL), and the warning says so: an empty list would
// write no hosts allow at all, admitting any address. unresolved names the
// devices whose address gave none.
func (m *Main) receiverAllow(ctx context.Context, configured []netip.Prefix) (allow []netip.Prefix, warning string, unresolved []string, err error) {
	devs, err := m.st.Devices(ctx)
	if err != nil {
		// Not "no device": the caller keeps the list it has.
		return nil, "", nil, fmt.Errorf("fallback share allowlist: devices not read: %w", err)
	}
	seen := map[netip.Prefix]bool{}
	add := func(p netip.Prefix) {
		if p = p.Masked(); !seen[p] {
			seen[p] = true
			allow = append(allow, p)
		}
	}
	for _, r := range m.resolveDevices(ctx, devs) {
		if len(r.ips) == 0 {
			unresolved = append(unresolved, r.name)
			continue
		}
		for _, ip := range r.ips {
			add(netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	for _, p := range configured {
		add(p)
	}
	if len(allow) > 0 {
		sortPrefixes(allow)
		return allow, "", unresolved, nil
	}
	why := "no MFP is registered"
	if len(unresolved) > 0 {
		why = "no registered MFP's address resolves (" + strings.Join(unresolved, ", ") + ")"
	}
	allow, warning = m.localAllow(why + " and [receiver] allow is empty")
	return allow, warning, unresolved, nil
}

// localAllow is the allowlist when no MFP can be named: the box's networks,
// or 127.0.0.1 alone when they cannot be read (never an empty list: that
// writes no hosts allow, which admits any address); warning says why
// (starting with why) and what the share admits.
func (m *Main) localAllow(why string) (allow []netip.Prefix, warning string) {
	const fix = "register the MFPs (scanwarden device add, or import their address book) or set [receiver] allow"
	interfaceNets := m.interfaceNets
	if interfaceNets == nil {
		interfaceNets = localNetworks
	}
	local, err := interfaceNets()
	seen := map[netip.Prefix]bool{}
	var nets []string
	for _, p := range local {
		if p = p.Masked(); !seen[p] {
			seen[p] = true
			allow = append(allow, p)
		}
	}
	sortPrefixes(allow)
	for _, p := range allow {
		nets = append(nets, p.String())
	}
	if len(allow) == 0 {
		cause := "none found"
		if err != nil {
			cause = err.Error()
		}
		return []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			fmt.Sprintf("%s, and this box's networks could not be read (%s): the fallback share admits 127.0.0.1 only (this box), no MFP can store a scan; %s",
				why, cause, fix)
	}
	return allow, fmt.Sprintf("%s: the fallback share admits any host on this box's networks (%s); %s", why, strings.Join(nets, " "), fix)
}

type resolvedDevice struct {
	name string
	ips  []netip.Addr
}

// resolveDevices gives the addresses of the devices that have one: names
// are looked up at once (8 at a time, 2 s each, 5 s in all: an import
// waits for it); a name that does not resolve now
// keeps the addresses it last resolved to (a DNS hiccup does not lock an
// MFP out).
func (m *Main) resolveDevices(ctx context.Context, devs []registry.Device) []resolvedDevice {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out := make([]resolvedDevice, 0, len(devs))
	for _, d := range devs {
		if d.Address != "" {
			out = append(out, resolvedDevice{name: d.Name})
		}
	}
	addrs := map[string]string{}
	for _, d := range devs {
		addrs[d.Name] = d.Address
	}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i].ips, _ = deviceIPs(ctx, addrs[out[i].name])
		}()
	}
	wg.Wait()
	m.recvResolvedMu.Lock()
	defer m.recvResolvedMu.Unlock()
	if m.recvResolved == nil {
		m.recvResolved = map[string][]netip.Addr{}
	}
	seen := map[string]bool{}
	for i, r := range out {
		key := r.name + "\x00" + addrs[r.name]
		seen[key] = true
		if len(r.ips) > 0 {
			m.recvResolved[key] = r.ips
		} else {
			out[i].ips = m.recvResolved[key]
		}
	}
	for k := range m.recvResolved {
		if !seen[k] {
			delete(m.recvResolved, k) // device gone or readdressed
		}
	}
	return out
}

// deviceIPs are the addresses of a device's HOST[:PORT].
func deviceIPs(ctx context.Context, addr string) ([]netip.Addr, error) {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{ip.Unmap()}, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(rctx, "ip", host)
	for i := range ips {
		ips[i] = ips[i].Unmap()
	}
	return ips, err
}

// localNetworks are the networks of this box's interfaces (link-local
// IPv6 left out: smbd binds one address).
func localNetworks() ([]netip.Prefix, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("interface addresses: %w", err)
	}
	var out []netip.Prefix
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if ip.IsLinkLocalUnicast() {
			continue
		}
		bits, _ := n.Mask.Size()
		if ip.Is4() && bits > 32 {
			bits -= 96
		}
		out = append(out, netip.PrefixFrom(ip, bits).Masked())
	}
	return out, nil
}

func sortPrefixes(ps []netip.Prefix) {
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
}

// receiverAllowEvery is how often the share's allowlist is brought in step
// with the registry (besides at once after an import).
const receiverAllowEvery = 30 * time.Second

// syncReceiverAllowLoop runs syncReceiverAllow every receiverAllowEvery, on
// its own goroutine: a sync can take seconds of DNS and testparm, and the
// background loop must pet systemd's watchdog on time.
func (m *Main) syncReceiverAllowLoop(ctx context.Context) {
	defer m.wg.Done()
	t := time.NewTicker(receiverAllowEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.syncReceiverAllow(ctx)
		}
	}
}

// syncReceiverAllow brings the share's allowlist in step with the
// registry (every 30 s, and after an import): a change rewrites smb.conf,
// testparm validates it and smbd reloads it.
func (m *Main) syncReceiverAllow(ctx context.Context) {
	if m.recv == nil {
		return
	}
	m.recvAllowMu.Lock()
	defer m.recvAllowMu.Unlock()
	allow, warning, unresolved, err := m.receiverAllow(ctx, m.recvAllowCfg)
	if err != nil {
		m.log.Warn("fallback share allowlist kept", "err", err)
		return
	}
	key := fmt.Sprint(allow, warning)
	if key == m.recvAllowKey {
		return
	}
	if err := m.recv.SetAllow(ctx, allow, warning); err != nil {
		m.faults.set("receiver.allow", "the fallback share's allowlist was not updated (the previous one stays): "+err.Error())
		m.log.Error("fallback share allowlist not updated", "err", err)
		return
	}
	m.faults.clear("receiver.allow")
	m.recvAllowKey = key
	m.logReceiverAllow(allow, warning, unresolved)
}

func (m *Main) logReceiverAllow(allow []netip.Prefix, warning string, unresolved []string) {
	if len(unresolved) > 0 {
		m.log.Warn("fallback share: device addresses that do not resolve are not admitted", "devices", strings.Join(unresolved, ","))
	}
	if warning != "" {
		m.log.Warn("fallback share open to the local networks", "allow", fmt.Sprint(allow), "warning", warning)
		return
	}
	m.log.Info("fallback share allowlist", "allow", fmt.Sprint(allow))
}
