package secdesc

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// Test SIDs: a domain, its user alice, Domain Users and two groups.
const (
	tDomain      = "S-1-5-21-1004336348-1177238915-682003330"
	tAlice       = tDomain + "-1105"
	tBob         = tDomain + "-1106"
	tDomainUsers = tDomain + "-513"
	tFinance     = tDomain + "-1200"
	tScanners    = tDomain + "-1201"
	tAdmins      = "S-1-5-32-544"
)

// tACE is an ACE to build into a test descriptor.
type tACE struct {
	typ   byte
	flags byte
	mask  uint32
	sid   string
	raw   []byte // object ACE body after the mask (flags, GUIDs), or nil
}

func allow(sid string, mask uint32, flags byte) tACE {
	return tACE{typ: aceAllowed, flags: flags, mask: mask, sid: sid}
}

func deny(sid string, mask uint32, flags byte) tACE {
	return tACE{typ: aceDenied, flags: flags, mask: mask, sid: sid}
}

// sidBytes encodes a string SID (decimal authority only).
func sidBytes(t testing.TB, s string) []byte {
	t.Helper()
	parts := strings.Split(s, "-")
	if len(parts) < 3 || parts[0] != "S" || parts[1] != "1" {
		t.Fatalf("bad test SID %q", s)
	}
	auth, err := strconv.ParseUint(parts[2], 10, 48)
	if err != nil {
		t.Fatalf("bad test SID %q: %v", s, err)
	}
	subs := parts[3:]
	b := make([]byte, 8, 8+4*len(subs))
	b[0], b[1] = 1, byte(len(subs))
	for i := 0; i < 6; i++ {
		b[2+i] = byte(auth >> (8 * (5 - i)))
	}
	for _, p := range subs {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			t.Fatalf("bad test SID %q: %v", s, err)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// buildSD encodes a self-relative descriptor; dacl nil means no DACL (NULL).
func buildSD(t testing.TB, owner, group string, dacl []tACE) []byte {
	t.Helper()
	control := uint16(seSelfRelative)
	b := make([]byte, 20)
	b[0] = 1
	put := func(off int, data []byte) {
		binary.LittleEndian.PutUint32(b[off:], uint32(len(b)))
		b = append(b, data...)
	}
	if owner != "" {
		put(4, sidBytes(t, owner))
	}
	if group != "" {
		put(8, sidBytes(t, group))
	}
	if dacl != nil {
		control |= seDACLPresent
		acl := make([]byte, 8)
		acl[0] = 2
		for _, a := range dacl {
			body := binary.LittleEndian.AppendUint32(nil, a.mask)
			body = append(body, a.raw...)
			body = append(body, sidBytes(t, a.sid)...)
			hdr := []byte{a.typ, a.flags, 0, 0}
			binary.LittleEndian.PutUint16(hdr[2:], uint16(4+len(body)))
			acl = append(acl, hdr...)
			acl = append(acl, body...)
		}
		binary.LittleEndian.PutUint16(acl[2:], uint16(len(acl)))
		binary.LittleEndian.PutUint16(acl[4:], uint16(len(dacl)))
		put(16, acl)
	}
	binary.LittleEndian.PutUint16(b[2:], control)
	return b
}

const (
	modify       = 0x001301bf // Windows "Modify"
	modifyNoDel  = 0x001201bf // Modify without DELETE (the lab's nodelete folder)
	readExec     = 0x001200a9
	fullControl  = 0x001f01ff
	thisFolderWr = 0x00100006 // create files / create folders, this folder only
	oici         = aceObjectInherit | aceContainerInherit
	oiio         = aceObjectInherit | aceInheritOnly
)

func TestEvaluateSD(t *testing.T) {
	aliceToken := []string{tAlice, tDomainUsers, tScanners}
	type want struct{ add, write, del, delChild bool }
	tests := []struct {
		name     string
		owner    string
		dacl     []tACE // nil: NULL DACL
		sids     []string
		want     want
		decisive map[string]string // right → substring of its decisive text
	}{
		{name: "null DACL grants everything", owner: tAdmins, dacl: nil, sids: aliceToken,
			want:     want{true, true, true, true},
			decisive: map[string]string{RightAddFile: "NULL DACL", RightWriteData: "default DACL"}},
		{name: "empty DACL grants nothing", owner: tAdmins, dacl: []tACE{}, sids: aliceToken,
			want:     want{false, true, true, false},
			decisive: map[string]string{RightAddFile: "empty DACL", RightWriteData: "default DACL"}},
		{name: "everyone full control", owner: tAdmins, dacl: []tACE{allow(sidEveryone, fullControl, oici)}, sids: aliceToken,
			want:     want{true, true, true, true},
			decisive: map[string]string{RightAddFile: "ALLOW S-1-1-0 (Everyone) 0x001f01ff (ace 0, OI|CI)", RightDelete: "inherited from the folder"}},
		{name: "deny before allow wins", owner: tAdmins,
			dacl: []tACE{deny(tAlice, fileWriteData|0x4|accessDelete, oici), allow(sidAuthenticated, modify, oici)}, sids: aliceToken,
			want:     want{false, false, false, false},
			decisive: map[string]string{RightAddFile: "DENY " + tAlice + " 0x00010006 (ace 0, OI|CI)", RightDeleteChild: "implicit deny"}},
		{name: "allow before deny wins (non-canonical order)", owner: tAdmins,
			dacl: []tACE{allow(sidAuthenticated, modify, oici), deny(tAlice, fullControl, oici)}, sids: aliceToken,
			want:     want{true, true, true, false},
			decisive: map[string]string{RightAddFile: "ALLOW S-1-5-11 (Authenticated Users)", RightDeleteChild: "DENY " + tAlice + " 0x001f01ff (ace 1, OI|CI)"}},
		{name: "deny for someone else does not apply", owner: tAdmins,
			dacl: []tACE{deny(tBob, fullControl, oici), allow(sidEveryone, fullControl, oici)}, sids: aliceToken,
			want: want{true, true, true, true}},
		{name: "group the user is not in", owner: tAdmins,
			dacl: []tACE{allow(tFinance, modify, oici), allow(sidAuthenticated, readExec, oici)}, sids: aliceToken,
			want:     want{false, false, false, false},
			decisive: map[string]string{RightAddFile: "implicit deny", RightDelete: "implicit deny"}},
		{name: "group the user is in", owner: tAdmins,
			dacl: []tACE{allow(tScanners, modify, oici)}, sids: aliceToken,
			want:     want{true, true, true, false},
			decisive: map[string]string{RightAddFile: "ALLOW " + tScanners, RightDeleteChild: "implicit deny"}},
		{name: "may create but not delete", owner: tAdmins,
			dacl: []tACE{allow(tAlice, modifyNoDel, oici)}, sids: aliceToken,
			want:     want{true, true, false, false},
			decisive: map[string]string{RightDelete: "implicit deny", RightAddFile: "0x001201bf"}},
		{name: "inherit-only deny spares the folder, hits the new file", owner: tAdmins,
			dacl: []tACE{deny(tAlice, fileWriteData, oiio), allow(sidEveryone, modify, oici)}, sids: aliceToken,
			want:     want{true, false, true, false},
			decisive: map[string]string{RightAddFile: "ALLOW S-1-1-0", RightWriteData: "DENY " + tAlice + " 0x00000002 (ace 0, ID, inherited from the folder)"}},
		{name: "creator owner gives the creator its file", owner: tAdmins,
			dacl: []tACE{allow(sidBuiltinUsers, thisFolderWr, 0), allow(sidCreatorOwner, genericAll, oici|aceInheritOnly)}, sids: aliceToken,
			want: want{true, true, true, false},
			decisive: map[string]string{RightAddFile: "ALLOW S-1-5-32-545 (BUILTIN\\Users)",
				RightDelete: "ALLOW " + tAlice + " 0x001f01ff (ace 1, ID, CREATOR OWNER inherited from the folder)"}},
		{name: "BUILTIN Users only for a domain user", owner: tAdmins,
			dacl: []tACE{allow(sidBuiltinUsers, modify, oici)}, sids: []string{tAlice},
			want: want{false, false, false, false}},
		{name: "generic write maps to add file", owner: tAdmins,
			dacl: []tACE{allow(sidEveryone, genericWrite, oici)}, sids: aliceToken,
			want: want{true, true, false, false}},
		{name: "generic all maps to delete child", owner: tAdmins,
			dacl: []tACE{allow(tDomainUsers, genericAll, aceContainerInherit)}, sids: aliceToken,
			want:     want{true, true, true, true},
			decisive: map[string]string{RightDeleteChild: "ALLOW " + tDomainUsers + " 0x10000000", RightWriteData: "default DACL"}},
		{name: "conditional allow grants nothing, conditional deny applies", owner: tAdmins,
			dacl: []tACE{{typ: aceAllowedCallback, flags: oici, mask: fullControl, sid: tAlice},
				{typ: aceDeniedCallback, flags: oici, mask: accessDelete, sid: tAlice},
				allow(sidEveryone, thisFolderWr|fileDeleteChild, oici)}, sids: aliceToken,
			want:     want{true, true, false, true},
			decisive: map[string]string{RightDelete: "conditional: not evaluated"}},
		{name: "object ACE without object type applies; with one it is ignored", owner: tAdmins,
			dacl: []tACE{{typ: aceDeniedObject, flags: oici, mask: fileWriteData, sid: tAlice, raw: append([]byte{1, 0, 0, 0}, make([]byte, 16)...)},
				{typ: aceAllowedObject, flags: oici, mask: modify, sid: tAlice, raw: []byte{0, 0, 0, 0}}}, sids: aliceToken,
			want:     want{true, true, true, false},
			decisive: map[string]string{RightAddFile: "ALLOW " + tAlice + " 0x001301bf (ace 1, OI|CI)"}},
		{name: "SIDs compare case-insensitively", owner: tAdmins,
			dacl: []tACE{allow(tAlice, modify, oici)}, sids: []string{strings.ToLower(tAlice)},
			want: want{true, true, true, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := buildSD(t, tc.owner, tDomainUsers, tc.dacl)
			got, err := Evaluate(raw, tc.sids)
			if err != nil {
				t.Fatal(err)
			}
			g := want{got.AddFile, got.WriteData, got.Delete, got.DeleteChild}
			if g != tc.want {
				t.Errorf("add, write, delete, delete child = %v, want %v\ndecisive: %q\nevidence: %v", g, tc.want, got.Decisive, got.Evidence)
			}
			for _, r := range []string{RightAddFile, RightWriteData, RightDelete, RightDeleteChild} {
				if got.Decisive[r] == "" {
					t.Errorf("no decisive text for %s", r)
				}
			}
			for r, sub := range tc.decisive {
				if !strings.Contains(got.Decisive[r], sub) {
					t.Errorf("decisive[%s] = %q, want it to contain %q", r, got.Decisive[r], sub)
				}
			}
			if got.Evidence["sd_owner"] != tc.owner {
				t.Errorf("evidence sd_owner = %v, want %s", got.Evidence["sd_owner"], tc.owner)
			}
		})
	}
}

func TestOwnerImplicitRights(t *testing.T) {
	tok := newToken([]string{tAlice, tDomainUsers})
	tests := []struct {
		name        string
		owner       string
		dacl        []tACE
		read, write bool // READ_CONTROL, WRITE_DAC
		text        string
	}{
		{"owner without an OWNER RIGHTS ACE", tAlice, []tACE{allow(tBob, fullControl, 0)}, true, true, "OWNER " + tAlice},
		{"not the owner", tBob, []tACE{allow(tBob, fullControl, 0)}, false, false, "implicit deny"},
		{"OWNER RIGHTS ACE replaces the implicit rights", tAlice, []tACE{allow(sidOwnerRights, readControl, 0)}, true, false, "implicit deny"},
		{"an inherit-only OWNER RIGHTS ACE does not", tAlice, []tACE{allow(sidOwnerRights, readControl, oiio)}, true, true, "OWNER " + tAlice},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sd, err := parseSD(buildSD(t, tc.owner, "", tc.dacl))
			if err != nil {
				t.Fatal(err)
			}
			r, _ := sd.check(tok, sd.owner, readControl)
			w, text := sd.check(tok, sd.owner, writeDAC)
			if r != tc.read || w != tc.write {
				t.Errorf("READ_CONTROL %v WRITE_DAC %v, want %v %v", r, w, tc.read, tc.write)
			}
			if !strings.Contains(text, tc.text) {
				t.Errorf("WRITE_DAC decided by %q, want %q", text, tc.text)
			}
		})
	}
}

func TestEvaluateSDHostile(t *testing.T) {
	good := buildSD(t, tAdmins, tDomainUsers, []tACE{allow(sidEveryone, fullControl, oici)})
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	daclOff := int(binary.LittleEndian.Uint32(good[16:]))
	tests := []struct {
		name string
		raw  []byte
		want string
	}{
		{"empty", nil, "want at least 20"},
		{"short header", good[:19], "want at least 20"},
		{"revision", mod(func(b []byte) []byte { b[0] = 2; return b }), "revision 2"},
		{"absolute form", mod(func(b []byte) []byte { b[3] &^= 0x80; return b }), "not self-relative"},
		{"owner offset beyond the end", mod(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], 1<<31); return b }), "owner: offset"},
		{"owner offset inside the header", mod(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], 4); return b }), "owner: offset"},
		{"DACL offset beyond the end", mod(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[16:], uint32(len(b)-4)); return b }), "DACL: offset"},
		{"ACL size larger than the data", mod(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[daclOff+2:], 0xffff); return b }), "ACL size"},
		{"more ACEs than bytes", mod(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[daclOff+4:], 500); return b }), "ace 1 of 500"},
		{"ACE size zero", mod(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[daclOff+10:], 0); return b }), "ace 0: size 0"},
		{"ACE size overruns", mod(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[daclOff+10:], 200); return b }), "overruns"},
		{"ACE too short for its mask", mod(func(b []byte) []byte {
			binary.LittleEndian.PutUint16(b[daclOff+10:], 6)
			return b
		}), "truncated"},
		{"SID with too many sub-authorities", mod(func(b []byte) []byte { b[daclOff+8+8+1] = 16; return b }), "16 sub-authorities"},
		{"SID cut short", mod(func(b []byte) []byte { b[daclOff+8+8+1] = 5; return b }), "need 28"},
		{"ACL revision", mod(func(b []byte) []byte { b[daclOff] = 9; return b }), "ACL revision 9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Evaluate(tc.raw, []string{tAlice})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSIDString(t *testing.T) {
	for _, s := range []string{"S-1-0-0", "S-1-1-0", "S-1-5-32-545", tAlice, "S-1-5-21-4294967295-1-2-3-4-5-6-7-8-9-10-11-12-13"} {
		got, err := SIDString(sidBytes(t, s))
		if err != nil || got != s {
			t.Errorf("SIDString(%s) = %q, %v", s, got, err)
		}
	}
	big := sidBytes(t, "S-1-5-1")
	copy(big[2:8], []byte{0x01, 0x02, 0, 0, 0, 5})
	if got, _ := SIDString(big); got != "S-1-0x010200000005-1" {
		t.Errorf("authority ≥ 2^32: %q", got)
	}
	if _, err := SIDString(append(sidBytes(t, tAlice), 0)); err == nil {
		t.Error("trailing byte accepted")
	}
}

func FuzzEvaluateSD(f *testing.F) {
	f.Add(buildSD(f, tAdmins, tDomainUsers, nil))
	f.Add(buildSD(f, tAdmins, tDomainUsers, []tACE{}))
	f.Add(buildSD(f, tAlice, tDomainUsers, []tACE{deny(tAlice, fileWriteData, oiio), allow(sidCreatorOwner, genericAll, oici), allow(sidOwnerRights, readControl, 0)}))
	f.Add(buildSD(f, tAdmins, "", []tACE{{typ: aceDeniedObject, flags: oici, mask: 2, sid: tAlice, raw: append([]byte{3, 0, 0, 0}, make([]byte, 32)...)},
		{typ: aceAllowedCallback, mask: fullControl, sid: sidEveryone}, {typ: 0x11, mask: 1, sid: "S-1-16-8192"}}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		acc, err := Evaluate(raw, []string{tAlice, tDomainUsers})
		if err != nil {
			return
		}
		for _, r := range []string{RightAddFile, RightWriteData, RightDelete, RightDeleteChild} {
			if acc.Decisive[r] == "" {
				t.Fatalf("no decisive text for %s", r)
			}
		}
		grants := func(r string) bool {
			d := acc.Decisive[r]
			return strings.HasPrefix(d, "ALLOW") || strings.HasPrefix(d, "NULL") || strings.HasPrefix(d, "default") || strings.HasPrefix(d, "OWNER")
		}
		if grants(RightAddFile) != acc.AddFile || grants(RightDelete) != acc.Delete || grants(RightWriteData) != acc.WriteData || grants(RightDeleteChild) != acc.DeleteChild {
			t.Fatalf("decision and decisive text disagree: %+v", acc)
		}
	})
}
