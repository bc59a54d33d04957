// Package safefile reads a file a less trusted user may have put in place
// (the daemon's, read by root's commands): without waiting (a FIFO would
// block the open for ever), without following a symbolic link at the file
// itself, a regular file only, and no more than a bound.
package safefile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Read reads the regular file at path, at most max bytes (more is an
// error).
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: more than %d bytes", path, max)
	}
	return b, nil
}
