package smbconn

// What the server told — the negotiate probe (smbwire.Probe), the sniffer
// under a logon, the SMB1 client — as a ServerInfo.

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// ServerInfo is what a server told about itself: to the negotiate probe,
// or during a logon.
type ServerInfo struct {
	// SMB1 is true when the server accepted an SMB1 (NT LM 0.12) negotiate.
	SMB1 bool `json:"smb1"`
	// SMB2 is true when the server speaks SMB2 or later.
	SMB2 bool `json:"smb2"`
	// Dialect is the highest SMB2/3 dialect the server chose ("3.1.1"), or
	// "NT LM 0.12" for an SMB1-only server.
	Dialect         string `json:"dialect"`
	SigningEnabled  bool   `json:"signing_enabled"`
	SigningRequired bool   `json:"signing_required"`
	// From the NTLM CHALLENGE's target info.
	NetBIOSComputer string `json:"netbios_computer,omitempty"`
	NetBIOSDomain   string `json:"netbios_domain,omitempty"`
	DNSComputer     string `json:"dns_computer,omitempty"`
	DNSDomain       string `json:"dns_domain,omitempty"`
	DNSForest       string `json:"dns_forest,omitempty"`
	// OSVersion is the Windows version from the CHALLENGE ("10.0.22631"),
	// "" when the server does not give a real one (Samba sends build 0).
	OSVersion string `json:"os_version,omitempty"`
	// Windows is the edition guessed from the build ("Windows 11 23H2").
	Windows string `json:"windows,omitempty"`
	// ClientEdition is true when the build exists only as a Windows client
	// (10/11), whose Server service allows 20 inbound sessions.
	ClientEdition bool `json:"client_edition,omitempty"`
}

// DomainJoined reports whether the server belongs to a domain: its NetBIOS
// domain differs from its own name.
func (s *ServerInfo) DomainJoined() bool {
	return s.NetBIOSDomain != "" && !strings.EqualFold(s.NetBIOSDomain, s.NetBIOSComputer)
}

// Probe runs the negotiate probe (smbwire.Probe) over conn and tells what
// the server told as a ServerInfo: nil when it gave no SMB answer, with the
// error of a later message when it gave one.
func Probe(ctx context.Context, conn net.Conn, port int, host string, smb1Only bool) (*ServerInfo, error) {
	a, err := smbwire.Probe(ctx, conn, port, host, smb1Only)
	if a == nil {
		return nil, err
	}
	info := &ServerInfo{SMB2: a.SMB2}
	if a.SMB1 != nil {
		info.SMB1 = true
		info.Dialect = a.SMB1Dialect
		info.SigningEnabled = a.SMB1.SigningEnabled()
		info.SigningRequired = a.SMB1.SigningRequired()
	}
	if a.Negotiate != nil {
		applyNegotiate(*a.Negotiate, info)
	}
	if a.Identity != nil {
		applyIdentity(*a.Identity, info)
	}
	return info, err
}

// applyNegotiate fills info with the dialect and signing an SMB2 NEGOTIATE
// response offers.
func applyNegotiate(n smbwire.SMB2Negotiate, info *ServerInfo) {
	info.Dialect = smbwire.DialectName(n.Dialect)
	info.SigningEnabled = n.SigningEnabled()
	info.SigningRequired = n.SigningRequired()
}

// applyIdentity fills info with what the server told about itself in its
// NTLM CHALLENGE.
func applyIdentity(c ntlm.Identity, info *ServerInfo) {
	info.NetBIOSComputer = c.AV[1]
	info.NetBIOSDomain = c.AV[2]
	info.DNSComputer = c.AV[3]
	info.DNSDomain = c.AV[4]
	info.DNSForest = c.AV[5]
	if info.NetBIOSDomain == "" {
		info.NetBIOSDomain = c.TargetName
	}
	if c.HasVersion && c.Build != 0 {
		info.OSVersion = fmt.Sprintf("%d.%d.%d", c.Major, c.Minor, c.Build)
		info.Windows, info.ClientEdition = windowsEdition(c.Major, c.Minor, c.Build)
	}
}

// windowsEdition names a Windows build from the NTLM version fields.
func windowsEdition(major, minor byte, build uint16) (string, bool) {
	w := JudgeWindows("", major, minor, int(build))
	return w.Name, w.Client
}

// AcceptsDialect asks the server over conn (already connected; for port
// 139 the NetBIOS session is set up here) whether it takes dialect d (2.0.2
// to 3.0.2) offered alone: one NEGOTIATE, no logon. A refusal — an error
// status, or a server that hangs up — is false with a nil error; an error
// is a server that could not be asked (no answer in time).
func AcceptsDialect(ctx context.Context, conn net.Conn, port int, host string, d Dialect) (bool, error) {
	if d < DialectSMB202 || d >= DialectSMB311 {
		return false, fmt.Errorf("dialect %s: only 2.0.2 to 3.0.2 are asked alone", d)
	}
	stop, err := smbwire.OpenTransport(ctx, conn, port, host)
	defer stop()
	if err != nil {
		return false, err
	}
	if err := smbwire.WriteFrame(conn, smbwire.SMB2NegotiateOne(d.Wire())); err != nil {
		return false, fmt.Errorf("send negotiate: %w", err)
	}
	resp, err := smbwire.ReadFrame(conn)
	if err != nil {
		if smbwire.IsPeerClose(err) {
			return false, nil
		}
		return false, fmt.Errorf("negotiate %s: %w", d, err)
	}
	n, err := smbwire.ParseSMB2Negotiate(resp)
	if err != nil {
		return false, err
	}
	return n.Status == 0 && n.Dialect == d.Wire(), nil
}
