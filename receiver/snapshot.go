package receiver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// snapshot is what a file looked like when last seen.
type snapshot struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func statSnap(path string) (snapshot, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return snapshot{}, err
	}
	if !fi.Mode().IsRegular() {
		return snapshot{}, fmt.Errorf("%s: not a regular file", path)
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return snapshot{size: fi.Size(), mtime: fi.ModTime(), ino: ino}, nil
}

// hashBuf is the fixed buffer a scan is hashed through: memory does not
// grow with file size.
const hashBuf = 128 << 10

// hashFile streams r through SHA-256.
func hashFile(r io.Reader, buf []byte) (string, int64, error) {
	h := sha256.New()
	n, err := io.CopyBuffer(h, struct{ io.Reader }{r}, buf)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func fstatSnap(f *os.File) (snapshot, error) {
	fi, err := f.Stat()
	if err != nil {
		return snapshot{}, err
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return snapshot{size: fi.Size(), mtime: fi.ModTime(), ino: ino}, nil
}
