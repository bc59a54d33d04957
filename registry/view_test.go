package registry

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/snmp"
)

// TestViewsCarryNoSecret: the read models the pages and the API render
// have no field that could hold a secret (no scanwarden.Secret anywhere
// in them), and a device and a destination with every secret set show
// none of them, in JSON or printed.
func TestViewsCarryNoSecret(t *testing.T) {
	secretType := reflect.TypeFor[scanwarden.Secret]()
	var walk func(path string, ty reflect.Type, seen map[reflect.Type]bool)
	walk = func(path string, ty reflect.Type, seen map[reflect.Type]bool) {
		if ty == secretType {
			t.Errorf("%s is a secret", path)
			return
		}
		if seen[ty] {
			return
		}
		seen[ty] = true
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(path+"[]", ty.Elem(), seen)
		case reflect.Struct:
			for f := range ty.Fields() {
				walk(path+"."+f.Name, f.Type, seen)
			}
		}
	}
	for _, v := range []any{DeviceView{}, DestinationView{}, ReportView{}, ImportView{}} {
		walk(reflect.TypeOf(v).Name(), reflect.TypeOf(v), map[reflect.Type]bool{})
	}

	secrets := []string{"c0mmunity-s3cret", "v3-auth-s3cret", "v3-priv-s3cret", "dest-passw0rd"}
	dev := Device{Name: "mfp01", Address: "10.1.2.7", SNMP: SNMP{Version: "3", Community: scanwarden.NewSecret(secrets[0]),
		V3User: "watch", V3Auth: scanwarden.NewSecret(secrets[1]), V3Priv: scanwarden.NewSecret(secrets[2])}}
	dst := Destination{Name: "reception", Host: "fs1", Share: "scans", User: "scan", Password: scanwarden.NewSecret(secrets[3])}
	dv := dev.View(&snmp.Inventory{SysName: "MFP01", SeenAt: time.Now()}, time.Minute)
	dv.Destinations = []DestinationView{dst.View()}
	plan := ImportPlan{Device: "mfp01", Put: []Destination{dst}, New: []bool{true}}
	for _, v := range []any{dv, dst.View(), plan.View(false, true)} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		shown := string(b) + fmt.Sprintf("%+v %#v", v, v)
		for _, s := range secrets {
			if strings.Contains(shown, s) {
				t.Errorf("%T shows %s: %s", v, s, b)
			}
		}
	}
	if !dv.SNMPCredentials || !dst.View().PasswordSet {
		t.Errorf("views do not say a secret is stored: %+v %+v", dv, dst.View())
	}
}
