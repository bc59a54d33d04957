package ad

import (
	"bytes"
	"strings"
	"testing"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
)

// fuzzUserAttrs are the user attributes parseUser decodes; the fuzzer fills
// them from its input.
var fuzzUserAttrs = []string{"sAMAccountName", "userPrincipalName", "userAccountControl", "msDS-User-Account-Control-Computed",
	"lockoutTime", "badPwdCount", "badPasswordTime", "pwdLastSet", "msDS-UserPasswordExpiryTimeComputed", "accountExpires",
	"userWorkstations", "logonHours", "objectSid", "tokenGroups", "memberOf", "displayName"}

// FuzzDecodeUser drives what a DC's answer about a user goes through —
// the attribute decoding (integers, SIDs, logon hours, workstation list)
// and the judgement — with arbitrary attribute values: a hostile DC must
// never make it panic.
func FuzzDecodeUser(f *testing.F) {
	sid := string([]byte{1, 5, 0, 0, 0, 0, 0, 5, 21, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0x51, 4, 0, 0})
	f.Add(strings.Join([]string{"ivan", "ivan@kyolab.test", "512", "16", "134404930246021400", "3", "0", "134404930232707750",
		"9223372036854775807", "0", "MFP01,PC7", string(make([]byte, 21)), sid, sid, "CN=x,DC=kyolab,DC=test", "Ivan"}, "\x00"))
	f.Add(strings.Repeat("\x00", len(fuzzUserAttrs)))
	f.Add("x\x00y\x00-1\x00-99999999999999999999\x00\xff\xff")
	f.Fuzz(func(t *testing.T, in string) {
		vals := strings.Split(in, "\x00")
		attrs := map[string][]string{}
		for i, v := range vals {
			name := fuzzUserAttrs[i%len(fuzzUserAttrs)]
			attrs[name] = append(attrs[name], v)
		}
		r, err := parseUser(ldap.NewEntry("CN=fuzz,DC=kyolab,DC=test", attrs))
		if err != nil {
			return
		}
		now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		pol := policy{Threshold: 3, Duration: 30 * time.Minute, Window: 30 * time.Minute}
		u := judge(r, parseTyped("ivan"), "sAMAccountName", "MFP01", tDom, pol, now, 1, time.UTC)
		if u == nil {
			t.Fatal("no judgement")
		}
	})
}

// FuzzReadBERMessage drives the BER reader that takes the StartTLS answer
// (before TLS, from anyone on the path) and the decoder behind it: bounded
// by max, never a panic.
func FuzzReadBERMessage(f *testing.F) {
	f.Add(ldapResult(1, ldap.ApplicationExtendedResponse, 0, ""))
	f.Add([]byte{0x30, 0x84, 0x40, 0x00, 0x00, 0x00})
	f.Add([]byte{0x30, 0x80, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, err := readBERMessage(bytes.NewReader(b), 4096)
		if err != nil {
			return
		}
		if len(msg) > 4096+6 {
			t.Fatalf("read %d bytes with a bound of 4096", len(msg))
		}
		if p, err := ber.DecodePacketErr(msg); err == nil {
			ldap.GetLDAPError(p)
		}
	})
}

// FuzzBERPacket drives asn1-ber's packet reader, which go-ldap runs on
// every message from a DC, under scanwarden's message cap.
func FuzzBERPacket(f *testing.F) {
	f.Add(ldapResult(7, ldap.ApplicationBindResponse, 49, "80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext error, data 52e, v4563"))
	f.Add([]byte{0x30, 0x84, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ber.ReadPacket(bytes.NewReader(b))
		if err != nil {
			return
		}
		if p.Data != nil && p.Data.Len() > maxLDAPMessage {
			t.Fatalf("a packet of %d bytes passed the %d cap", p.Data.Len(), maxLDAPMessage)
		}
		ldap.GetLDAPError(p)
	})
}
