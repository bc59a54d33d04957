package samba

import (
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scanwarden/scanwarden/smbcheck"
)

// Lines as Samba 4.17's smbd wrote them on this machine (log level = 1
// auth_json_audit:3, full_audit's connect), one smbclient logon each.
const (
	authNTLMv2 = `  {"timestamp": "2026-12-06T05:56:45.957165+0000", "type": "Authentication", "Authentication": {"version": {"major": 1, "minor": 2}, "eventId": 4624, "logonId": "0", "logonType": 3, "status": "NT_STATUS_OK", "localAddress": "ipv4:127.0.0.1:14450", "remoteAddress": "ipv4:127.0.0.1:57892", "serviceDescription": "SMB2", "authDescription": null, "clientDomain": "WORKGROUP", "clientAccount": "pmuser", "workstation": "MFPONE", "becameAccount": "pmuser", "becameDomain": "PMTEST", "becameSid": "S-1-5-21-2570429921-2492864640-2843604172-1000", "mappedAccount": "pmuser", "mappedDomain": "WORKGROUP", "netlogonComputer": null, "netlogonTrustAccount": null, "netlogonNegotiateFlags": "0x00000000", "netlogonSecureChannelType": 0, "netlogonTrustAccountSid": null, "passwordType": "NTLMv2", "duration": 23842}}`
	authz      = `  {"timestamp": "2026-12-06T05:56:45.958499+0000", "type": "Authorization", "Authorization": {"version": {"major": 1, "minor": 1}, "localAddress": "ipv4:127.0.0.1:14450", "remoteAddress": "ipv4:127.0.0.1:57892", "serviceDescription": "SMB2", "authType": "NTLMSSP", "domain": "PMTEST", "account": "pmuser", "transportProtection": "SMB"}}`
	header     = `[2026/12/06 05:56:46.022589,  1, pid=15926] ../../source3/modules/vfs_full_audit.c:643(do_log)`
	connect21  = `  pmuser|127.0.0.1|mfpone|SMB2_10|connect|ok|scans`
	authNTLMv1 = `  {"timestamp": "2026-12-06T05:58:01.000001+0000", "type": "Authentication", "Authentication": {"status": "NT_STATUS_OK", "remoteAddress": "ipv6:::ffff:10.1.2.3:445", "serviceDescription": "SMB", "clientDomain": "", "clientAccount": "scan@kyolab.test", "workstation": "(null)", "passwordType": "NTLMv1"}}`
)

func TestAuditObservations(t *testing.T) {
	var got []Observation
	a := NewAudit("", func(o Observation) { got = append(got, o) })
	for _, l := range []string{header, authNTLMv2, authz, header, connect21, authNTLMv1} {
		a.line(l, new([]string))
	}
	if len(got) != 3 {
		t.Fatalf("%d observations, want 3 (authentication, connect, authentication): %+v", len(got), got)
	}
	at, _ := time.Parse(time.RFC3339Nano, "2026-12-06T05:56:45.957165Z")
	if o := got[0]; o.Address != "127.0.0.1" || o.Password != "NTLMv2" || o.Workstation != "MFPONE" || o.User != "pmuser" || o.Domain != "WORKGROUP" || !o.At.Equal(at) || o.Dialect != "" {
		t.Errorf("authentication: %+v", o)
	}
	if o := got[1]; o.Address != "127.0.0.1" || o.Dialect != "2.1" || o.Password != "" {
		t.Errorf("connect: %+v", o)
	}
	if o := got[2]; o.Address != "10.1.2.3" || o.Password != "NTLMv1" || o.Workstation != "" || o.UserForm() != "scan@kyolab.test" {
		t.Errorf("NTLMv1 over SMB1 (mapped address, no workstation): %+v", o)
	}
}

// What a client chooses — its name, its user, a forged line in a file
// name — never becomes an address, a dialect or a password type.
func TestAuditObservationsHostile(t *testing.T) {
	for _, l := range []string{
		`  {"type": "Authentication", "Authentication": {"remoteAddress": "ipv4:../../etc/passwd:1", "serviceDescription": "SMB2", "passwordType": "NTLMv2"}}`,
		`  {"type": "Authentication", "Authentication": {"remoteAddress": "unix:/run/x", "serviceDescription": "SMB2", "passwordType": "NTLMv2"}}`,
		`  {"type": "Authentication", "Authentication": {"remoteAddress": "ipv4:10.0.0.1:1", "serviceDescription": "LDAP", "passwordType": "NTLMv2"}}`,
		`  {"type": "Authentication", "Authentication": {"remoteAddress": "ipv4:10.0.0.1:1", "serviceDescription": "SMB2", "passwordType": "plaintext"}}`,
		`  {"type": "Authentication", "Authentication": {"remoteAddress": "ipv4:10.0.0.1:1", "serviceDescription": "SMB2", "workstation": "A\u001b]0;x\u0007"}}`,
		`  u|10.0.0.1|m|SMB9_99|connect|ok|scans`,
		`  u|not-an-ip|m|SMB2_10|connect|ok|scans`,
		`  u|10.0.0.1|m|SMB2_10|connect|fail|scans`,
		`  swmfp|127.0.0.1|scanwarden-probe|SMB3_11|connect|ok|scans`, // the share probe's own logon
		`  {"type": "Authentication", "Authentication": {"remoteAddress": "ipv4:127.0.0.1:1", "serviceDescription": "SMB2", "passwordType": "NTLMv2", "workstation": "SCANWARDEN-PROBE"}}`,
		`  {"type": "Authentication", "Authentication": {"remoteAddress": "ipv4:10.0.0.1:1", "serviceDescription": "SMB2", "passwordType": "NTLMv2", "workstation": "` + strings.Repeat("W", 200) + `"}}`,
	} {
		var got []Observation
		a := NewAudit("", func(o Observation) { got = append(got, o) })
		a.line(l, new([]string))
		for _, o := range got {
			if o.Password != "NTLMv2" || o.Workstation != "" {
				t.Errorf("%.60s…: observed %+v", l, o)
			}
		}
	}
}

// FuzzAuditLine: whatever smbd's log holds (every field of it the
// client's to choose), a line never panics the tail, and an observation
// carries only an IP address, a known dialect, one of three password
// types, a known file type and short printable names.
func FuzzAuditLine(f *testing.F) {
	for _, l := range []string{header, authNTLMv2, authz, connect21, authNTLMv1, "  a|1.2.3.4|m|NT1|connect|ok|s", "{", "[", ""} {
		f.Add(l)
	}
	// one tail for every input, as one log: what a line leaves behind
	// (a pid, a header's time, files and sessions) meets the next
	var got []Observation
	a := NewAudit("", func(o Observation) { got = append(got, o) })
	f.Fuzz(func(t *testing.T, l string) {
		var ended []string
		got = got[:0]
		a.line(l, &ended)
		for _, o := range got {
			if ip, err := netip.ParseAddr(o.Address); err != nil || ip.Is4In6() || ip.Zone() != "" {
				t.Fatalf("address %q", o.Address)
			}
			if o.Dialect != "" {
				if d, err := smbcheck.ParseDialect(o.Dialect); err != nil || d.String() != o.Dialect {
					t.Fatalf("dialect %q", o.Dialect)
				}
			}
			switch o.Password {
			case "", "NTLMv1", "NTLMv2", "Kerberos":
			default:
				t.Fatalf("password type %q", o.Password)
			}
			for _, s := range []string{o.Workstation, o.User, o.Domain} {
				if len(s) > maxObservedText || !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\r\n\x1b") {
					t.Fatalf("name %q", s)
				}
			}
		}
	})
}
