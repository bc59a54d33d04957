package smbcheck

import (
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
)

// TestClientCause pins which causes the bridge can answer: the device's
// client's own limits, and the NTLM refusals only for a device without
// Kerberos.
func TestClientCause(t *testing.T) {
	yes := []scanwarden.Cause{scanwarden.CauseEncryptionRequired, scanwarden.CauseDialectFloor, scanwarden.CauseSigningRequired, scanwarden.CauseSMB1Refused, scanwarden.CauseNTLMv1Refused}
	for _, c := range yes {
		if !ClientCause(c, Device{}) {
			t.Errorf("%s: not a client cause", c)
		}
	}
	for _, c := range []scanwarden.Cause{scanwarden.CauseNTLMBlocked, scanwarden.CauseAccountRestricted} {
		if ClientCause(c, Device{}) || !ClientCause(c, Device{NoKerberos: true}) {
			t.Errorf("%s: a client cause only for a device without Kerberos", c)
		}
	}
	for _, ci := range scanwarden.Causes() {
		switch ci.Cause {
		case scanwarden.CauseEncryptionRequired, scanwarden.CauseDialectFloor, scanwarden.CauseSigningRequired, scanwarden.CauseSMB1Refused, scanwarden.CauseNTLMv1Refused, scanwarden.CauseNTLMBlocked, scanwarden.CauseAccountRestricted:
			continue
		}
		if ClientCause(ci.Cause, Device{NoKerberos: true, NoEncryption: true, NoSigning: true}) {
			t.Errorf("%s: a client cause", ci.Cause)
		}
	}
}

// TestBridgeNamed: the offer names the command and the page's button once
// the destination is known; a nil bridge or one not offered is left alone.
func TestBridgeNamed(t *testing.T) {
	var none *Bridge
	none.Named("x") // no panic
	b := &Bridge{Offered: true, DeviceCause: scanwarden.CauseEncryptionRequired, Message: OfferMessage(scanwarden.CauseEncryptionRequired, "")}
	b.Named("sealed")
	if b.Command != "scanwarden destination bridge sealed" {
		t.Errorf("command %q", b.Command)
	}
	for _, want := range []string{"the MFP cannot meet this server's demands (encryption-required); scanwarden can: bridge it", "scanwarden destination bridge sealed", `"Bridge"`} {
		if !strings.Contains(b.Message, want) {
			t.Errorf("message %q lacks %q", b.Message, want)
		}
	}
	url := &Bridge{Offered: true, DeviceCause: scanwarden.CauseSigningRequired, Message: OfferMessage(scanwarden.CauseSigningRequired, "")}
	url.Named("") // a check given by URL has no destination to name
	if url.Command != "" || !strings.Contains(url.Message, "add it as a destination first") {
		t.Errorf("a URL check's offer: %+v", url)
	}
	no := &Bridge{DeviceCause: scanwarden.CauseEncryptionRequired, Message: "m"}
	no.Named("sealed")
	if no.Command != "" || no.Message != "m" {
		t.Errorf("not offered, yet named: %+v", no)
	}
}
