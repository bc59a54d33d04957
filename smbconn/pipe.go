package smbconn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
)

// ErrNoPipeOverSMB1: a session set up over SMB1 opens no named pipe
// (internal/smb1 has no transact calls).
var ErrNoPipeOverSMB1 = errors.New("named pipes are not opened over SMB1")

// Pipe is a named pipe on the server's IPC$ share, opened in the session:
// DCE/RPC (internal/msrpc) runs over it as the session's user.
type Pipe struct {
	ipc *smb2.Share
	f   *smb2.File
}

// OpenPipe connects IPC$ on host (named as in the share's tree connect)
// and opens \pipe\name; both stay open until Close. Reads and writes run
// under ctx.
func (c *Conn) OpenPipe(ctx context.Context, host, name string) (*Pipe, error) {
	if c.v1 != nil {
		return nil, ErrNoPipeOverSMB1
	}
	ipc, err := c.s.WithContext(ctx).Mount(fmt.Sprintf(`\\%s\IPC$`, host))
	if err != nil {
		return nil, fmt.Errorf("tree connect IPC$: %w", err)
	}
	ipc = ipc.WithContext(ctx)
	f, err := ipc.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		umount(ipc)
		return nil, fmt.Errorf(`open \pipe\%s: %w`, name, err)
	}
	return &Pipe{ipc: ipc, f: f}, nil
}

func (p *Pipe) Read(b []byte) (int, error)  { return p.f.Read(b) }
func (p *Pipe) Write(b []byte) (int, error) { return p.f.Write(b) }

// Close closes the pipe and disconnects IPC$ (bounded).
func (p *Pipe) Close() error {
	err := p.f.Close()
	umount(p.ipc)
	return err
}

func umount(s *smb2.Share) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s.WithContext(ctx).Umount()
}
