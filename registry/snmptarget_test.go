package registry

import (
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/snmp"
)

// TestSNMPTarget: a device's SNMP target takes its own version and
// credentials, the given community only when it stores none; an address
// that does not parse is the error.
func TestSNMPTarget(t *testing.T) {
	cfgCommunity := scanwarden.NewSecret("from-config")
	t.Run("v2c with the config's community", func(t *testing.T) {
		tg, err := Device{Address: "192.0.2.7"}.SNMPTarget(cfgCommunity)
		if err != nil || tg.Host != "192.0.2.7" || tg.Port != 161 || tg.Version != snmp.V2c || tg.Community.Reveal() != "from-config" || tg.V3 != nil {
			t.Fatalf("%+v %v", tg, err)
		}
	})
	t.Run("its own community and port", func(t *testing.T) {
		tg, err := Device{Address: "192.0.2.7:1161", SNMP: SNMP{Version: "1", Community: scanwarden.NewSecret("own")}}.SNMPTarget(cfgCommunity)
		if err != nil || tg.Port != 1161 || tg.Version != snmp.V1 || tg.Community.Reveal() != "own" {
			t.Fatalf("%+v %v", tg, err)
		}
	})
	t.Run("v3", func(t *testing.T) {
		d := Device{Address: "mfp1", SNMP: SNMP{Version: "3", V3User: "u", V3AuthProto: "SHA", V3Auth: scanwarden.NewSecret("authpass1"),
			V3PrivProto: "AES", V3Priv: scanwarden.NewSecret("privpass1")}}
		tg, err := d.SNMPTarget(cfgCommunity)
		if err != nil || tg.Version != snmp.V3 || tg.V3 == nil || tg.V3.User != "u" || tg.V3.AuthPass.Reveal() != "authpass1" || tg.V3.PrivProto != "AES" {
			t.Fatalf("%+v %v", tg, err)
		}
	})
	t.Run("a bad address", func(t *testing.T) {
		if _, err := (Device{Address: "192.0.2.7:notaport"}).SNMPTarget(cfgCommunity); err == nil {
			t.Fatal("accepted")
		}
	})
}
