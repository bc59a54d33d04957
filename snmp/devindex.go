package snmp

import (
	"net"
	"net/netip"
	"strings"
	"sync"
)

// DeviceIndex matches e-mails to devices: by configured sender address,
// by the serial number quoted in the body, or by the sending IP.
type DeviceIndex struct {
	mu      sync.RWMutex
	senders map[string]string
	serials map[string]string
	ips     map[netip.Addr]string
	named   map[netip.Addr]string // devices given by name, as last resolved (SetNamed)
}

// NewDeviceIndex returns an empty index.
func NewDeviceIndex() *DeviceIndex {
	return &DeviceIndex{senders: map[string]string{}, serials: map[string]string{}, ips: map[netip.Addr]string{},
		named: map[netip.Addr]string{}}
}

// SetSender says mail from address comes from device.
func (d *DeviceIndex) SetSender(address, device string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.senders[strings.ToLower(address)] = device
}

// Add indexes an inventoried device by serial and IP.
func (d *DeviceIndex) Add(inv Inventory) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if inv.Serial != "" {
		d.serials[strings.ToUpper(inv.Serial)] = inv.Address
	}
	if host, _, err := net.SplitHostPort(inv.Address); err == nil {
		if ip, err := netip.ParseAddr(host); err == nil {
			d.ips[ip.Unmap()] = inv.Address
		}
	}
}

// SetNamed replaces the devices given by name with named: each resolved
// address and its device. A device given by address stays indexed by it.
func (d *DeviceIndex) SetNamed(named map[netip.Addr]string) {
	m := make(map[netip.Addr]string, len(named))
	for ip, dev := range named {
		m[ip.Unmap()] = dev
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.named = m
}

// byIP is the device at ip: by its address, else by its resolved name.
// The caller holds mu.
func (d *DeviceIndex) byIP(ip netip.Addr) (string, bool) {
	if dev, ok := d.ips[ip.Unmap()]; ok {
		return dev, true
	}
	dev, ok := d.named[ip.Unmap()]
	return dev, ok
}

// ByIP returns the device indexed under ip (a device's polled address, its
// inventory or its resolved name), or false.
func (d *DeviceIndex) ByIP(ip netip.Addr) (string, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byIP(ip)
}

// Lookup returns the device and how it was matched ("sender", "serial",
// "ip"), or ("", "").
func (d *DeviceIndex) Lookup(from string, ip netip.Addr, serial string) (string, string) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if dev, ok := d.senders[strings.ToLower(from)]; ok {
		return dev, "sender"
	}
	if dev, ok := d.serials[strings.ToUpper(serial)]; ok && serial != "" {
		return dev, "serial"
	}
	if dev, ok := d.byIP(ip); ok {
		return dev, "ip"
	}
	return "", ""
}
