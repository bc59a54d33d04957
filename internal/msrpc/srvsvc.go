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
	}
	return fmt.Sprintf("%s: error %d", e.Op, e.Code)
}

// ParseShareGetInfo reads NetrShareGetInfo's level-2 response.
func ParseShareGetInfo(stub []byte) (ShareUses, error) {
	st, err := status(stub)
	if err != nil {
		return ShareUses{}, fmt.Errorf("share info: %w", err)
	}
	if st != 0 {
		return ShareUses{}, &WinError{"share info", st}
	}
	d := dec{b: stub[:len(stub)-4]}
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
