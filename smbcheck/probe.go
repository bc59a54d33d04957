package smbcheck

// The negotiate probe speaks just enough SMB by hand to learn, without a
// password, what go-smb2 does not tell: whether the server speaks SMB1 (go-smb2
// speaks none), the dialect it picks, whether it requires signing, and the
// NTLM CHALLENGE's target info (NetBIOS and DNS names of the server and its
// domain, and the Windows build). It sends an anonymous NTLM NEGOTIATE and
// hangs up after the CHALLENGE: no credentials leave the machine and no logon
// is attempted, so it cannot count toward a lockout.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smb1"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// ServerInfo is what the negotiate probe learned.
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

// errNoSMB1 marks a server that does not speak SMB1: the probe's and the
// SMB1 replay's negotiate.
var errNoSMB1 = smb1.ErrRefused

// probe runs the negotiate probe over conn (already connected; for port 139
// the NetBIOS session is set up here). smb1Only offers only SMB1, as an
// SMB1-only MFP does.
func probe(ctx context.Context, conn net.Conn, port int, host string, smb1Only bool) (*ServerInfo, error) {
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
		defer conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if port == 139 {
		if err := smbwire.NBSSSessionRequest(conn, host); err != nil {
			return nil, err
		}
	}
	dialects := []string{"NT LM 0.12", "SMB 2.002", "SMB 2.???"}
	if smb1Only {
		dialects = dialects[:1]
	}
	if err := smbwire.WriteFrame(conn, smbwire.SMB1NegotiateRequest(dialects)); err != nil {
		return nil, fmt.Errorf("send SMB1 negotiate: %w", err)
	}
	resp, err := smbwire.ReadFrame(conn)
	if err != nil {
		if smb1Only && smbwire.IsPeerClose(err) {
			return nil, fmt.Errorf("SMB1 negotiate: server hung up: %w", errNoSMB1)
		}
		if smbwire.IsPeerClose(err) {
			// An SMB server answers this negotiate (SMB2 servers too).
			return nil, fmt.Errorf("negotiate: the server hung up without an SMB answer (%w): %w", err, smbwire.ErrNotSMB)
		}
		return nil, fmt.Errorf("SMB1 negotiate: %w", err)
	}
	info := &ServerInfo{}
	switch {
	case bytes.HasPrefix(resp, []byte("\xfeSMB")):
		n, err := smbwire.ParseSMB2Negotiate(resp)
		if err != nil {
			return nil, err
		}
		info.SMB2 = true
		if n.Dialect == 0x02ff {
			return info, smb2Dance(conn, info, 1)
		}
		applyNegotiate(n, info)
		return info, ntlmOverSMB2(conn, info, 1)
	case bytes.HasPrefix(resp, []byte("\xffSMB")):
		n, err := smbwire.ParseSMB1Negotiate(resp)
		if err != nil {
			return nil, err
		}
		if n.Status != 0 || n.DialectIndex < 0 || n.DialectIndex >= len(dialects) {
			return nil, fmt.Errorf("SMB1 negotiate: status 0x%08X, dialect index %d: %w", n.Status, n.DialectIndex, errNoSMB1)
		}
		info.SMB1 = true
		info.Dialect = dialects[n.DialectIndex]
		info.SigningEnabled = n.SecurityMode&0x04 != 0
		info.SigningRequired = n.SecurityMode&0x08 != 0
		if n.ExtendedSecurity {
			// Target info over SMB1 is a bonus: a failure here does not
			// change what was learned.
			_ = ntlmOverSMB1(conn, info)
		}
		return info, nil
	default:
		return nil, fmt.Errorf("negotiate: the server answered something that is not SMB (% x): %w", head(resp, 8), smbwire.ErrNotSMB)
	}
}

func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// smb2Dance sends the real SMB2 NEGOTIATE after a multi-protocol one.
func smb2Dance(conn net.Conn, info *ServerInfo, msgID uint64) error {
	if err := smbwire.WriteFrame(conn, smbwire.SMB2NegotiateRequest(msgID)); err != nil {
		return fmt.Errorf("send SMB2 negotiate: %w", err)
	}
	resp, err := smbwire.ReadFrame(conn)
	if err != nil {
		return fmt.Errorf("SMB2 negotiate: %w", err)
	}
	n, err := smbwire.ParseSMB2Negotiate(resp)
	if err != nil {
		return err
	}
	if n.Status != 0 {
		return fmt.Errorf("SMB2 negotiate: %w", n.Status)
	}
	applyNegotiate(n, info)
	return ntlmOverSMB2(conn, info, msgID+1)
}

func ntlmOverSMB2(conn net.Conn, info *ServerInfo, msgID uint64) error {
	if err := smbwire.WriteFrame(conn, smbwire.SMB2SessionSetupRequest(msgID, ntlm.SPNEGOInit(ntlm.Negotiate()))); err != nil {
		return fmt.Errorf("send session setup: %w", err)
	}
	resp, err := smbwire.ReadFrame(conn)
	if err != nil {
		return fmt.Errorf("session setup: %w", err)
	}
	status, blob, err := smbwire.ParseSMB2SessionSetup(resp)
	if err != nil {
		return err
	}
	if status != ntstatus.MoreProcessingRequired {
		return fmt.Errorf("session setup (NTLM negotiate): %w", status)
	}
	c, err := ntlm.ParseIdentity(blob)
	if err != nil {
		return err
	}
	applyIdentity(c, info)
	return nil
}

func ntlmOverSMB1(conn net.Conn, info *ServerInfo) error {
	if err := smbwire.WriteFrame(conn, smbwire.SMB1SessionSetupRequest(ntlm.SPNEGOInit(ntlm.Negotiate()))); err != nil {
		return err
	}
	resp, err := smbwire.ReadFrame(conn)
	if err != nil {
		return err
	}
	status, blob, err := smbwire.ParseSMB1SessionSetup(resp)
	if err != nil {
		return err
	}
	if status != ntstatus.MoreProcessingRequired {
		return status
	}
	c, err := ntlm.ParseIdentity(blob)
	if err != nil {
		return err
	}
	applyIdentity(c, info)
	return nil
}

// applyNegotiate fills info with the dialect and signing an SMB2 NEGOTIATE
// response offers.
func applyNegotiate(n smbwire.SMB2Negotiate, info *ServerInfo) {
	info.Dialect = smbwire.DialectName(n.Dialect)
	info.SigningEnabled = n.SecurityMode&0x01 != 0
	info.SigningRequired = n.SecurityMode&0x02 != 0
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
