package ntlm

import (
	"encoding/binary"
	"encoding/hex"
	"testing"
	"time"
)

// The NTLMv2 example of [MS-NLMP] 4.2.4: user "User", domain "Domain",
// password "Password", server challenge 0123456789abcdef, client challenge
// aa×8, time 0, target info NbDomainName "Domain", NbComputerName "Server".
func TestNTLMv2Vector(t *testing.T) {
	key := ntowfv2("User", "Domain", "Password")
	if got := hex.EncodeToString(key); got != "0c868a403bfd7a93a3001ef22ef02e3f" {
		t.Fatalf("NTOWFv2 %s", got)
	}
	var ti []byte
	for _, av := range []struct {
		id uint16
		v  string
	}{{2, "Domain"}, {1, "Server"}} {
		ti = binary.LittleEndian.AppendUint16(ti, av.id)
		ti = binary.LittleEndian.AppendUint16(ti, uint16(len(EncodeUTF16(av.v))))
		ti = append(ti, EncodeUTF16(av.v)...)
	}
	ti = append(ti, 0, 0, 0, 0)
	ch := Challenge{TargetInfo: ti, Timestamp: make([]byte, 8)}
	copy(ch.Challenge[:], []byte{1, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef})
	cc := [8]byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa}
	msg, sk := Authenticate(ch, Credentials{User: "User", Domain: "Domain", Password: "Password", Workstation: "mfp01"}, cc, time.Unix(0, 0))
	// SessionBaseKey of the same example.
	if got := hex.EncodeToString(sk); got != "8de40ccadbc14a82f15cb0ad0de95ca3" {
		t.Errorf("SessionBaseKey %s", got)
	}
	nt, err := bufferField(msg, 20)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(nt[:16]); got != "68cd0ab851e51c96aabc927bebef6a1c" {
		t.Errorf("NTProofStr %s", got)
	}
	lm := hmacMD5(key, ch.Challenge[:], cc[:])
	if got := hex.EncodeToString(lm); got != "86c35097ac9cec102554764a57cccc19" {
		t.Errorf("LMv2 %s", got)
	}
	for off, want := range map[int]string{28: "Domain", 36: "User", 44: "MFP01"} {
		b, err := bufferField(msg, off)
		if err != nil || DecodeUTF16(b) != want {
			t.Errorf("field at %d: %q (%v), want %q", off, DecodeUTF16(b), err, want)
		}
	}
	anon, _ := Authenticate(ch, Credentials{Workstation: "MFP01"}, cc, time.Unix(0, 0))
	if f := binary.LittleEndian.Uint32(anon[60:]); f&negotiateAnonymous == 0 {
		t.Errorf("anonymous AUTHENTICATE without the anonymous flag: %#x", f)
	}
	if nt, _ := bufferField(anon, 20); len(nt) != 0 {
		t.Errorf("anonymous NT response of %d bytes", len(nt))
	}
}

// The NTLMv1 examples of [MS-NLMP] 4.2.2 (no extended session security)
// and 4.2.3 (NTLM2 session response): password "Password", server
// challenge 0123456789abcdef, client challenge aa×8.
func TestNTLMv1Vectors(t *testing.T) {
	ch := Challenge{}
	copy(ch.Challenge[:], []byte{1, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef})
	cc := [8]byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa}
	_, nt, kx := ntlmv1Responses(ch, "Password", cc)
	if got := hex.EncodeToString(nt); got != "67c43011f30298a2ad35ece64f16331c44bdbed927841f94" {
		t.Errorf("NTLMv1 response %s", got)
	}
	// Without extended session security the key exchange key (and so
	// the session key that signs SMB) is the SessionBaseKey.
	if got := hex.EncodeToString(kx); got != "d87262b0cde4b1cb7499becccdf10784" {
		t.Errorf("NTLMv1 session key %s", got)
	}
	ch.Flags = extendedSession
	lm, nt, kx := ntlmv1Responses(ch, "Password", cc)
	if got := hex.EncodeToString(nt); got != "7537f803ae367128ca458204bde7caf81e97ed2683267232" {
		t.Errorf("NTLM2 session response %s", got)
	}
	if got := hex.EncodeToString(lm); got != "aaaaaaaaaaaaaaaa00000000000000000000000000000000" {
		t.Errorf("LM response %s", got)
	}
	if got := hex.EncodeToString(kx); got != "eb93429a8bd952f8b89c55b87f475edc" {
		t.Errorf("NTLM2 session key exchange key %s", got)
	}
	// The SMB2 replay keeps the server's NTLMSSP_NEGOTIATE_SIGN; the SMB1
	// replay never asks for it.
	ch.Flags = extendedSession | negotiateSign | negotiateNTLM
	for _, sign := range []bool{false, true} {
		msg, _ := Authenticate(ch, Credentials{User: "u", Password: "p", NTLMv1: true, Sign: sign}, cc, time.Unix(0, 0))
		if got := binary.LittleEndian.Uint32(msg[60:])&negotiateSign != 0; got != sign {
			t.Errorf("Sign %v: AUTHENTICATE's sign flag %v", sign, got)
		}
	}
	if f := binary.LittleEndian.Uint32(NegotiateSigned()[12:]); f&negotiateSign == 0 || f&^negotiateSign != smb1Flags {
		t.Errorf("NegotiateSigned flags %#x", f)
	}
}

// FuzzChallenge feeds hostile security blobs to both CHALLENGE parsers and
// answers what ParseChallenge accepts: none may panic or read out of bounds.
func FuzzChallenge(f *testing.F) {
	f.Add(SPNEGOInit(Negotiate()))
	f.Add([]byte("NTLMSSP\x00\x02\x00\x00\x00"))
	m := []byte("NTLMSSP\x00\x02\x00\x00\x00")
	m = append(m, make([]byte, 48)...)
	binary.LittleEndian.PutUint32(m[20:], negotiateVersion|extendedSession)
	binary.LittleEndian.PutUint16(m[40:], 8)
	binary.LittleEndian.PutUint32(m[44:], 56)
	f.Add(append(m, 1, 0, 2, 0, 'a', 0, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseIdentity(b)
		ch, err := ParseChallenge(b)
		if err != nil {
			return
		}
		cc := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
		Authenticate(ch, Credentials{User: "u", Password: "p", Workstation: "w"}, cc, time.Unix(0, 0))
		Authenticate(ch, Credentials{User: "u", Password: "p", Workstation: "w", NTLMv1: true}, cc, time.Unix(0, 0))
	})
}
