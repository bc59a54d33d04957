package snmp_test

import (
	"slices"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/snmp"
)

// TestCodeBookAgreesWithSmbcheck keeps the two directions of the Kyocera
// mapping in step: every cause the code book names is in smbcheck's
// vocabulary, and every panel code smbcheck predicts for a cause lists that
// cause in the code book.
func TestCodeBookAgreesWithSmbcheck(t *testing.T) {
	book := snmp.DefaultCodeBook()
	for _, e := range book.Entries() {
		for _, c := range e.Causes {
			if !scanwarden.Cause(c).Valid() {
				t.Errorf("code book %s: cause %q is not in smbcheck's vocabulary", e.Code, c)
			}
		}
	}
	for _, ci := range scanwarden.Causes() {
		if ci.KyoceraCode == "" {
			continue
		}
		e, ok := book.Lookup(ci.KyoceraCode)
		if !ok {
			t.Errorf("smbcheck says %s shows %s, which the code book lacks", ci.Cause, ci.KyoceraCode)
			continue
		}
		if !slices.Contains(e.Causes, string(ci.Cause)) {
			t.Errorf("smbcheck says %s shows %s, but the code book's %s does not list %s (it lists %v)", ci.Cause, ci.KyoceraCode, e.Code, ci.Cause, e.Causes)
		}
	}
}
