package store

import (
	"context"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/registry"
)

// TestAttackLinkLocalDestination: a destination — added (CLI, web, API) or
// imported from an MFP's address book — could name a link-local address
// (169.254.169.254: a cloud host's metadata service), and the checks and
// the forwarder then logged on there with the stored password. Now it is
// refused naming allow_link_local, unless the config sets it.
func TestAttackLinkLocalDestination(t *testing.T) {
	ctx := context.Background()
	st := openUnlocked(t, t.TempDir())
	for _, host := range []string{"169.254.169.254", "fe80::1", "[fe80::1%eth0]"} {
		err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "meta", Host: host, Share: "scans", User: "u"})
		if err == nil || !strings.Contains(err.Error(), registry.LinkLocalSetting) {
			t.Errorf("added %s: %v, want refused naming %s", host, err, registry.LinkLocalSetting)
		}
	}
	book, err := registry.ReadAddressBook(strings.NewReader("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<DeviceAddressBook_v5_2>\n" +
		"<Item Type=\"Contact\" Id=\"1\" DisplayName=\"Fine\" SmbHostName=\"fs1\" SmbPath=\"scans\" SmbLoginName=\"u\"/>\n" +
		"<Item Type=\"Contact\" Id=\"2\" DisplayName=\"Meta\" SmbHostName=\"169.254.169.254\" SmbPath=\"scans\" SmbLoginName=\"u\"/>\n" +
		"</DeviceAddressBook_v5_2>\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Destinations().ImportAddressBook(ctx, "mfp01", book, false); err == nil || !strings.Contains(err.Error(), registry.LinkLocalSetting) {
		t.Errorf("imported 169.254.169.254: %v, want refused naming %s", err, registry.LinkLocalSetting)
	}
	if ds, _ := st.Destinations().Destinations(ctx, ""); len(ds) != 0 {
		t.Errorf("stored despite the refusal: %+v", ds)
	}
	st.AllowLinkLocal(true)
	if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "meta", Host: "169.254.10.1", Share: "scans", User: "u"}); err != nil {
		t.Errorf("with allow_link_local: %v", err)
	}
}
