package smbcheck

import (
	"bytes"
	"testing"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbfake"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// FuzzNegotiateParsers feeds hostile server answers to every parser of the
// negotiate probe: none may panic or read out of bounds.
func FuzzNegotiateParsers(f *testing.F) {
	f.Add(smbfake.NegotiateResponse(0, 0x02ff))
	f.Add(smbfake.NegotiateResponse(1, 0x0311))
	f.Add(smbfake.SessionSetupResponse(2, ntstatus.MoreProcessingRequired, smbfake.SPNEGOResp(smbfake.WindowsChallenge())))
	f.Add(smbfake.WindowsChallenge())
	smb1 := smbwire.SMB1Header(0x72)
	smb1 = append(smb1, 17)
	smb1 = append(smb1, make([]byte, 34+2)...)
	f.Add(smb1)
	f.Add([]byte("\xffSMB\x72"))
	f.Add([]byte("NTLMSSP\x00\x02\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		smbwire.ParseSMB1Negotiate(b)
		smbwire.ParseSMB2Negotiate(b)
		smbwire.ParseSMB2SessionSetup(b)
		smbwire.ParseSMB1SessionSetup(b)
		if c, err := ntlm.ParseIdentity(b); err == nil {
			var info ServerInfo
			applyIdentity(c, &info)
		}
		smbwire.ReadFrame(bytes.NewReader(append([]byte{0, 0, byte(len(b) >> 8), byte(len(b))}, b...)))
		s := &sniffConn{}
		s.feed(b)
	})
}
