package msrpc

import (
	"errors"
	"fmt"
)

// ServerService is the MS-SRVS interface (\pipe\srvsvc).
var ServerService = Interface{mustUUID("4b324fc8-1670-01d3-1278-5a47bf6ee188"), 3, 0}

const opNetShareGetInfo = 16

// Unlimited is a share's max uses when it has no limit.
const Unlimited = 0xFFFFFFFF

// ShareGetInfoRequest is NetrShareGetInfo's stub at level 2 (current and
// maximum uses) for share on server.
func ShareGetInfoRequest(server, share string) []byte {
	var e enc
	e.u32(0x00020000) // ServerName: a unique pointer
	e.stringz(server)
	e.stringz(share)
	e.u32(2)
	return e.b
}

// ShareUses is a share's connection count and its limit (Unlimited: none).
type ShareUses struct {
	Current uint32
	Max     uint32
}

// WinError is a WERROR other than success.
type WinError struct {
	Op   string
	Code uint32
}

func (e *WinError) Error() string {
	switch e.Code {
	case 5:
		return e.Op + ": access denied"
	case 123, 2310: // ERROR_INVALID_NAME (Samba), NERR_NetNameNotFound
		return e.Op + ": no such share"
	case 2662: // NERR_DfsNoSuchVolume
		return e.Op + ": no DFS root or link with this path"
	case 2673: // NERR_DfsNoSuchServer
		return e.Op + ": the server is not a server of this DFS root or link"
	}
	return fmt.Sprintf("%s: error %d", e.Op, e.Code)
}

// ParseShareGetInfo reads NetrShareGetInfo's level-2 response.
func ParseShareGetInfo(stub []byte) (ShareUses, error) {
	d, err := werrBody("share info", stub)
	if err != nil {
		return ShareUses{}, err
	}
	if level := d.u32(); d.err == nil && level != 2 {
		return ShareUses{}, fmt.Errorf("share info: level %d, want 2", level)
	}
	if ptr := d.u32(); d.err == nil && ptr == 0 {
		return ShareUses{}, errors.New("share info: no information")
	}
	var f [8]uint32 // netname, type, remark, permissions, max uses, current uses, path, password
	for i := range f {
		f[i] = d.u32()
	}
	if d.err != nil {
		return ShareUses{}, fmt.Errorf("share info: %w", d.err)
	}
	return ShareUses{Current: f[5], Max: f[4]}, nil
}

// ShareGetInfo asks a bound srvsvc connection for share's uses on server.
func ShareGetInfo(c *Conn, server, share string) (ShareUses, error) {
	stub, err := c.Call(opNetShareGetInfo, ShareGetInfoRequest(server, share))
	if err != nil {
		return ShareUses{}, err
	}
	return ParseShareGetInfo(stub)
}

const opNetSessionEnum = 12

// SessionEnumRequest is NetrSessionEnum's stub at level 0 for server: every
// client, every user, all at once, no resume handle.
func SessionEnumRequest(server string) []byte {
	var e enc
	e.u32(0x00020000) // ServerName
	e.stringz(server)
	e.u32(0)          // ClientName: NULL
	e.u32(0)          // UserName: NULL
	e.u32(0)          // InfoStruct.Level
	e.u32(0)          // the union's switch
	e.u32(0x00020004) // Level0: a container
	e.u32(0)          // EntriesRead
	e.u32(0)          // Buffer: NULL
	e.u32(0xFFFFFFFF) // PreferedMaximumLength
	e.u32(0)          // ResumeHandle: NULL
	return e.b
}

// ParseSessionEnum reads NetrSessionEnum's level-0 response: the number of
// sessions the server holds (TotalEntries), cross-checked with the entries
// it listed.
func ParseSessionEnum(stub []byte) (int, error) {
	// ERROR_MORE_DATA still counts them all.
	d, err := werrBody("session enum", stub, 234)
	if err != nil {
		return 0, err
	}
	if level, sw := d.u32(), d.u32(); d.err == nil && (level != 0 || sw != 0) {
		return 0, fmt.Errorf("session enum: level %d, want 0", level)
	}
	listed := 0
	if ptr := d.u32(); ptr != 0 {
		read := d.u32()
		if buf := d.u32(); buf != 0 {
			n := d.u32()
			if d.err == nil && (n != read || n > 1<<16) {
				return 0, fmt.Errorf("session enum: %d entries said, %d sent", read, n)
			}
			names := make([]uint32, 0, n)
			for i := uint32(0); i < n && d.err == nil; i++ {
				names = append(names, d.u32())
			}
			for _, p := range names {
				if p == 0 {
					continue
				}
				max, _, actual := d.u32(), d.u32(), d.u32()
				if actual > max {
					return 0, fmt.Errorf("session enum: a name of %d characters in %d", actual, max)
				}
				d.take(2 * int(actual))
				d.align(4)
			}
			listed = int(n)
		}
	}
	total := d.u32()
	resume := d.u32()
	if resume != 0 {
		d.u32()
	}
	if d.err != nil {
		return 0, fmt.Errorf("session enum: %w", d.err)
	}
	if d.off != len(d.b) {
		return 0, fmt.Errorf("session enum: %d bytes left over", len(d.b)-d.off)
	}
	if int(total) < listed {
		return 0, fmt.Errorf("session enum: %d in total, %d listed", total, listed)
	}
	return int(total), nil
}

// SessionEnum asks a bound srvsvc connection how many sessions server
// holds.
func SessionEnum(c *Conn, server string) (int, error) {
	stub, err := c.Call(opNetSessionEnum, SessionEnumRequest(server))
	if err != nil {
		return 0, err
	}
	return ParseSessionEnum(stub)
}
