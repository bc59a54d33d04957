// Package secdesc reads a Windows security descriptor (MS-DTYP 2.4.6) as SMB2
// QUERY_INFO returns it and judges what a network logon of an account may do
// in the folder: the permission truth that smbcheck compares its canary
// write with. It also renders AD's binary SIDs.
package secdesc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Access is what a folder's security descriptor lets an account do with a
// scan: the permission truth that the canary write is compared with.
type Access struct {
	AddFile     bool // FILE_ADD_FILE on the folder: may create a file in it
	WriteData   bool // FILE_WRITE_DATA on a file it creates there (inherited ACEs)
	Delete      bool // DELETE on a file it creates there
	DeleteChild bool // FILE_DELETE_CHILD on the folder
	// Decisive names, per right ("add_file", "write_data", "delete",
	// "delete_child"), the ACE that granted or denied it, e.g.
	// "DENY S-1-5-21-…-1105 0x00000116 (ace 0, OI|CI)", or why no ACE did.
	Decisive map[string]string
	Evidence map[string]any // the descriptor, the token and the new file's DACL, for the report
}

// CanDelete reports whether the account may delete a file it created: DELETE
// on the file or FILE_DELETE_CHILD on the folder suffices.
func (a Access) CanDelete() bool { return a.Delete || a.DeleteChild }

// Right keys of Access.Decisive.
const (
	RightAddFile     = "add_file"
	RightWriteData   = "write_data"
	RightDelete      = "delete"
	RightDeleteChild = "delete_child"
)

// Access mask bits (MS-DTYP 2.4.3, files and directories).
const (
	fileAddFile     = 0x00000002 // = FILE_WRITE_DATA on a file
	fileWriteData   = 0x00000002
	fileDeleteChild = 0x00000040
	accessDelete    = 0x00010000
	readControl     = 0x00020000
	writeDAC        = 0x00040000

	genericAll     = 0x10000000
	genericExecute = 0x20000000
	genericWrite   = 0x40000000
	genericRead    = 0x80000000

	fileAllAccess      = 0x001F01FF
	fileGenericRead    = 0x00120089
	fileGenericWrite   = 0x00120116
	fileGenericExecute = 0x001200A0
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

// Well-known SIDs the evaluation uses.
const (
	sidEveryone      = "S-1-1-0"
	sidCreatorOwner  = "S-1-3-0"
	sidCreatorGroup  = "S-1-3-1"
	sidOwnerRights   = "S-1-3-4"
	sidNetwork       = "S-1-5-2"
	sidAuthenticated = "S-1-5-11"
	sidSystem        = "S-1-5-18"
	sidBuiltinUsers  = "S-1-5-32-545"
)

var wellKnownSIDs = map[string]string{
	sidEveryone:      "Everyone",
	sidCreatorOwner:  "CREATOR OWNER",
	sidCreatorGroup:  "CREATOR GROUP",
	sidOwnerRights:   "OWNER RIGHTS",
	sidNetwork:       "NETWORK",
	sidAuthenticated: "Authenticated Users",
	sidSystem:        "SYSTEM",
	"S-1-5-32-544":   "BUILTIN\\Administrators",
	sidBuiltinUsers:  "BUILTIN\\Users",
}

// Evaluate judges a folder's self-relative security descriptor (raw, as
// SMB2 QUERY_INFO returns it; it must have been asked for the DACL, and the
// owner for the owner's implicit rights) for a network logon of the account
// whose SIDs are sids: sids[0] is the account's own SID, the rest its groups
// (AD's tokenGroups), in string form.
//
// The token is sids plus Everyone, Authenticated Users and NETWORK, and
// BUILTIN\Users when sids hold a domain's Domain Users group (RID 513): on a
// Windows member server BUILTIN\Users contains Domain Users, so a domain
// account is in it. Kept simple on purpose: local group memberships on the
// file server (other than that one) are not known and not assumed.
//
// The DACL is evaluated as Windows does: ACEs in order, each right decided by
// the first ACE that names a SID of the token and the right (a deny before an
// allow wins only because it comes first), inherit-only ACEs ignored, generic
// rights mapped for files; no DACL (NULL) grants everything, an empty DACL
// nothing. The owner holds READ_CONTROL and WRITE_DAC implicitly unless an
// OWNER RIGHTS ACE says otherwise. Conditional (callback) ACEs are not
// evaluated: an allow is ignored, a deny applies.
//
// WriteData and Delete are judged on the DACL a new file would inherit: the
// folder's object-inherit ACEs, CREATOR OWNER replaced by the account's SID
// (the new file's owner). CREATOR GROUP is not replaced (the primary group is
// not known here) and so never matches. A folder without inheritable ACEs
// gives new files the creator's default DACL: full control for the creator.
func Evaluate(raw []byte, sids []string) (Access, error) {
	return EvaluateNamed(raw, sids, nil)
}

// EvaluateNamed is Evaluate naming the deciding ACE's trustee by the
// account or group name in names (SID → DOMAIN\name) instead of its SID.
func EvaluateNamed(raw []byte, sids []string, names map[string]string) (Access, error) {
	sd, err := parseSD(raw)
	if err != nil {
		return Access{}, err
	}
	sd.names = names
	tok := newToken(sids)
	acc := Access{Decisive: map[string]string{}, Evidence: map[string]any{}}

	acc.AddFile, acc.Decisive[RightAddFile] = sd.check(tok, sd.owner, fileAddFile)
	acc.DeleteChild, acc.Decisive[RightDeleteChild] = sd.check(tok, sd.owner, fileDeleteChild)

	file := sd.newFile(tok.user)
	acc.WriteData, acc.Decisive[RightWriteData] = file.check(tok, tok.user, fileWriteData)
	acc.Delete, acc.Decisive[RightDelete] = file.check(tok, tok.user, accessDelete)

	ev := acc.Evidence
	ev["sd_control"] = fmt.Sprintf("0x%04x", sd.control)
	if sd.owner != "" {
		ev["sd_owner"] = sd.owner
	}
	if sd.group != "" {
		ev["sd_group"] = sd.group
	}
	ev["dacl"] = sd.describe()
	ev["new_file_dacl"] = file.describe()
	ev["token"] = tok.list
	if len(sd.ignored) > 0 {
		ev["dacl_ignored"] = sd.ignored
	}
	return acc, nil
}

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

// String is the ACE as the evidence shows it.
func (a ace) String() string { return a.describe(nil) }

// describe is the ACE with its trustee by name when names (or the
// well-known table) knows it, by SID otherwise.
func (a ace) describe(names map[string]string) string {
	verb := "ALLOW"
	if a.deny() {
		verb = "DENY"
	}
	who := a.sid
	if name, ok := names[a.sid]; ok && name != "" {
		who = name
	} else if name, ok := wellKnownSIDs[a.sid]; ok {
		who += " (" + name + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s 0x%08x (ace %d", verb, who, a.mask, a.index)
	if f := flagString(a.flags); f != "" {
		b.WriteString(", " + f)
	}
	if a.inherit != "" {
		b.WriteString(", " + a.inherit)
	}
	if a.callback {
		b.WriteString(", conditional: not evaluated")
	}
	b.WriteString(") " + maskWords(a.mask))
	return b.String()
}

func flagString(f byte) string {
	var parts []string
	for _, x := range []struct {
		bit  byte
		name string
	}{{aceObjectInherit, "OI"}, {aceContainerInherit, "CI"}, {aceNoPropagate, "NP"}, {aceInheritOnly, "IO"}, {aceInherited, "ID"}} {
		if f&x.bit != 0 {
			parts = append(parts, x.name)
		}
	}
	return strings.Join(parts, "|")
}

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

// token is the set of SIDs a network logon of the account carries.
type token struct {
	user string // the account's own SID ("" when not given)
	has  map[string]bool
	list []string
}

func newToken(sids []string) token {
	t := token{has: map[string]bool{}}
	add := func(s string) {
		s = strings.ToUpper(strings.TrimSpace(s))
		if s == "" || t.has[s] {
			return
		}
		t.has[s] = true
		t.list = append(t.list, s)
	}
	for _, s := range sids {
		add(s)
	}
	if len(t.list) > 0 && len(sids) > 0 {
		t.user = strings.ToUpper(strings.TrimSpace(sids[0]))
	}
	domainUser := false
	for _, s := range t.list {
		if strings.HasPrefix(s, "S-1-5-21-") && strings.HasSuffix(s, "-513") {
			domainUser = true
		}
	}
	add(sidEveryone)
	add(sidAuthenticated)
	add(sidNetwork)
	if domainUser {
		add(sidBuiltinUsers)
	}
	return t
}

// mapGeneric maps generic rights to the file-specific rights they mean.
func mapGeneric(m uint32) uint32 {
	if m&genericRead != 0 {
		m |= fileGenericRead
	}
	if m&genericWrite != 0 {
		m |= fileGenericWrite
	}
	if m&genericExecute != 0 {
		m |= fileGenericExecute
	}
	if m&genericAll != 0 {
		m |= fileAllAccess
	}
	return m &^ (genericRead | genericWrite | genericExecute | genericAll)
}

// maskWords names an access mask as the Security tab does: a standard set
// (Full control, Modify, ...) when it is one, else its advanced
// permissions, in brackets.
func maskWords(m uint32) string {
	m = mapGeneric(m) &^ 0x00100000 // SYNCHRONIZE says nothing to an admin
	for _, set := range []struct {
		mask uint32
		name string
	}{{0x000F01FF, "Full control"}, {0x000301BF, "Modify"}, {0x000200A9, "Read & execute"}, {0x00020089, "Read"}, {0x00000116, "Write"}} {
		if m == set.mask {
			return "[" + set.name + "]"
		}
	}
	var words []string
	for _, bit := range []struct {
		mask uint32
		name string
	}{{0x1, "list folder / read data"}, {0x2, "create files / write data"}, {0x4, "create folders / append data"},
		{0x8, "read extended attributes"}, {0x10, "write extended attributes"}, {0x20, "traverse folder / execute file"},
		{0x40, "delete subfolders and files"}, {0x80, "read attributes"}, {0x100, "write attributes"}, {accessDelete, "delete"},
		{readControl, "read permissions"}, {writeDAC, "change permissions"}, {0x00080000, "take ownership"}} {
		if m&bit.mask != 0 {
			words = append(words, bit.name)
		}
	}
	if len(words) == 0 {
		return "[no rights]"
	}
	return "[" + strings.Join(words, ", ") + "]"
}

var rightNames = map[uint32]string{
	fileAddFile:     "FILE_ADD_FILE/FILE_WRITE_DATA",
	fileDeleteChild: "FILE_DELETE_CHILD",
	accessDelete:    "DELETE",
	readControl:     "READ_CONTROL",
	writeDAC:        "WRITE_DAC",
}

// check decides one right for the token on an object owned by owner and
// returns the decision and the text naming what decided it.
func (sd *securityDescriptor) check(t token, owner string, right uint32) (bool, string) {
	name := rightNames[right]
	if sd.nullDACL {
		return true, "NULL DACL: everyone has every right"
	}
	if sd.defaultDACL {
		return true, "default DACL of the creator (the folder has no inheritable ACE): the creator has full control"
	}
	isOwner := owner != "" && t.has[strings.ToUpper(owner)]
	ownerRightsACE := false
	for _, a := range sd.dacl {
		if a.sid == sidOwnerRights && a.flags&aceInheritOnly == 0 {
			ownerRightsACE = true
		}
	}
	if isOwner && !ownerRightsACE && right&(readControl|writeDAC) != 0 {
		return true, "OWNER " + owner + ": READ_CONTROL and WRITE_DAC implicitly"
	}
	for _, a := range sd.dacl {
		if a.flags&aceInheritOnly != 0 {
			continue
		}
		match := t.has[a.sid] || (a.sid == sidOwnerRights && isOwner)
		if !match || mapGeneric(a.mask)&right == 0 {
			continue
		}
		if a.callback && !a.deny() {
			continue // an unevaluated condition grants nothing
		}
		return !a.deny(), a.describe(sd.names)
	}
	if len(sd.dacl) == 0 {
		return false, "empty DACL: nobody has any right"
	}
	return false, "no ACE grants " + name + " to the account's token (implicit deny)"
}

// newFile returns the descriptor a file created in the folder by user would
// get: the folder's object-inherit ACEs, made effective.
func (sd *securityDescriptor) newFile(user string) *securityDescriptor {
	f := &securityDescriptor{owner: user, dacl: []ace{}, names: sd.names}
	if sd.nullDACL {
		f.defaultDACL = true
		return f
	}
	for _, a := range sd.dacl {
		if a.flags&aceObjectInherit == 0 {
			continue
		}
		b := a
		b.flags = aceInherited
		b.inherit = "inherited from the folder"
		if a.sid == sidCreatorOwner && user != "" {
			b.sid = user
			b.inherit = "CREATOR OWNER inherited from the folder"
		}
		b.mask = mapGeneric(a.mask)
		f.dacl = append(f.dacl, b)
	}
	if len(f.dacl) == 0 {
		f.defaultDACL = true
	}
	return f
}

// describe lists the ACEs for the evidence.
func (sd *securityDescriptor) describe() []string {
	switch {
	case sd.nullDACL:
		return []string{"NULL DACL"}
	case sd.defaultDACL:
		return []string{"default DACL of the creator"}
	case len(sd.dacl) == 0:
		return []string{"empty DACL"}
	}
	out := make([]string, 0, len(sd.dacl))
	for _, a := range sd.dacl {
		out = append(out, a.String())
	}
	return out
}
