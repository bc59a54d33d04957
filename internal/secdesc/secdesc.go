// Package secdesc reads a Windows security descriptor (MS-DTYP 2.4.6) as SMB2
// QUERY_INFO returns it and judges what a network logon of an account may do
// in the folder: the permission truth that smbcheck compares its canary
// write with. It also renders AD's binary SIDs.
package secdesc

import (
	"fmt"
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
