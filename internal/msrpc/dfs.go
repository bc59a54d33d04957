package msrpc

import (
	"errors"
	"fmt"
)

// DFS is the MS-DFSNM interface (\pipe\netdfs): a DFS namespace's links
// and the folders (targets) they refer clients to.
var DFS = Interface{mustUUID("4fc742e0-4a10-11cf-8273-00aa004ae673"), 3, 0}

const (
	opDfsGetInfo = 4
	// dfsInfoLevel is DFS_INFO_3: the entry's path, comment, state and
	// every target (server, share, state) — the highest level Samba
	// answers (4 and up: ERROR_INVALID_PARAMETER) and one every Windows
	// DFS server has.
	dfsInfoLevel = 3
	// maxTargets bounds the targets a response may list.
	maxTargets = 1024
)

// A DFS target's state (DFS_STORAGE_STATE_*).
const (
	TargetOffline = 0x1
	TargetOnline  = 0x2
	TargetActive  = 0x4
)

// DFSTarget is one folder a DFS link refers clients to.
type DFSTarget struct {
	Server string
	// Share is the share name, followed by a folder path below it when
	// the target is a folder inside a share ("scans\2026").
	Share string
	// State is a mask of TargetOffline, TargetOnline, TargetActive.
	State uint32
}

// Offline reports whether the namespace marks the target offline: clients
// are not referred to it.
func (t DFSTarget) Offline() bool { return t.State&TargetOffline != 0 && t.State&TargetOnline == 0 }

// DFSInfo is what NetrDfsGetInfo tells about a DFS link (or root).
type DFSInfo struct {
	EntryPath string
	Comment   string
	State     uint32
	// Targets in the order the server lists them.
	Targets []DFSTarget
}

// DFSGetInfoRequest is NetrDfsGetInfo's stub at level 3 for entryPath
// (\\server\namespace\link); ServerName and ShareName are NULL, as the
// protocol says they are ignored at this level.
func DFSGetInfoRequest(entryPath string) []byte {
	var e enc
	e.stringz(entryPath)
	e.u32(0) // ServerName: NULL
	e.u32(0) // ShareName: NULL
	e.u32(dfsInfoLevel)
	return e.b
}

// ParseDFSGetInfo reads NetrDfsGetInfo's level-3 response.
func ParseDFSGetInfo(stub []byte) (DFSInfo, error) {
	d, err := werrBody("dfs info", stub)
	if err != nil {
		return DFSInfo{}, err
	}
	if level := d.u32(); d.err == nil && level != dfsInfoLevel {
		return DFSInfo{}, fmt.Errorf("dfs info: level %d, want %d", level, dfsInfoLevel)
	}
	if ptr := d.u32(); d.err == nil && ptr == 0 {
		return DFSInfo{}, errors.New("dfs info: no information")
	}
	pathPtr, commentPtr := d.u32(), d.u32()
	var info DFSInfo
	info.State = d.u32()
	n := d.u32()
	targetsPtr := d.u32()
	if d.err != nil {
		return DFSInfo{}, fmt.Errorf("dfs info: %w", d.err)
	}
	if n > maxTargets {
		return DFSInfo{}, fmt.Errorf("dfs info: %d targets", n)
	}
	if pathPtr != 0 {
		info.EntryPath = d.str()
	}
	if commentPtr != 0 {
		info.Comment = d.str()
	}
	if targetsPtr != 0 {
		if max := d.u32(); d.err == nil && max != n {
			return DFSInfo{}, fmt.Errorf("dfs info: %d targets said, an array of %d sent", n, max)
		}
		type ptrs struct{ server, share uint32 }
		ps := make([]ptrs, 0, n)
		for i := uint32(0); i < n && d.err == nil; i++ {
			info.Targets = append(info.Targets, DFSTarget{State: d.u32()})
			ps = append(ps, ptrs{d.u32(), d.u32()})
		}
		for i, p := range ps {
			if p.server != 0 {
				info.Targets[i].Server = d.str()
			}
			if p.share != 0 {
				info.Targets[i].Share = d.str()
			}
		}
	} else if n != 0 {
		return DFSInfo{}, fmt.Errorf("dfs info: %d targets said, none sent", n)
	}
	if d.err != nil {
		return DFSInfo{}, fmt.Errorf("dfs info: %w", d.err)
	}
	if d.off > len(d.b) {
		return DFSInfo{}, fmt.Errorf("dfs info: %w", errShort)
	}
	if d.off != len(d.b) {
		return DFSInfo{}, fmt.Errorf("dfs info: %d bytes left over", len(d.b)-d.off)
	}
	return info, nil
}

// DFSGetInfo asks a bound netdfs connection about the DFS link (or root)
// entryPath.
func DFSGetInfo(c *Conn, entryPath string) (DFSInfo, error) {
	stub, err := c.Call(opDfsGetInfo, DFSGetInfoRequest(entryPath))
	if err != nil {
		return DFSInfo{}, err
	}
	return ParseDFSGetInfo(stub)
}
