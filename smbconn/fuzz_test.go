package smbconn

import (
	"testing"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbfake"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// FuzzServerInfo feeds hostile server answers through the wire parsers
// (fuzzed themselves in internal/smbwire and internal/ntlm) into what a
// ServerInfo makes of them: nothing may panic.
func FuzzServerInfo(f *testing.F) {
	f.Add(smbfake.NegotiateResponse(1, 0x0311))
	f.Add(smbfake.SessionSetupResponse(2, ntstatus.MoreProcessingRequired, smbfake.SPNEGOResp(smbfake.WindowsChallenge())))
	f.Add(smbfake.WindowsChallenge())
	f.Add([]byte("NTLMSSP\x00\x02\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var info ServerInfo
		if c, err := ntlm.ParseIdentity(b); err == nil {
			applyIdentity(c, &info)
		}
		if n, err := smbwire.ParseSMB2Negotiate(b); err == nil {
			applyNegotiate(n, &info)
		}
	})
}
