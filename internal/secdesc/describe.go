package secdesc

import (
	"fmt"
	"strings"
)

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
