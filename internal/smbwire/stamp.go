package smbwire

import (
	"bytes"
	"crypto/aes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"sync"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// The canary's delete-on-close.
//
// The write step's test file must go even when the check dies before it
// deletes it (kill -9, power loss, a dropped connection). SMB has that:
// FILE_DELETE_ON_CLOSE on the CREATE that makes the file, with DELETE
// access, and the server deletes the file when its last handle goes,
// however it goes. The SMB library cannot ask for it (its CREATE never
// carries DELETE access or create options of the caller's), so the
// connection under it — the Sniffer, which reads the logon along already —
// stamps the two bits onto that one CREATE on its way out and signs the
// message again with the session's signing key, derived here from the NTLM
// session key and the logon's messages as MS-SMB2 3.2.5.3 says.
//
// A stamp is armed for one path and disarmed right after its CREATE. An
// encrypted session, a key that cannot be derived, or a message that is not
// the expected CREATE go out unchanged: the write step then deletes the
// canary itself, and the canary journal covers a crash in between.

const (
	smb2CmdNegotiate    = 0
	smb2CmdSessionSetup = 1
	smb2CmdCreate       = 5
	smb2CmdSetInfo      = 17

	smb2FlagResponse = 0x00000001
	smb2FlagSigned   = 0x00000008

	accessDeleteObject  = 0x00010000 // DELETE
	optionDeleteOnClose = 0x00001000 // FILE_DELETE_ON_CLOSE
	shareRead           = 0x00000001 // FILE_SHARE_READ
	shareWrite          = 0x00000002 // FILE_SHARE_WRITE
	shareDelete         = 0x00000004 // FILE_SHARE_DELETE
	optionNonDirectory  = 0x00000040 // FILE_NON_DIRECTORY_FILE
)

// A Stamp is what is added to a CREATE's access, share access and options
// — or, for noReplace, a rename (SET_INFO FileRenameInformation) that must
// not replace a file already under the new name.
type Stamp struct {
	access, share, options uint32
	noReplace              bool
}

var (
	// DoomStamp makes the canary: the server deletes it when its handle
	// closes or the connection drops. Others may open it to delete it.
	DoomStamp = Stamp{access: accessDeleteObject, share: shareDelete, options: optionDeleteOnClose | optionNonDirectory}
	// ShareStamp lets the delete probe open the canary while the
	// canary's own handle (read and write) is still open.
	ShareStamp = Stamp{share: shareRead | shareWrite}
	// KeepStamp makes a rename fail with OBJECT_NAME_COLLISION instead of
	// replacing what is there (the SMB library always asks to replace).
	KeepStamp = Stamp{noReplace: true}
)

// Stamper stamps one armed CREATE of a session.
type Stamper struct {
	// sessionKey is the NTLM session key, asked once the logon is done.
	sessionKey func() []byte

	armMu sync.Mutex // held from arm to disarm: one armed operation at a time

	mu      sync.Mutex
	dialect uint16
	preauth [64]byte // SMB 3.1.1: hash of the logon's messages so far
	unsure  bool     // a logon message was not seen whole: no signing key
	final   bool     // the logon is over: the hash is final
	signKey []byte   // derived at the first stamp
	armed   []byte   // the CREATE's path, UTF-16LE; nil when disarmed
	with    Stamp
	stamped bool
	sealed  bool // a message left encrypted: nothing can be stamped
}

// LogonMessage folds a negotiate or session setup message (request, or
// response that the hash covers) into the pre-authentication hash.
// NewStamper is the stamper of one session; sessionKey gives the logon's
// session key once the logon is done (nil: the logon gives none).
func NewStamper(sessionKey func() []byte) *Stamper { return &Stamper{sessionKey: sessionKey} }

func (s *Stamper) LogonMessage(m []byte, whole bool) {
	if len(m) < 64 || string(m[:4]) != "\xfeSMB" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final {
		return
	}
	cmd := binary.LittleEndian.Uint16(m[12:])
	response := binary.LittleEndian.Uint32(m[16:])&smb2FlagResponse != 0
	status := ntstatus.Status(binary.LittleEndian.Uint32(m[8:]))
	switch {
	case cmd == smb2CmdNegotiate && response:
		if status == ntstatus.Success && len(m) >= 64+6 {
			s.dialect = binary.LittleEndian.Uint16(m[64+4:])
		}
	case cmd == smb2CmdSessionSetup && response:
		if status != ntstatus.MoreProcessingRequired {
			return // the last response is not hashed
		}
	case cmd != smb2CmdNegotiate && cmd != smb2CmdSessionSetup:
		return
	}
	if !whole {
		s.unsure = true
		return
	}
	h := sha512.New()
	h.Write(s.preauth[:])
	h.Write(m)
	h.Sum(s.preauth[:0])
}

// Blind notes a message written in pieces the Stamper could not follow:
// during the logon, the signing key can then not be derived.
func (s *Stamper) Blind() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.final {
		s.unsure = true
	}
}

// LogonDone ends the logon: later messages are not hashed.
func (s *Stamper) LogonDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.final = true
}

// Arm makes the next CREATE of path (as the SMB library sends it: a
// backslash path relative to the share) carry st — or, for a noReplace
// Stamp, the next rename to path. It waits for an armed operation of
// another goroutine to be disarmed; every arm must be followed by disarm.
func (s *Stamper) Arm(path string, st Stamp) {
	s.armMu.Lock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = ntlm.EncodeUTF16(path)
	s.with = st
	s.stamped = false
}

// Disarm ends the stamp and reports whether it was applied.
func (s *Stamper) Disarm() bool {
	s.mu.Lock()
	s.armed = nil
	stamped := s.stamped
	s.mu.Unlock()
	s.armMu.Unlock()
	return stamped
}

// Outgoing returns m as it should leave: m itself, or a stamped and
// re-signed copy when m is the armed CREATE.
func (s *Stamper) Outgoing(m []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(m) >= 4 && string(m[:4]) == "\xfdSMB" {
		s.sealed = true // an encrypting session or share: ready says no from now on
		return m
	}
	if s.armed == nil || s.stamped {
		return m
	}
	var out []byte
	if s.with.noReplace {
		out = stampRename(m, s.armed)
	} else {
		out = stampCreate(m, s.armed, s.with)
	}
	if out == nil {
		return m
	}
	if binary.LittleEndian.Uint32(out[16:])&smb2FlagSigned != 0 {
		if !s.deriveKey() {
			return m
		}
		signSMB2(out, s.dialect, s.signKey)
	}
	s.stamped = true
	return out
}

// Ready reports whether a stamp can be applied to the next message: none
// has left encrypted, and the signing key can be derived if it is signed.
func (s *Stamper) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.sealed && s.deriveKey()
}

// deriveKey derives the session's signing key (MS-SMB2 3.2.5.3.1) once.
func (s *Stamper) deriveKey() bool {
	if s.signKey != nil {
		return true
	}
	if s.unsure || s.sessionKey == nil {
		return false
	}
	key := s.sessionKey()
	if len(key) == 0 {
		return false
	}
	switch s.dialect {
	case 0x0202, 0x0210:
		s.signKey = bytes.Clone(key)
	case 0x0300, 0x0302:
		s.signKey = smb3KDF(key, "SMB2AESCMAC\x00", []byte("SmbSign\x00"))
	case 0x0311:
		s.signKey = smb3KDF(key, "SMBSigningKey\x00", s.preauth[:])
	default:
		return false
	}
	return true
}

// loneRequest reports whether m is an SMB2 request of command cmd, not
// compounded, whose body has structure size size, and no shorter than least.
func loneRequest(m []byte, cmd, size uint16, least int) bool {
	return len(m) >= least && len(m) >= 66 && string(m[:4]) == "\xfeSMB" &&
		binary.LittleEndian.Uint16(m[12:]) == cmd &&
		binary.LittleEndian.Uint32(m[16:])&smb2FlagResponse == 0 &&
		binary.LittleEndian.Uint32(m[20:]) == 0 && // NextCommand: not compounded
		binary.LittleEndian.Uint16(m[64:]) == size
}

// stampCreate returns a copy of m with st added when m is a lone SMB2
// CREATE request for exactly name; nil otherwise.
func stampCreate(m, name []byte, st Stamp) []byte {
	const (
		body         = 64
		access       = body + 24
		share        = body + 32
		options      = body + 40
		nameOffset   = body + 44
		nameLength   = body + 46
		minCreate    = body + 56
		structCreate = 57
	)
	if !loneRequest(m, smb2CmdCreate, structCreate, minCreate) {
		return nil
	}
	off := int(binary.LittleEndian.Uint16(m[nameOffset:]))
	n := int(binary.LittleEndian.Uint16(m[nameLength:]))
	if off < minCreate || off+n > len(m) || !bytes.Equal(m[off:off+n], name) {
		return nil
	}
	out := bytes.Clone(m)
	for _, f := range []struct {
		at   int
		bits uint32
	}{{access, st.access}, {share, st.share}, {options, st.options}} {
		binary.LittleEndian.PutUint32(out[f.at:], binary.LittleEndian.Uint32(out[f.at:])|f.bits)
	}
	return out
}

// stampRename returns a copy of m with ReplaceIfExists cleared when m is a
// lone SMB2 SET_INFO FileRenameInformation request renaming to exactly name;
// nil otherwise.
func stampRename(m, name []byte) []byte {
	const (
		body         = 64
		infoType     = body + 2
		infoClass    = body + 3
		bufLength    = body + 4
		bufOffset    = body + 8
		minSetInfo   = body + 32
		structSet    = 33
		renameHeader = 20 // ReplaceIfExists, 7 reserved, RootDirectory, FileNameLength
	)
	if !loneRequest(m, smb2CmdSetInfo, structSet, minSetInfo) ||
		m[infoType] != 1 || m[infoClass] != 10 { // SMB2_0_INFO_FILE, FileRenameInformation
		return nil
	}
	off := int(binary.LittleEndian.Uint16(m[bufOffset:]))
	n := int(binary.LittleEndian.Uint32(m[bufLength:]))
	if off < minSetInfo || n < renameHeader || off+n > len(m) {
		return nil
	}
	buf := m[off : off+n]
	nameLen := int(binary.LittleEndian.Uint32(buf[16:]))
	if renameHeader+nameLen > len(buf) || !bytes.Equal(buf[renameHeader:renameHeader+nameLen], name) {
		return nil
	}
	out := bytes.Clone(m)
	out[off] = 0 // ReplaceIfExists
	return out
}

// signSMB2 writes m's signature (MS-SMB2 3.1.4.1): HMAC-SHA256 for SMB 2.x,
// AES-128-CMAC for SMB 3.x, over the message with a zero signature field.
func signSMB2(m []byte, dialect uint16, key []byte) {
	sig := m[48:64]
	clear(sig)
	var mac []byte
	if dialect < 0x0300 {
		h := hmac.New(sha256.New, key)
		h.Write(m)
		mac = h.Sum(nil)
	} else {
		mac = cmacAES128(key, m)
	}
	copy(sig, mac[:16])
}

// smb3KDF is SP800-108 in counter mode with HMAC-SHA256, 128 bits out, as SMB 3
// uses it (the label carries its own terminating zero).
func smb3KDF(key []byte, label string, context []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte{0, 0, 0, 1})
	h.Write([]byte(label))
	h.Write([]byte{0})
	h.Write(context)
	h.Write([]byte{0, 0, 0, 128})
	return h.Sum(nil)[:16]
}

// cmacAES128 is AES-CMAC (RFC 4493).
func cmacAES128(key, msg []byte) []byte {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil // only a key of the wrong size; deriveKey makes 16 bytes
	}
	var l [16]byte
	b.Encrypt(l[:], l[:])
	k1 := cmacDouble(l)
	k2 := cmacDouble(k1)
	n := (len(msg) + 15) / 16
	complete := n > 0 && len(msg)%16 == 0
	if n == 0 {
		n = 1
	}
	var x [16]byte
	for i := 0; i < n-1; i++ {
		for j := range 16 {
			x[j] ^= msg[i*16+j]
		}
		b.Encrypt(x[:], x[:])
	}
	var last [16]byte
	rest := msg[(n-1)*16:]
	copy(last[:], rest)
	k := k1
	if !complete {
		last[len(rest)] = 0x80
		k = k2
	}
	for j := range 16 {
		x[j] ^= last[j] ^ k[j]
	}
	b.Encrypt(x[:], x[:])
	return x[:]
}

func cmacDouble(in [16]byte) [16]byte {
	var out [16]byte
	for i := range 15 {
		out[i] = in[i]<<1 | in[i+1]>>7
	}
	out[15] = in[15] << 1
	if in[0]&0x80 != 0 {
		out[15] ^= 0x87
	}
	return out
}
