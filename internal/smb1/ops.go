package smb1

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// Access masks, dispositions and options of NT_CREATE_ANDX.
const (
	accessReadAttributes = 0x00000080
	accessDelete         = 0x00010000
	genericWrite         = 0x40000000
	genericRead          = 0x80000000
	dispositionOpen      = 1
	dispositionCreate    = 2
	optionNonDirectory   = 0x00000040
	optionDeleteOnClose  = 0x00001000
)

// handle is an open file or folder.
type handle struct {
	fid   uint16
	dir   bool
	size  int64
	mtime time.Time
}

func (c *Conn) ntCreate(ctx context.Context, path string, access, disposition, options uint32) (handle, error) {
	name := ntlm.EncodeUTF16(path)
	w := []byte{0xff, 0, 0, 0, 0}
	w = binary.LittleEndian.AppendUint16(w, uint16(len(name)))
	w = binary.LittleEndian.AppendUint32(w, 0) // flags: no oplock
	w = binary.LittleEndian.AppendUint32(w, 0) // root FID
	w = binary.LittleEndian.AppendUint32(w, access)
	w = binary.LittleEndian.AppendUint64(w, 0)    // allocation size
	w = binary.LittleEndian.AppendUint32(w, 0x80) // FILE_ATTRIBUTE_NORMAL
	w = binary.LittleEndian.AppendUint32(w, 7)    // share read, write, delete
	w = binary.LittleEndian.AppendUint32(w, disposition)
	w = binary.LittleEndian.AppendUint32(w, options)
	w = binary.LittleEndian.AppendUint32(w, 2) // impersonation
	w = append(w, 0)                           // security flags
	_, rw, _, err := c.call(ctx, cmdNTCreate, w, append(name, 0, 0), true)
	if err != nil {
		return handle{}, err
	}
	if len(rw) < 68 {
		return handle{}, fmt.Errorf("SMB1 create response: %d parameter bytes", len(rw))
	}
	o := handle{fid: binary.LittleEndian.Uint16(rw[5:]), dir: rw[67] != 0,
		size: int64(binary.LittleEndian.Uint64(rw[55:]))}
	if ft := binary.LittleEndian.Uint64(rw[27:]); ft > 116444736000000000 {
		o.mtime = time.Unix(0, int64(ft-116444736000000000)*100)
	}
	return o, nil
}

func (c *Conn) close(ctx context.Context, fid uint16) error {
	w := binary.LittleEndian.AppendUint16(nil, fid)
	w = binary.LittleEndian.AppendUint32(w, 0xffffffff)
	_, _, _, err := c.call(ctx, cmdClose, w, nil, false)
	return err
}

// ioChunk is the largest read or write the replay sends in one request.
func (c *Conn) ioChunk() int {
	n := c.maxBuf - 128
	if n > 60<<10 {
		n = 60 << 10
	}
	if n < 512 {
		n = 512
	}
	return n
}

func (c *Conn) write(ctx context.Context, fid uint16, off int64, p []byte) (int, error) {
	done := 0
	for done < len(p) {
		chunk := p[done:min(len(p), done+c.ioChunk())]
		w := []byte{0xff, 0, 0, 0}
		w = binary.LittleEndian.AppendUint16(w, fid)
		w = binary.LittleEndian.AppendUint32(w, uint32(off+int64(done)))
		w = binary.LittleEndian.AppendUint32(w, 0) // timeout
		w = binary.LittleEndian.AppendUint16(w, 0) // write mode
		w = binary.LittleEndian.AppendUint16(w, 0) // remaining
		w = binary.LittleEndian.AppendUint16(w, uint16(len(chunk)>>16))
		w = binary.LittleEndian.AppendUint16(w, uint16(len(chunk)))
		w = binary.LittleEndian.AppendUint16(w, 64) // data offset: 32+1+28+2+1 pad
		w = binary.LittleEndian.AppendUint32(w, uint32((off+int64(done))>>32))
		_, rw, _, err := c.call(ctx, cmdWriteAndX, w, append([]byte{0}, chunk...), false)
		if err != nil {
			return done, err
		}
		if len(rw) < 10 {
			return done, fmt.Errorf("SMB1 write response: %d parameter bytes", len(rw))
		}
		n := int(binary.LittleEndian.Uint16(rw[4:])) | int(binary.LittleEndian.Uint16(rw[8:]))<<16
		if n <= 0 || n > len(chunk) {
			return done, fmt.Errorf("SMB1 write: server took %d of %d bytes", n, len(chunk))
		}
		done += n
	}
	return done, nil
}

func (c *Conn) read(ctx context.Context, fid uint16, off int64, p []byte) (int, error) {
	done := 0
	for done < len(p) {
		want := min(len(p)-done, c.ioChunk())
		w := []byte{0xff, 0, 0, 0}
		w = binary.LittleEndian.AppendUint16(w, fid)
		w = binary.LittleEndian.AppendUint32(w, uint32(off+int64(done)))
		w = binary.LittleEndian.AppendUint16(w, uint16(want))
		w = binary.LittleEndian.AppendUint16(w, 0)
		w = binary.LittleEndian.AppendUint32(w, 0)
		w = binary.LittleEndian.AppendUint16(w, 0)
		w = binary.LittleEndian.AppendUint32(w, uint32((off+int64(done))>>32))
		resp, rw, _, err := c.call(ctx, cmdReadAndX, w, nil, false)
		if err != nil {
			return done, err
		}
		data, err := readAndXData(resp, rw)
		if err != nil {
			return done, err
		}
		if len(data) > want {
			return done, fmt.Errorf("SMB1 read: server sent %d bytes for %d", len(data), want)
		}
		copy(p[done:], data)
		done += len(data)
		if len(data) == 0 {
			return done, io.EOF
		}
	}
	return done, nil
}

// readAndXData finds the data of a READ_ANDX answer in the whole message.
func readAndXData(resp, words []byte) ([]byte, error) {
	if len(words) < 14 {
		return nil, fmt.Errorf("SMB1 read response: %d parameter bytes", len(words))
	}
	n := int(binary.LittleEndian.Uint16(words[10:]))
	if len(words) >= 16 {
		n |= int(binary.LittleEndian.Uint16(words[14:])) << 16
	}
	off := int(binary.LittleEndian.Uint16(words[12:]))
	if n == 0 {
		return nil, nil
	}
	if off < 32 || off > len(resp) || n > len(resp)-off {
		return nil, fmt.Errorf("SMB1 read response: data %d+%d outside the %d-byte message", off, n, len(resp))
	}
	return resp[off : off+n], nil
}

func (c *Conn) delete(ctx context.Context, path string) error {
	w := binary.LittleEndian.AppendUint16(nil, 0x0006) // hidden and system files too
	// 32 + 1 + 2 + 2 + 1 buffer format = 38: the name is aligned.
	d := append([]byte{0x04}, smbwire.UTF16Z(path)...)
	_, _, _, err := c.call(ctx, cmdDelete, w, d, false)
	return err
}

// freeBytes asks TRANS2_QUERY_FS_INFORMATION (SMB_QUERY_FS_SIZE_INFO).
// setDeletePending marks the open file fid for deletion when its last
// handle closes (TRANS2_SET_FILE_INFORMATION, SMB_SET_FILE_DISPOSITION_INFO).
func (c *Conn) setDeletePending(ctx context.Context, fid uint16) error {
	params := binary.LittleEndian.AppendUint16(nil, fid)
	params = binary.LittleEndian.AppendUint16(params, 0x0102)
	params = binary.LittleEndian.AppendUint16(params, 0)
	_, _, err := c.trans2(ctx, 0x0008, params, []byte{1}, 0)
	return err
}

func (c *Conn) freeBytes(ctx context.Context) (free, total uint64, err error) {
	_, d, err := c.trans2(ctx, 0x0003, binary.LittleEndian.AppendUint16(nil, 0x0103), nil, 64) // TRANS2_QUERY_FS_INFORMATION
	if err != nil {
		return 0, 0, err
	}
	if len(d) < 24 {
		return 0, 0, fmt.Errorf("SMB1 file system size: %d bytes", len(d))
	}
	all := binary.LittleEndian.Uint64(d[0:])
	avail := binary.LittleEndian.Uint64(d[8:])
	spu := uint64(binary.LittleEndian.Uint32(d[16:]))
	bps := uint64(binary.LittleEndian.Uint32(d[20:]))
	return avail * spu * bps, all * spu * bps, nil
}
