// Package ntlm speaks the NTLM messages [MS-NLMP] and their SPNEGO wrapping
// that scanwarden needs where the SMB library cannot help: the probe's
// NEGOTIATE and the names and version a server tells in its CHALLENGE, and
// for the SMB1 replay (and the SMB2/3 replay of an NTLMv1 MFP) the
// AUTHENTICATE an MFP sends — NTLMv2 responses (what current Kyocera
// firmware sends, and all that Samba and Windows accept by default), NTLMv1
// for old firmware, or the anonymous AUTHENTICATE for an empty user name and
// password. No key exchange is negotiated: the session key that signs SMB
// traffic is the key exchange key itself.
package ntlm

import (
	"bytes"
	"crypto/des"
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"

	//lint:ignore SA1019 the NT hash is MD4 by [MS-NLMP] 3.3.1: NTLM cannot be spoken without it
	"golang.org/x/crypto/md4"
)

const (
	negotiateOEM       = 0x00000002
	negotiateAnonymous = 0x00000800
	// smb1Flags are what the SMB1 replay's NEGOTIATE asks for: no
	// signing, sealing or key exchange.
	smb1Flags = negotiateUnicode | negotiateOEM | requestTarget | negotiateNTLM |
		alwaysSign | extendedSession | negotiateTargetInfo | negotiateVersion |
		negotiate128 | negotiate56
)

// NegotiateSMB1 is the NTLM NEGOTIATE of the SMB1 replay.
func NegotiateSMB1() []byte { return negotiateReplay(smb1Flags) }

// NegotiateSigned is the NTLM NEGOTIATE of the SMB2/3 replay of an NTLMv1
// MFP: the SMB1 replay's flags and NTLMSSP_NEGOTIATE_SIGN, as every SMB2
// client asks (its signing keys come from the NTLM session key).
func NegotiateSigned() []byte { return negotiateReplay(smb1Flags | negotiateSign) }

func negotiateReplay(flags uint32) []byte {
	b := []byte("NTLMSSP\x00")
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, flags)
	b = append(b, make([]byte, 16)...)
	return append(b, 6, 1, 0xb1, 0x1d, 0, 0, 0, 15)
}

// Challenge is what an AUTHENTICATE is computed from.
type Challenge struct {
	Flags      uint32
	Challenge  [8]byte
	TargetInfo []byte // raw AV pairs, echoed in the NTLMv2 response
	Timestamp  []byte // MsvAvTimestamp (8 bytes) when the server sent one
}

// ParseChallenge reads the fields an AUTHENTICATE needs from a
// CHALLENGE found in blob (raw or inside SPNEGO).
func ParseChallenge(blob []byte) (Challenge, error) {
	var c Challenge
	m, err := challengeMessage(blob, 32)
	if err != nil {
		return c, err
	}
	c.Flags = binary.LittleEndian.Uint32(m[20:])
	copy(c.Challenge[:], m[24:32])
	if len(m) >= 48 {
		ti, err := bufferField(m, 40)
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

// Credentials is what the MFP stores and sends.
type Credentials struct {
	User, Domain, Password, Workstation string
	// NTLMv1 sends NTLMv1 responses (the NTLM2 session response when the
	// server agrees to extended session security), as old firmware does.
	NTLMv1 bool
	// Sign keeps NTLMSSP_NEGOTIATE_SIGN in the AUTHENTICATE when the
	// server's CHALLENGE has it (after NegotiateSigned).
	Sign bool
}

func (cr Credentials) Anonymous() bool { return cr.User == "" && cr.Password == "" }

// Authenticate answers ch for cr: NTLMv2, or anonymous when
// both user name and password are empty. clientChallenge and now make it
// deterministic for tests. It also returns the session key (the NTLMv2
// SessionBaseKey; nil when anonymous), which SMB1 signing uses.
func Authenticate(ch Challenge, cr Credentials, clientChallenge [8]byte, now time.Time) ([]byte, []byte) {
	mask := uint32(smb1Flags)
	if cr.Sign {
		mask |= negotiateSign
	}
	flags := ch.Flags & mask
	flags |= negotiateUnicode | negotiateNTLM
	flags &^= negotiateOEM
	var lm, nt, sessionKey []byte
	switch {
	case cr.Anonymous():
		flags |= negotiateAnonymous
		lm = []byte{0}
	case cr.NTLMv1:
		var kx []byte
		lm, nt, kx = ntlmv1Responses(ch, cr.Password, clientChallenge)
		if ch.Flags&extendedSession == 0 {
			flags &^= extendedSession
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
	payload := [][]byte{lm, nt, EncodeUTF16(cr.Domain), EncodeUTF16(cr.User), EncodeUTF16(strings.ToUpper(cr.Workstation)), nil}
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
	h.Write(EncodeUTF16(password))
	return hmacMD5(h.Sum(nil), EncodeUTF16(strings.ToUpper(user)+domain))
}

func hmacMD5(key []byte, parts ...[]byte) []byte {
	m := hmac.New(md5.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func EncodeUTF16(s string) []byte {
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

// SPNEGOResp wraps an NTLM AUTHENTICATE in a SPNEGO NegTokenResp.
func SPNEGOResp(token []byte) []byte {
	return derTLV(0xa1, derTLV(0x30, derTLV(0xa2, derTLV(0x04, token))))
}

// ntlmv1Responses computes the NTLMv1 LM and NT responses and the key
// exchange key [MS-NLMP 3.3.1, 3.4.5.1]: with extended session security
// (the NTLM2 session response) when the server's CHALLENGE offers it.
func ntlmv1Responses(ch Challenge, password string, clientChallenge [8]byte) (lm, nt, kx []byte) {
	h := md4.New()
	h.Write(EncodeUTF16(password))
	ntHash := h.Sum(nil)
	h = md4.New()
	h.Write(ntHash)
	sessionBaseKey := h.Sum(nil)
	if ch.Flags&extendedSession != 0 {
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

const (
	negotiateUnicode      = 0x00000001
	requestTarget         = 0x00000004
	negotiateSign         = 0x00000010
	negotiateNTLM         = 0x00000200
	alwaysSign            = 0x00008000
	extendedSession       = 0x00080000
	negotiateTargetInfo   = 0x00800000
	negotiateVersion      = 0x02000000
	negotiate128          = 0x20000000
	negotiateKeyExch      = 0x40000000
	negotiate56           = 0x80000000
	negotiateFlagsDefault = negotiateUnicode | requestTarget | negotiateNTLM | alwaysSign |
		extendedSession | negotiateTargetInfo | negotiateVersion | negotiate128 | negotiateKeyExch | negotiate56
)

func Negotiate() []byte {
	b := []byte("NTLMSSP\x00")
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, negotiateFlagsDefault)
	b = append(b, make([]byte, 16)...)           // domain and workstation fields: empty
	b = append(b, 6, 1, 0xb1, 0x1d, 0, 0, 0, 15) // version 6.1.7601, NTLM revision 15
	return b
}

var (
	oidSPNEGO  = []byte{0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02}
	oidNTLMSSP = []byte{0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a}
)

func derTLV(tag byte, content []byte) []byte {
	n := len(content)
	var l []byte
	switch {
	case n < 0x80:
		l = []byte{byte(n)}
	case n < 0x100:
		l = []byte{0x81, byte(n)}
	default:
		l = []byte{0x82, byte(n >> 8), byte(n)}
	}
	out := append([]byte{tag}, l...)
	return append(out, content...)
}

// SPNEGOInit wraps an NTLM NEGOTIATE in a SPNEGO NegTokenInit.
func SPNEGOInit(token []byte) []byte {
	mechTypes := derTLV(0xa0, derTLV(0x30, oidNTLMSSP))
	mechToken := derTLV(0xa2, derTLV(0x04, token))
	init := derTLV(0xa0, derTLV(0x30, append(mechTypes, mechToken...)))
	return derTLV(0x60, append(append([]byte{}, oidSPNEGO...), init...))
}

// Identity is what a server tells about itself in its CHALLENGE: its
// names (the AV pairs 1-5) and, when it sends one, its OS version.
type Identity struct {
	Flags      uint32
	TargetName string
	AV         map[uint16]string
	HasVersion bool
	Major      byte
	Minor      byte
	Build      uint16
}

// ParseIdentity finds the NTLM CHALLENGE in a security blob (raw or
// inside SPNEGO) and decodes it. Every offset is checked against the blob.
func ParseIdentity(blob []byte) (Identity, error) {
	var c Identity
	m, err := challengeMessage(blob, 48)
	if err != nil {
		return c, err
	}
	c.Flags = binary.LittleEndian.Uint32(m[20:])
	if name, err := bufferField(m, 12); err == nil {
		c.TargetName = DecodeUTF16(name)
	}
	ti, err := bufferField(m, 40)
	if err != nil {
		return c, fmt.Errorf("NTLM challenge target info: %w", err)
	}
	c.AV = map[uint16]string{}
	for len(ti) >= 4 {
		id := binary.LittleEndian.Uint16(ti)
		n := int(binary.LittleEndian.Uint16(ti[2:]))
		if id == 0 {
			break
		}
		if 4+n > len(ti) {
			return c, fmt.Errorf("NTLM challenge: AV pair %d of %d bytes overruns the target info", id, n)
		}
		if id >= 1 && id <= 5 {
			c.AV[id] = DecodeUTF16(ti[4 : 4+n])
		}
		ti = ti[4+n:]
	}
	if c.Flags&negotiateVersion != 0 && len(m) >= 56 {
		c.HasVersion = true
		c.Major, c.Minor = m[48], m[49]
		c.Build = binary.LittleEndian.Uint16(m[50:])
	}
	return c, nil
}

// challengeMessage finds the NTLM message in a security blob (raw or
// inside SPNEGO) and checks that it is a CHALLENGE of at least min bytes.
func challengeMessage(blob []byte, min int) ([]byte, error) {
	i := bytes.Index(blob, []byte("NTLMSSP\x00"))
	if i < 0 {
		return nil, errors.New("NTLM challenge: no NTLMSSP message in the security blob")
	}
	m := blob[i:]
	if len(m) < min {
		return nil, fmt.Errorf("NTLM challenge: %d bytes, too short", len(m))
	}
	if t := binary.LittleEndian.Uint32(m[8:]); t != 2 {
		return nil, fmt.Errorf("NTLM challenge: message type %d, want 2", t)
	}
	return m, nil
}

// bufferField returns the payload of the security buffer descriptor at off.
func bufferField(m []byte, off int) ([]byte, error) {
	if off+8 > len(m) {
		return nil, errors.New("descriptor outside the message")
	}
	n := int(binary.LittleEndian.Uint16(m[off:]))
	start := int(binary.LittleEndian.Uint32(m[off+4:]))
	if n == 0 {
		return nil, nil
	}
	if start < 0 || start > len(m) || n > len(m)-start {
		return nil, fmt.Errorf("field %d+%d outside the %d-byte message", start, n, len(m))
	}
	return m[start : start+n], nil
}

func DecodeUTF16(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}
