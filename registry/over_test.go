package registry

import (
	"errors"
	"testing"

	"github.com/scanwarden/scanwarden"
)

func TestDeviceOver(t *testing.T) {
	old := Device{Name: "mfp", Address: "10.0.0.5", SysName: "MFP5", Model: "TASKalfa",
		SNMP: SNMP{Version: "2c", Community: scanwarden.NewSecret("c0mm")}}
	for _, c := range []struct {
		name  string
		d     Device
		given bool
		check func(Device) bool
		field string // a refusal's field
	}{
		{"empty fields kept", Device{Name: "mfp", Workstation: "WS"}, false,
			func(d Device) bool {
				return d.Address == "10.0.0.5" && d.SysName == "MFP5" && d.Model == "TASKalfa" && d.Workstation == "WS" && d.SNMP.Community.Reveal() == "c0mm"
			}, ""},
		{"the same agent, another spelling", Device{Name: "mfp", Address: "10.0.0.5:161"}, false,
			func(d Device) bool { return d.SNMP.Community.Reveal() == "c0mm" }, ""},
		{"the version alone changes", Device{Name: "mfp", SNMP: SNMP{Version: "1"}}, false,
			func(d Device) bool { return d.SNMP.Version == "1" && d.SNMP.Community.Reveal() == "c0mm" }, ""},
		{"another address without credentials", Device{Name: "mfp", Address: "192.0.2.66"}, false, nil, "community"},
		{"another address with new ones", Device{Name: "mfp", Address: "192.0.2.66", SNMP: SNMP{Community: scanwarden.NewSecret("new")}}, true,
			func(d Device) bool { return d.Address == "192.0.2.66" && d.SNMP.Community.Reveal() == "new" }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.d.Over(old, c.given)
			var fe *scanwarden.FieldError
			if c.field != "" {
				if !errors.As(err, &fe) || fe.Field != c.field {
					t.Fatalf("got %v, want a refusal on %s", err, c.field)
				}
				return
			}
			if err != nil || !c.check(got) {
				t.Fatalf("got %+v %v", got, err)
			}
		})
	}
}
