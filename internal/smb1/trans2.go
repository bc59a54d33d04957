package smb1

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// trans2 sends a TRANS2 request of sub-command sub with params and data
// and returns the answer's parameters and data (one answer message).
func (c *Conn) trans2(ctx context.Context, sub uint16, params, data []byte, maxData int) (rparams, rdata []byte, err error) {
	// 32 + 1 + 30 words + 2 count = 65, +3 (pad, empty Unicode name) = 68.
	const paramOff = 68
	dataOff := paramOff + len(params)
	pad := 0
	if len(data) > 0 {
		pad = (4 - dataOff%4) % 4 // data on a 4-byte boundary, as Windows clients send it
		dataOff += pad
	}
	w := binary.LittleEndian.AppendUint16(nil, uint16(len(params))) // total parameter count
	w = binary.LittleEndian.AppendUint16(w, uint16(len(data)))      // total data count
	w = binary.LittleEndian.AppendUint16(w, 16)                     // max parameter count
	w = binary.LittleEndian.AppendUint16(w, uint16(maxData))        // max data count
	w = append(w, 0, 0)                                             // max setup count, reserved
	w = binary.LittleEndian.AppendUint16(w, 0)                      // flags
	w = binary.LittleEndian.AppendUint32(w, 0)                      // timeout
	w = binary.LittleEndian.AppendUint16(w, 0)                      // reserved
	w = binary.LittleEndian.AppendUint16(w, uint16(len(params)))    // parameter count
	w = binary.LittleEndian.AppendUint16(w, paramOff)
	w = binary.LittleEndian.AppendUint16(w, uint16(len(data))) // data count
	w = binary.LittleEndian.AppendUint16(w, uint16(dataOff))
	w = append(w, 1, 0) // setup count, reserved
	w = binary.LittleEndian.AppendUint16(w, sub)
	d := append(append(append([]byte{0, 0, 0}, params...), make([]byte, pad)...), data...)
	resp, rw, _, err := c.call(ctx, cmdTrans2, w, d, false)
	if err != nil {
		return nil, nil, err
	}
	if len(rw) < 20 {
		return nil, nil, fmt.Errorf("SMB1 trans2 response: %d parameter bytes", len(rw))
	}
	field := func(count, offset int, what string) ([]byte, error) {
		n := int(binary.LittleEndian.Uint16(rw[count:]))
		off := int(binary.LittleEndian.Uint16(rw[offset:]))
		if n == 0 {
			return nil, nil
		}
		if off < 32 || off > len(resp) || n > len(resp)-off {
			return nil, fmt.Errorf("SMB1 trans2 response: %s %d+%d outside the %d-byte message", what, off, n, len(resp))
		}
		return resp[off : off+n], nil
	}
	if total := binary.LittleEndian.Uint16(rw[2:]); int(total) != int(binary.LittleEndian.Uint16(rw[12:])) {
		return nil, nil, fmt.Errorf("SMB1 trans2 response: %d of %d data bytes (answers in parts are not read)", binary.LittleEndian.Uint16(rw[12:]), total)
	}
	if rparams, err = field(6, 8, "parameters"); err != nil {
		return nil, nil, err
	}
	if rdata, err = field(12, 14, "data"); err != nil {
		return nil, nil, err
	}
	return rparams, rdata, nil
}

// listDir lists folder p (TRANS2_FIND_FIRST2 / FIND_NEXT2 with
// SMB_FIND_FILE_DIRECTORY_INFO), without "." and "..".
func (c *Conn) listDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	pattern := `*`
	if p != "" {
		pattern = p + `\*`
	}
	maxData := min(max(c.maxBuf-256, 1024), 60<<10)
	params := binary.LittleEndian.AppendUint16(nil, 0x0016) // hidden, system, directories
	params = binary.LittleEndian.AppendUint16(params, 512)  // search count
	params = binary.LittleEndian.AppendUint16(params, 0x0002)
	params = binary.LittleEndian.AppendUint16(params, 0x0101) // SMB_FIND_FILE_DIRECTORY_INFO
	params = binary.LittleEndian.AppendUint32(params, 0)
	params = append(params, smbwire.UTF16Z(pattern)...)
	rp, rd, err := c.trans2(ctx, 0x0001, params, nil, maxData)
	if err != nil {
		return nil, err
	}
	if len(rp) < 10 {
		return nil, fmt.Errorf("SMB1 find: %d parameter bytes", len(rp))
	}
	sid := binary.LittleEndian.Uint16(rp)
	end := binary.LittleEndian.Uint16(rp[4:]) != 0
	var out []fs.FileInfo
	last, err := appendDirEntries(&out, rd)
	if err != nil {
		return nil, err
	}
	for i := 0; !end; i++ {
		if i >= 1000 || len(out) > 100000 {
			return nil, errors.New("SMB1 find: the listing does not end")
		}
		params = binary.LittleEndian.AppendUint16(nil, sid)
		params = binary.LittleEndian.AppendUint16(params, 512)
		params = binary.LittleEndian.AppendUint16(params, 0x0101)
		params = binary.LittleEndian.AppendUint32(params, 0)
		params = binary.LittleEndian.AppendUint16(params, 0x000a) // continue from last, close at end
		params = append(params, smbwire.UTF16Z(last)...)
		rp, rd, err = c.trans2(ctx, 0x0002, params, nil, maxData)
		if err != nil {
			return nil, err
		}
		if len(rp) < 8 {
			return nil, fmt.Errorf("SMB1 find next: %d parameter bytes", len(rp))
		}
		end = binary.LittleEndian.Uint16(rp[2:]) != 0
		n := len(out)
		if last, err = appendDirEntries(&out, rd); err != nil {
			return nil, err
		}
		if len(out) == n && !end {
			return nil, errors.New("SMB1 find next: no entries and no end")
		}
	}
	return out, nil
}

// appendDirEntries decodes SMB_FIND_FILE_DIRECTORY_INFO entries and
// returns the last name.
func appendDirEntries(out *[]fs.FileInfo, d []byte) (string, error) {
	last := ""
	for len(d) > 0 {
		if len(d) < 64 {
			return last, fmt.Errorf("SMB1 find: entry of %d bytes", len(d))
		}
		next := int(binary.LittleEndian.Uint32(d))
		n := int(binary.LittleEndian.Uint32(d[60:]))
		if n > len(d)-64 || (next != 0 && (next < 64+n || next > len(d))) {
			return last, fmt.Errorf("SMB1 find: entry name %d bytes, next at %d, in %d bytes", n, next, len(d))
		}
		name := strings.TrimRight(ntlm.DecodeUTF16(d[64:64+n]), "\x00")
		last = name
		if name != "." && name != ".." {
			o := handle{dir: binary.LittleEndian.Uint32(d[56:])&0x10 != 0, size: int64(binary.LittleEndian.Uint64(d[40:]))}
			if ft := binary.LittleEndian.Uint64(d[24:]); ft > 116444736000000000 {
				o.mtime = time.Unix(0, int64(ft-116444736000000000)*100)
			}
			*out = append(*out, fileInfo{name: name, o: o})
		}
		if next == 0 {
			break
		}
		d = d[next:]
	}
	return last, nil
}
