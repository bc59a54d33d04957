package msrpc

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
)

// The responses in testdata/netdfs are NetrDfsGetInfo's level-3 stubs as
// the lab's smb2srv (Samba 4.17, rpcd_classic) sent them to scanuser, an
// ordinary user: its link dfs\scans (one target), dfs\two (two targets),
// the root dfs, a link that does not exist (\\SMB2SRV\dfs\nolink) and a
// share that is no DFS root (\\SMB2SRV\scans).
func netdfsStub(t testing.TB, name string) []byte {
	t.Helper()
	h, err := os.ReadFile(filepath.Join("testdata", "netdfs", name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func TestParseDFSGetInfo(t *testing.T) {
	for _, c := range []struct {
		name string
		want DFSInfo
	}{
		{"link", DFSInfo{EntryPath: `\\SMB2SRV\dfs\scans`, State: 1, Targets: []DFSTarget{{Server: "smb2srv.kyolab.test", Share: "scans", State: TargetOnline}}}},
		{"two-targets", DFSInfo{EntryPath: `\\SMB2SRV\dfs\two`, State: 1, Targets: []DFSTarget{
			{Server: "smb2srv.kyolab.test", Share: "nosuchshare", State: TargetOnline},
			{Server: "smb2srv.kyolab.test", Share: "scans", State: TargetOnline}}}},
		{"root", DFSInfo{EntryPath: `\\SMB2SRV\dfs`, State: 1, Targets: []DFSTarget{{Server: "SMB2SRV", Share: "dfs", State: TargetOnline}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := netdfsStub(t, c.name)
			got, err := ParseDFSGetInfo(stub)
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
			// Cut anywhere before the status, it is refused, never misread.
			for cut := 0; cut < len(stub)-4; cut++ {
				b := append(append([]byte(nil), stub[:cut]...), 0, 0, 0, 0)
				if info, err := ParseDFSGetInfo(b); err == nil {
					t.Fatalf("cut at %d accepted: %+v", cut, info)
				}
			}
		})
	}
	for name, want := range map[string]string{
		"no-such-volume": "dfs info: no DFS root or link with this path",
		"no-such-server": "dfs info: the server is not a server of this DFS root or link",
	} {
		var we *WinError
		if _, err := ParseDFSGetInfo(netdfsStub(t, name)); !errors.As(err, &we) || err.Error() != want {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

// A response that says more targets than its array holds, or an array of
// another size, is refused.
func TestParseDFSGetInfoCounts(t *testing.T) {
	stub := netdfsStub(t, "two-targets")
	le := binary.LittleEndian
	for _, c := range []struct {
		off  int
		v    uint32
		want string
	}{
		{20, 3, "3 targets said, an array of 2"},             // NumberOfStorages
		{20, 5000, "5000 targets"},                           // beyond any real link
		{0, 4, "level 4, want 3"},                            // the union's arm
		{4, 0, "no information"},                             // a NULL DFS_INFO_3
		{24, 0, "2 targets said, none sent"},                 // a NULL Storage array
		{32, 0x41, "a string of 18 characters at offset 65"}, // EntryPath's offset
	} {
		b := append([]byte(nil), stub...)
		le.PutUint32(b[c.off:], c.v)
		if _, err := ParseDFSGetInfo(b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("byte %d = %d: %v, want %q", c.off, c.v, err, c.want)
		}
	}
}

func TestDFSGetInfoRequest(t *testing.T) {
	b := DFSGetInfoRequest(`\\SMB2SRV\dfs\scans`)
	u := utf16.Encode([]rune(`\\SMB2SRV\dfs\scans` + "\x00"))
	le := binary.LittleEndian
	// max, offset, actual, the characters padded to 4, two NULL pointers,
	// the level.
	chars := (2*len(u) + 3) &^ 3
	if len(b) != 12+chars+12 {
		t.Fatalf("%d bytes: % x", len(b), b)
	}
	if le.Uint32(b) != uint32(len(u)) || le.Uint32(b[8:]) != uint32(len(u)) || le.Uint16(b[12:]) != '\\' {
		t.Errorf("entry path: % x", b[:16])
	}
	if tail := b[len(b)-12:]; le.Uint32(tail) != 0 || le.Uint32(tail[4:]) != 0 || le.Uint32(tail[8:]) != 3 {
		t.Errorf("server, share, level: % x", tail)
	}
}

func TestDFSTargetOffline(t *testing.T) {
	for state, want := range map[uint32]bool{TargetOnline: false, TargetOffline: true, TargetOnline | TargetActive: false, 0: false} {
		if got := (DFSTarget{State: state}).Offline(); got != want {
			t.Errorf("state %#x: offline %v", state, got)
		}
	}
}

// The call through a pipe that hands out the real response 100 bytes at a
// time, split in two fragments.
func TestDFSGetInfoCall(t *testing.T) {
	stub := netdfsStub(t, "two-targets")
	half := len(stub) / 2
	p := &pipeFake{answers: [][]byte{append(response(2, 1, stub[:half]), response(2, 2, stub[half:])...)}, chunk: 100}
	info, err := DFSGetInfo(&Conn{rw: p, callID: 1}, `\\SMB2SRV\dfs\two`)
	if err != nil || len(info.Targets) != 2 || info.Targets[1].Share != "scans" {
		t.Fatalf("%+v, %v", info, err)
	}
}
