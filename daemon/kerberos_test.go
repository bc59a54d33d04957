package daemon

import (
	"slices"
	"testing"

	"github.com/scanwarden/scanwarden"
)

// The forwarder's Kerberos hints are [ad]'s domain and DC, as the checks'
// (ad.Directory.Into); none without [ad].
func TestKerberosHints(t *testing.T) {
	a := ADConfig{URL: "ldaps://dc1.kyolab.test", BindUser: "svc", Password: scanwarden.NewSecret("x")}
	if k := kerberosHints(a); k.Realm != "kyolab.test" || !slices.Equal(k.KDCs, []string{"dc1.kyolab.test"}) {
		t.Fatalf("hints %+v, want realm kyolab.test, KDC dc1.kyolab.test", k)
	}
	if k := kerberosHints(ADConfig{}); k.Realm != "" || k.KDCs != nil {
		t.Fatalf("without [ad]: %+v", k)
	}
}
