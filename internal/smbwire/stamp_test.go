package smbwire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/scanwarden/scanwarden/internal/ntlm"
)

// RFC 4493, section 4: AES-CMAC test vectors.
func TestCMACAES128(t *testing.T) {
	key, _ := hex.DecodeString("2b7e151628aed2a6abf7158809cf4f3c")
	msg, _ := hex.DecodeString("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "bb1d6929e95937287fa37d129b756746"},
		{16, "070a16b46b4d4144f79bdd9dd04a287c"},
		{40, "dfa66747de9ae63030ca32611497c827"},
		{64, "51f0bebf7e3b9d92fc49741779363cfe"},
	} {
		if got := hex.EncodeToString(cmacAES128(key, msg[:tc.n])); got != tc.want {
			t.Errorf("CMAC of %d bytes = %s, want %s", tc.n, got, tc.want)
		}
	}
}

// createRequest is an SMB2 CREATE request for name as the SMB library
// builds one (no create contexts).
func createRequest(name string) []byte {
	m := make([]byte, 64, 64+56+2*len(name))
	copy(m, "\xfeSMB")
	binary.LittleEndian.PutUint16(m[4:], 64)
	binary.LittleEndian.PutUint16(m[12:], smb2CmdCreate)
	b := binary.LittleEndian.AppendUint16(nil, 57)
	b = append(b, make([]byte, 22)...)                             // security flags … reserved
	b = binary.LittleEndian.AppendUint32(b, 0x40000000|0x80000000) // GENERIC_READ|WRITE
	b = binary.LittleEndian.AppendUint32(b, 0x80)                  // attributes
	b = binary.LittleEndian.AppendUint32(b, shareRead|shareWrite)
	b = binary.LittleEndian.AppendUint32(b, 2) // FILE_CREATE
	b = binary.LittleEndian.AppendUint32(b, 0x20)
	n := ntlm.EncodeUTF16(name)
	b = binary.LittleEndian.AppendUint16(b, 64+56)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(n)))
	b = append(b, make([]byte, 8)...)
	return append(append(m, b...), n...)
}

func TestStampCreate(t *testing.T) {
	name := ntlm.EncodeUTF16(`m2\scanwarden-check-x.tmp`)
	m := createRequest(`m2\scanwarden-check-x.tmp`)
	out := stampCreate(m, name, DoomStamp)
	if out == nil {
		t.Fatal("the armed CREATE was not stamped")
	}
	if got := binary.LittleEndian.Uint32(out[64+24:]); got != 0xC0010000 {
		t.Errorf("access %#x", got)
	}
	if got := binary.LittleEndian.Uint32(out[64+32:]); got != shareRead|shareWrite|shareDelete {
		t.Errorf("share %#x", got)
	}
	if got := binary.LittleEndian.Uint32(out[64+40:]); got != 0x20|optionDeleteOnClose|optionNonDirectory {
		t.Errorf("options %#x", got)
	}
	if !bytes.Equal(out[:64+24], m[:64+24]) || len(out) != len(m) || &out[0] == &m[0] {
		t.Error("the stamp changed more than its fields, or wrote into the library's buffer")
	}
	for what, bad := range map[string][]byte{
		"another name": createRequest(`m2\scanwarden-check-y.tmp`),
		"a prefix":     createRequest(`m2\scanwarden-check-x.tm`),
		"a response":   func() []byte { b := createRequest(`m2\scanwarden-check-x.tmp`); b[16] |= 1; return b }(),
		"a compound":   func() []byte { b := createRequest(`m2\scanwarden-check-x.tmp`); b[20] = 8; return b }(),
		"a write":      func() []byte { b := createRequest(`m2\scanwarden-check-x.tmp`); b[12] = 9; return b }(),
		"cut short":    m[:64+50],
	} {
		if stampCreate(bad, name, DoomStamp) != nil {
			t.Errorf("%s was stamped", what)
		}
	}
}

// A signed CREATE is stamped only when the signing key is known: a logon
// message the Stamper did not see whole leaves it unstamped, and the
// write step deletes the canary itself.
func TestStamperSignedNeedsKey(t *testing.T) {
	m := createRequest(`scanwarden-check-x.tmp`)
	binary.LittleEndian.PutUint32(m[16:], smb2FlagSigned)
	s := &Stamper{sessionKey: func() []byte { return bytes.Repeat([]byte{7}, 16) }, dialect: 0x0311}
	s.Blind()
	s.LogonDone()
	s.Arm(`scanwarden-check-x.tmp`, DoomStamp)
	if out := s.Outgoing(m); &out[0] != &m[0] || s.Disarm() {
		t.Fatal("stamped without a signing key")
	}
	s = &Stamper{sessionKey: func() []byte { return bytes.Repeat([]byte{7}, 16) }, dialect: 0x0311}
	s.LogonDone()
	s.Arm(`scanwarden-check-x.tmp`, DoomStamp)
	out := s.Outgoing(m)
	if !s.Disarm() || bytes.Equal(out[48:64], m[48:64]) {
		t.Fatal("not stamped and signed with the key")
	}
	if again := s.Outgoing(m); &again[0] != &m[0] {
		t.Error("stamped after disarm")
	}
}

// An encrypted session's messages leave in a transform header the Stamper
// cannot open: the canary is then created plainly (doomed false) and the
// write step deletes it after the close.
func TestStamperLeavesEncryptedAlone(t *testing.T) {
	m := createRequest(`scanwarden-check-x.tmp`)
	enc := append([]byte("\xfdSMB"), make([]byte, 48)...)
	enc = append(enc, m...) // what the name looks like does not matter: it is ciphertext on the wire
	s := &Stamper{sessionKey: func() []byte { return bytes.Repeat([]byte{7}, 16) }, dialect: 0x0311}
	s.LogonDone()
	s.Arm(`scanwarden-check-x.tmp`, DoomStamp)
	if out := s.Outgoing(enc); &out[0] != &enc[0] || s.Disarm() {
		t.Fatal("an encrypted message was stamped")
	}
	// Encrypted traffic before anything is armed (the tree connect, a
	// folder lookup) already says no: a rename then looks the name up
	// first instead of leaving unstamped.
	s = &Stamper{sessionKey: func() []byte { return bytes.Repeat([]byte{7}, 16) }, dialect: 0x0311}
	s.LogonDone()
	if !s.Ready() {
		t.Fatal("not ready before any encrypted message")
	}
	s.Outgoing(enc)
	if s.Ready() {
		t.Error("ready after an encrypted message left unarmed")
	}
}

// FuzzStamper: whatever a server sends during the logon (hashed) and
// whatever leaves (perhaps stamped), nothing panics, and a stamped copy
// differs from its message only in the access, share and options fields
// and the signature.
func FuzzStamper(f *testing.F) {
	f.Add(createRequest(`scanwarden-check-x.tmp`), []byte("\xfeSMB"))
	f.Add(renameRequest(`scanwarden-check-x.tmp`), []byte("\xfeSMB"))
	f.Fuzz(func(t *testing.T, out, in []byte) {
		s := &Stamper{sessionKey: func() []byte { return bytes.Repeat([]byte{7}, 16) }}
		s.LogonMessage(in, len(in)%2 == 0)
		s.LogonDone()
		s.Arm(`scanwarden-check-x.tmp`, DoomStamp)
		got := s.Outgoing(out)
		s.Disarm()
		if len(got) != len(out) {
			t.Fatalf("length %d, want %d", len(got), len(out))
		}
		s.Arm(`scanwarden-check-x.tmp`, KeepStamp)
		if renamed := s.Outgoing(out); len(renamed) != len(out) {
			t.Fatalf("rename stamp: length %d, want %d", len(renamed), len(out))
		}
		s.Disarm()
		for i := range got {
			field := (i >= 48 && i < 64) || (i >= 64+24 && i < 64+28) || (i >= 64+32 && i < 64+36) || (i >= 64+40 && i < 64+44)
			if got[i] != out[i] && !field {
				t.Fatalf("byte %d changed", i)
			}
		}
	})
}

// renameRequest is an SMB2 SET_INFO FileRenameInformation request to name,
// replace-if-exists set, as the SMB library builds one.
func renameRequest(name string) []byte {
	m := make([]byte, 64)
	copy(m, "\xfeSMB")
	binary.LittleEndian.PutUint16(m[12:], smb2CmdSetInfo)
	n := ntlm.EncodeUTF16(name)
	buf := append([]byte{1}, make([]byte, 15)...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(n)))
	buf = append(buf, n...)
	b := binary.LittleEndian.AppendUint16(nil, 33)
	b = append(b, 1, 10)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(buf)))
	b = binary.LittleEndian.AppendUint16(b, 64+32)
	b = append(b, make([]byte, 2+4+16)...)
	return append(append(m, b...), buf...)
}

func TestStampRename(t *testing.T) {
	m := renameRequest(`scans\report.pdf`)
	out := stampRename(m, ntlm.EncodeUTF16(`scans\report.pdf`))
	if out == nil || out[64+32] != 0 || m[64+32] != 1 {
		t.Fatalf("replace-if-exists not cleared on a copy: %v", out)
	}
	if stampRename(m, ntlm.EncodeUTF16(`scans\other.pdf`)) != nil || stampRename(createRequest(`scans\report.pdf`), ntlm.EncodeUTF16(`scans\report.pdf`)) != nil {
		t.Error("another rename, or a CREATE, was stamped")
	}
	short := renameRequest(`scans\report.pdf`)
	binary.LittleEndian.PutUint32(short[64+32+16:], 1000) // a name length beyond the message
	if stampRename(short, ntlm.EncodeUTF16(`scans\report.pdf`)) != nil {
		t.Error("a rename whose name runs past the message was stamped")
	}
}
