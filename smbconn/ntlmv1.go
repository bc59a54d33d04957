package smbconn

import (
	"crypto/rand"
	"encoding/asn1"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
)

// ntlmv1Initiator is the SMB library's session setup as an MFP that logs on
// with NTLMv1 over SMB2/3 does: internal/ntlm's NEGOTIATE (signing asked
// for) and NTLMv1 AUTHENTICATE (the NTLM2 session response when the server
// offers extended session security). Its session key signs the session.
// It implements the library's Initiator.
type ntlmv1Initiator struct {
	cr  ntlm.Credentials
	key []byte // after AcceptSecContext (nil: anonymous, or not yet)
}

func newNTLMv1Initiator(cr Credentials) *ntlmv1Initiator {
	return &ntlmv1Initiator{cr: ntlm.Credentials{User: cr.User, Domain: cr.Domain, Password: cr.Password,
		Workstation: cr.Workstation, NTLMv1: true, Sign: true}}
}

// oidNTLMSSP is NTLMSSP's mechanism in SPNEGO (1.3.6.1.4.1.311.2.2.10).
var oidNTLMSSP = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 2, 2, 10}

func (i *ntlmv1Initiator) OID() asn1.ObjectIdentifier { return oidNTLMSSP }

func (i *ntlmv1Initiator) InitSecContext() ([]byte, error) { return ntlm.NegotiateSigned(), nil }

func (i *ntlmv1Initiator) AcceptSecContext(sc []byte) ([]byte, error) {
	ch, err := ntlm.ParseChallenge(sc)
	if err != nil {
		return nil, err
	}
	var cc [8]byte
	if _, err := rand.Read(cc[:]); err != nil {
		return nil, fmt.Errorf("NTLM client challenge: %w", err)
	}
	msg, key := ntlm.Authenticate(ch, i.cr, cc, time.Now())
	i.key = key
	return msg, nil
}

// Sum is the SPNEGO mechListMIC: none. An NTLMv1 AUTHENTICATE carries no
// MIC, so a server asks for no mechListMIC (MS-SPNG 3.1.5.1), and NTLMSSP
// is the only mechanism offered.
func (i *ntlmv1Initiator) Sum([]byte) []byte { return nil }

func (i *ntlmv1Initiator) SessionKey() []byte { return i.key }
