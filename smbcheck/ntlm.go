package smbcheck

// NTLM for the SMB1 replay, where the SMB library cannot help: the
// AUTHENTICATE message an MFP sends after the server's CHALLENGE [MS-NLMP].
// NTLMv2 responses (what current Kyocera firmware sends, and all that Samba
// and Windows accept by default), or the anonymous AUTHENTICATE for an empty
// user name and password. No signing or sealing is negotiated, so no session
// key is exchanged.

import (
	"crypto/des"
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"

	"golang.org/x/crypto/md4"
)

const (
	ntlmNegotiateOEM       = 0x00000002
	ntlmNegotiateAnonymous = 0x00000800
	// ntlmSMB1Flags are what the SMB1 replay's NEGOTIATE asks for: no
	// signing, sealing or key exchange.
	ntlmSMB1Flags = ntlmNegotiateUnicode | ntlmNegotiateOEM | ntlmRequestTarget | ntlmNegotiateNTLM |
		ntlmAlwaysSign | ntlmExtendedSession | ntlmNegotiateTargetInfo | ntlmNegotiateVersion |
		ntlmNegotiate128 | ntlmNegotiate56
)

// ntlmNegotiateSMB1 is the NTLM NEGOTIATE of the SMB1 replay.
func ntlmNegotiateSMB1() []byte {
	b := []byte("NTLMSSP\x00")
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, ntlmSMB1Flags)
	b = append(b, make([]byte, 16)...)
	return append(b, 6, 1, 0xb1, 0x1d, 0, 0, 0, 15)
}

// ntlmServerChallenge is what an AUTHENTICATE is computed from.
type ntlmServerChallenge struct {
	Flags      uint32
	Challenge  [8]byte
	TargetInfo []byte // raw AV pairs, echoed in the NTLMv2 response
	Timestamp  []byte // MsvAvTimestamp (8 bytes) when the server sent one
}

// parseNTLMServerChallenge reads the fields an AUTHENTICATE needs from a
// CHALLENGE found in blob (raw or inside SPNEGO).
func parseNTLMServerChallenge(blob []byte) (ntlmServerChallenge, error) {
	var c ntlmServerChallenge
	m, err := ntlmChallengeMessage(blob, 32)
	if err != nil {
		return c, err
	}
	c.Flags = binary.LittleEndian.Uint32(m[20:])
	copy(c.Challenge[:], m[24:32])
	if len(m) >= 48 {
		ti, err := ntlmField(m, 40)
		if err != nil {
			return c, fmt.Errorf("NTLM challenge target info: %w", err)
		}
		c.TargetInfo = ti
		for rest := ti; len(rest) >= 4; {
			id := binary.LittleEndian.Uint16(rest)
			n := int(binary.LittleEndian.Uint16(rest[2:]))
			if id == 0 || 4+n > len(rest) {
				break
			}
			if id == 7 && n == 8 {
				c.Timestamp = rest[4:12]
			}
			rest = rest[4+n:]
		}
	}
	return c, nil
}

// ntlmCredentials is what the MFP stores and sends.
type ntlmCredentials struct {
	User, Domain, Password, Workstation string
	// NTLMv1 sends NTLMv1 responses (the NTLM2 session response when the
	// server agrees to extended session security), as old SMB1 firmware does.
	NTLMv1 bool
}

func (cr ntlmCredentials) anonymous() bool { return cr.User == "" && cr.Password == "" }

// ntlmAuthenticateMessage answers ch for cr: NTLMv2, or anonymous when
// both user name and password are empty. clientChallenge and now make it
// deterministic for tests. It also returns the session key (the NTLMv2
// SessionBaseKey; nil when anonymous), which SMB1 signing uses.
func ntlmAuthenticateMessage(ch ntlmServerChallenge, cr ntlmCredentials, clientChallenge [8]byte, now time.Time) ([]byte, []byte) {
	flags := ch.Flags & ntlmSMB1Flags
	flags |= ntlmNegotiateUnicode | ntlmNegotiateNTLM
	flags &^= ntlmNegotiateOEM
	var lm, nt, sessionKey []byte
	switch {
	case cr.anonymous():
		flags |= ntlmNegotiateAnonymous
		lm = []byte{0}
	case cr.NTLMv1:
		var kx []byte
		lm, nt, kx = ntlmv1Responses(ch, cr.Password, clientChallenge)
		if ch.Flags&ntlmExtendedSession == 0 {
			flags &^= ntlmExtendedSession
		}
		sessionKey = kx
	default:
		key := ntowfv2(cr.User, cr.Domain, cr.Password)
		ts := ch.Timestamp
		if ts == nil {
			ts = binary.LittleEndian.AppendUint64(nil, fileTime(now))
		}
		temp := []byte{1, 1, 0, 0, 0, 0, 0, 0}
		temp = append(temp, ts...)
		temp = append(temp, clientChallenge[:]...)
		temp = append(temp, 0, 0, 0, 0)
		temp = append(temp, ch.TargetInfo...)
		temp = append(temp, 0, 0, 0, 0)
		proof := hmacMD5(key, ch.Challenge[:], temp)
		sessionKey = hmacMD5(key, proof)
		nt = append(proof, temp...)
		if ch.Timestamp != nil {
			// With a server timestamp the LMv2 response is zeros [MS-NLMP 3.1.5.1.2].
			lm = make([]byte, 24)
		} else {
			lm = append(hmacMD5(key, ch.Challenge[:], clientChallenge[:]), clientChallenge[:]...)
		}
	}
	payload := [][]byte{lm, nt, toUTF16(cr.Domain), toUTF16(cr.User), toUTF16(strings.ToUpper(cr.Workstation)), nil}
	const head = 72
	b := []byte("NTLMSSP\x00")
	b = binary.LittleEndian.AppendUint32(b, 3)
	off := head
	for _, p := range payload {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(p)))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(p)))
		b = binary.LittleEndian.AppendUint32(b, uint32(off))
		off += len(p)
	}
	b = binary.LittleEndian.AppendUint32(b, flags)
	b = append(b, 6, 1, 0xb1, 0x1d, 0, 0, 0, 15)
	for _, p := range payload {
		b = append(b, p...)
	}
	return b, sessionKey
}

// ntowfv2 is NTOWFv2 [MS-NLMP 3.3.2].
func ntowfv2(user, domain, password string) []byte {
	h := md4.New()
	h.Write(toUTF16(password))
	return hmacMD5(h.Sum(nil), toUTF16(strings.ToUpper(user)+domain))
}

func hmacMD5(key []byte, parts ...[]byte) []byte {
	m := hmac.New(md5.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func toUTF16(s string) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune(s)) {
		out = binary.LittleEndian.AppendUint16(out, u)
	}
	return out
}

// fileTime is a Windows FILETIME: 100 ns since 1601-01-01 UTC.
func fileTime(t time.Time) uint64 {
	return uint64(t.UnixNano()/100 + 116444736000000000)
}

// spnegoAuth wraps an NTLM AUTHENTICATE in a SPNEGO NegTokenResp.
func spnegoAuth(token []byte) []byte {
	return derTLV(0xa1, derTLV(0x30, derTLV(0xa2, derTLV(0x04, token))))
}

// ntlmv1Responses computes the NTLMv1 LM and NT responses and the key
// exchange key [MS-NLMP 3.3.1, 3.4.5.1]: with extended session security
// (the NTLM2 session response) when the server's CHALLENGE offers it.
func ntlmv1Responses(ch ntlmServerChallenge, password string, clientChallenge [8]byte) (lm, nt, kx []byte) {
	h := md4.New()
	h.Write(toUTF16(password))
	ntHash := h.Sum(nil)
	h = md4.New()
	h.Write(ntHash)
	sessionBaseKey := h.Sum(nil)
	if ch.Flags&ntlmExtendedSession != 0 {
		lm = append(clientChallenge[:], make([]byte, 16)...)
		sum := md5.Sum(append(ch.Challenge[:], clientChallenge[:]...))
		nt = desl(ntHash, sum[:8])
		return lm, nt, hmacMD5(sessionBaseKey, ch.Challenge[:], lm[:8])
	}
	nt = desl(ntHash, ch.Challenge[:])
	return nt, nt, sessionBaseKey
}

// desl is DESL [MS-NLMP 6]: data encrypted under three DES keys cut from
// the 16-byte key padded to 21 bytes.
func desl(key, data []byte) []byte {
	k := append(append([]byte{}, key...), make([]byte, 21-len(key))...)
	out := make([]byte, 0, 24)
	for i := range 3 {
		c, _ := des.NewCipher(desKey(k[7*i : 7*i+7]))
		b := make([]byte, 8)
		c.Encrypt(b, data)
		out = append(out, b...)
	}
	return out
}

// desKey spreads 7 key bytes over 8 (DES ignores the parity bits).
func desKey(k []byte) []byte {
	return []byte{
		k[0],
		k[0]<<7 | k[1]>>1,
		k[1]<<6 | k[2]>>2,
		k[2]<<5 | k[3]>>3,
		k[3]<<4 | k[4]>>4,
		k[4]<<3 | k[5]>>5,
		k[5]<<2 | k[6]>>6,
		k[6] << 1,
	}
}
