package snmp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Inventory is what identifies a device. SysName is the NetBIOS name the
// device sends as NTLM workstation: smbcheck needs it.
type Inventory struct {
	Address     string    `json:"address"`
	Kyocera     bool      `json:"kyocera"`
	SysObjectID string    `json:"sys_object_id"`
	SysDescr    string    `json:"sys_descr"`
	Model       string    `json:"model"`
	Serial      string    `json:"serial"`
	Firmware    string    `json:"firmware"`
	SysName     string    `json:"sys_name"`
	SysLocation string    `json:"sys_location"`
	MAC         string    `json:"mac"`
	SeenAt      time.Time `json:"seen_at"`
}

// inventoryOIDs fit one GET.
var inventoryOIDs = []string{
	oidSysDescr, oidSysObjectID, oidSysName, oidSysLocation, oidIfPhysAddr1,
	oidHrDeviceDescr1, oidPrtGeneralSerialNumber1,
	oidKcprtModelName1, oidKcprtSerialNumber1, oidKcprtFirmware11,
}

// identify reads the inventory with one GET (v1: a GET without the
// variables the agent says it lacks, at most len(inventoryOIDs) times).
func identify(ctx context.Context, c *client, addr string, v1 bool) (Inventory, error) {
	oids := append([]string(nil), inventoryOIDs...)
	for attempt := 0; attempt <= len(inventoryOIDs); attempt++ {
		pkt, err := c.get(ctx, oids)
		var pe *PDUError
		if v1 && errors.As(err, &pe) && pe.Status == gosnmp.NoSuchName.String() && pe.Index >= 1 && pe.Index <= len(oids) && len(oids) > 1 {
			oids = append(oids[:pe.Index-1], oids[pe.Index:]...)
			continue
		}
		if err != nil {
			return Inventory{}, fmt.Errorf("identify %s: %w", addr, err)
		}
		inv := decodeInventory(pkt.Variables)
		inv.Address = addr
		return inv, nil
	}
	return Inventory{}, fmt.Errorf("identify %s: agent refuses every inventory variable", addr)
}

// decodeInventory is a pure function of the varbinds.
func decodeInventory(vars []gosnmp.SnmpPDU) Inventory {
	var inv Inventory
	var hrDescr, prtSerial string
	for _, p := range vars {
		if !pduExists(p) {
			continue
		}
		switch trimDot(p.Name) {
		case oidSysDescr:
			inv.SysDescr = pduText(p)
		case oidSysObjectID:
			if s, ok := p.Value.(string); ok && p.Type == gosnmp.ObjectIdentifier {
				inv.SysObjectID = trimDot(s)
			}
		case oidSysName:
			inv.SysName = pduText(p)
		case oidSysLocation:
			inv.SysLocation = pduText(p)
		case oidIfPhysAddr1:
			inv.MAC = formatMAC(pduBytes(p))
		case oidHrDeviceDescr1:
			hrDescr = pduText(p)
		case oidPrtGeneralSerialNumber1:
			prtSerial = pduText(p)
		case oidKcprtModelName1:
			inv.Model = pduText(p)
		case oidKcprtSerialNumber1:
			inv.Serial = pduText(p)
		case oidKcprtFirmware11:
			inv.Firmware = pduText(p)
		}
	}
	inv.Kyocera = hasPrefix(inv.SysObjectID, oidKyocera)
	if inv.Model == "" {
		inv.Model = hrDescr
	}
	if inv.Serial == "" {
		inv.Serial = prtSerial
	}
	return inv
}
