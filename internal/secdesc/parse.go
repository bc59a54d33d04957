package secdesc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Security descriptor control bits and ACE types and flags (MS-DTYP 2.4.4-2.4.6).
const (
	seDACLPresent  = 0x0004
	seSelfRelative = 0x8000

	aceAllowed         = 0x00
	aceDenied          = 0x01
	aceAllowedObject   = 0x05
	aceDeniedObject    = 0x06
	aceAllowedCallback = 0x09
	aceDeniedCallback  = 0x0A
	aceAllowedCbObject = 0x0B
	aceDeniedCbObject  = 0x0C

	aceObjectInherit    = 0x01
	aceContainerInherit = 0x02
	aceNoPropagate      = 0x04
	aceInheritOnly      = 0x08
	aceInherited        = 0x10
)

// SIDString renders one binary SID (MS-DTYP 2.4.2.2) that fills b, as AD's
// objectSid and tokenGroups values hold it, in its string form S-1-5-21-….
func SIDString(b []byte) (string, error) {
	s, n, err := parseSID(b)
	if err != nil {
		return "", err
	}
	if n != len(b) {
		return "", fmt.Errorf("sid: %d trailing bytes", len(b)-n)
	}
	return s, nil
}

// ace is one access control entry that the evaluation understands.
type ace struct {
	index    int // position in the DACL, for humans
	typ      byte
	flags    byte
	mask     uint32
	sid      string
	inherit  string // for a new file's ACE: where it came from
	callback bool   // conditional ACE, condition not evaluated
}

func (a ace) deny() bool { return a.typ == aceDenied || a.typ == aceDeniedCallback }

// securityDescriptor is the part of a descriptor the evaluation needs.
type securityDescriptor struct {
	control      uint16
	owner, group string
	nullDACL     bool  // no DACL at all: everyone may do everything
	dacl         []ace // allow and deny ACEs, in order
	defaultDACL  bool  // a new file's DACL is the creator's default
	ignored      []string
	names        map[string]string // SID → account name, for what humans read
}

// Limits that keep a hostile descriptor cheap: Windows caps an ACL at 64 KiB.
const (
	maxSDSize   = 1 << 20
	maxSubAuths = 15
)

var errShortSD = errors.New("security descriptor: truncated")

func parseSD(b []byte) (*securityDescriptor, error) {
	if len(b) < 20 {
		return nil, fmt.Errorf("security descriptor: %d bytes, want at least 20", len(b))
	}
	if len(b) > maxSDSize {
		return nil, fmt.Errorf("security descriptor: %d bytes, larger than %d", len(b), maxSDSize)
	}
	if b[0] != 1 {
		return nil, fmt.Errorf("security descriptor: revision %d, want 1", b[0])
	}
	sd := &securityDescriptor{control: binary.LittleEndian.Uint16(b[2:])}
	if sd.control&seSelfRelative == 0 {
		return nil, errors.New("security descriptor: not self-relative")
	}
	offOwner := binary.LittleEndian.Uint32(b[4:])
	offGroup := binary.LittleEndian.Uint32(b[8:])
	offDACL := binary.LittleEndian.Uint32(b[16:])
	var err error
	if sd.owner, err = sidAt(b, offOwner); err != nil {
		return nil, fmt.Errorf("security descriptor owner: %w", err)
	}
	if sd.group, err = sidAt(b, offGroup); err != nil {
		return nil, fmt.Errorf("security descriptor group: %w", err)
	}
	if sd.control&seDACLPresent == 0 || offDACL == 0 {
		sd.nullDACL = true
		return sd, nil
	}
	if err := sd.parseACL(b, offDACL); err != nil {
		return nil, fmt.Errorf("security descriptor DACL: %w", err)
	}
	return sd, nil
}

// sidAt reads the SID at off; off 0 means none.
func sidAt(b []byte, off uint32) (string, error) {
	if off == 0 {
		return "", nil
	}
	if off < 20 || uint64(off) >= uint64(len(b)) {
		return "", fmt.Errorf("offset %d outside the descriptor (%d bytes)", off, len(b))
	}
	s, _, err := parseSID(b[off:])
	return s, err
}

func (sd *securityDescriptor) parseACL(b []byte, off uint32) error {
	if off < 20 || uint64(off)+8 > uint64(len(b)) {
		return fmt.Errorf("offset %d outside the descriptor (%d bytes)", off, len(b))
	}
	acl := b[off:]
	if rev := acl[0]; rev < 2 || rev > 4 {
		return fmt.Errorf("ACL revision %d, want 2 or 4", rev)
	}
	size := int(binary.LittleEndian.Uint16(acl[2:]))
	count := int(binary.LittleEndian.Uint16(acl[4:]))
	if size < 8 || size > len(acl) {
		return fmt.Errorf("ACL size %d, %d bytes available", size, len(acl))
	}
	acl = acl[:size]
	sd.dacl = []ace{} // present: empty means nobody
	pos := 8
	for i := 0; i < count; i++ {
		if pos+4 > len(acl) {
			return fmt.Errorf("ace %d of %d: beyond the ACL's %d bytes", i, count, size)
		}
		typ, flags := acl[pos], acl[pos+1]
		n := int(binary.LittleEndian.Uint16(acl[pos+2:]))
		if n < 4 || pos+n > len(acl) {
			return fmt.Errorf("ace %d: size %d overruns the ACL", i, n)
		}
		body := acl[pos+4 : pos+n]
		pos += n
		a, ok, err := parseACE(i, typ, flags, body)
		if err != nil {
			return fmt.Errorf("ace %d: %w", i, err)
		}
		if !ok {
			sd.ignored = append(sd.ignored, fmt.Sprintf("ace %d: type 0x%02x", i, typ))
			continue
		}
		sd.dacl = append(sd.dacl, a)
	}
	return nil
}

// parseACE decodes the body of an allow or deny ACE; other types (audit,
// label, object ACEs that name an object type) are not access decisions for
// a file and are reported as ignored.
func parseACE(i int, typ, flags byte, body []byte) (ace, bool, error) {
	a := ace{index: i, typ: typ, flags: flags}
	switch typ {
	case aceAllowed, aceDenied, aceAllowedCallback, aceDeniedCallback:
		if len(body) < 4 {
			return a, false, errShortSD
		}
		a.mask = binary.LittleEndian.Uint32(body)
		body = body[4:]
	case aceAllowedObject, aceDeniedObject, aceAllowedCbObject, aceDeniedCbObject:
		// MS-DTYP 2.4.4.3: mask, flags, optional object type GUIDs, SID.
		if len(body) < 8 {
			return a, false, errShortSD
		}
		a.mask = binary.LittleEndian.Uint32(body)
		objFlags := binary.LittleEndian.Uint32(body[4:])
		body = body[8:]
		skip := 0
		if objFlags&1 != 0 {
			skip += 16
		}
		if objFlags&2 != 0 {
			skip += 16
		}
		if len(body) < skip {
			return a, false, errShortSD
		}
		body = body[skip:]
		if objFlags&1 != 0 {
			return a, false, nil // applies to an object type, not to a file
		}
		// Without an object type it is an ordinary allow or deny.
		a.typ = map[byte]byte{aceAllowedObject: aceAllowed, aceDeniedObject: aceDenied,
			aceAllowedCbObject: aceAllowedCallback, aceDeniedCbObject: aceDeniedCallback}[typ]
	default:
		return a, false, nil
	}
	a.callback = a.typ == aceAllowedCallback || a.typ == aceDeniedCallback
	sid, _, err := parseSID(body)
	if err != nil {
		return a, false, err
	}
	a.sid = sid
	return a, true, nil
}

// parseSID reads a binary SID at the start of b and returns its string form
// and its length.
func parseSID(b []byte) (string, int, error) {
	if len(b) < 8 {
		return "", 0, fmt.Errorf("sid: %d bytes, want at least 8", len(b))
	}
	if b[0] != 1 {
		return "", 0, fmt.Errorf("sid: revision %d, want 1", b[0])
	}
	count := int(b[1])
	if count > maxSubAuths {
		return "", 0, fmt.Errorf("sid: %d sub-authorities, at most %d", count, maxSubAuths)
	}
	n := 8 + 4*count
	if len(b) < n {
		return "", 0, fmt.Errorf("sid: %d bytes, its %d sub-authorities need %d", len(b), count, n)
	}
	var auth uint64
	for _, c := range b[2:8] {
		auth = auth<<8 | uint64(c)
	}
	var s strings.Builder
	s.WriteString("S-1-")
	if auth >= 1<<32 {
		fmt.Fprintf(&s, "0x%012X", auth)
	} else {
		s.WriteString(strconv.FormatUint(auth, 10))
	}
	for i := range count {
		s.WriteByte('-')
		s.WriteString(strconv.FormatUint(uint64(binary.LittleEndian.Uint32(b[8+4*i:])), 10))
	}
	return s.String(), n, nil
}
