package receiver

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

func testRing(size int) [][]byte {
	bufs := make([][]byte, ringSize)
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	return bufs
}

func TestPipe(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789"), 350000)
	var dst bytes.Buffer
	bufs := [][]byte{make([]byte, 1000), make([]byte, 1000)}
	n, err := pipe(&dst, bytes.NewReader(src), bufs)
	if err != nil || n != int64(len(src)) || !bytes.Equal(dst.Bytes(), src) {
		t.Fatalf("n=%d err=%v", n, err)
	}
	// a failing writer stops the copy
	n, err = pipe(failWriter{}, bytes.NewReader(src), bufs)
	if err == nil || n != 0 {
		t.Fatalf("n=%d err=%v", n, err)
	}
}

func TestWriteAll(t *testing.T) {
	src := bytes.Repeat([]byte("abcdefghij"), 350001)
	p := filepath.Join(t.TempDir(), "dst")
	f, _ := os.Create(p)
	defer f.Close()
	n, err := writeAll(f, bytes.NewReader(src), testRing(4096), nil, 0)
	got, _ := os.ReadFile(p)
	if err != nil || n != int64(len(src)) || !bytes.Equal(got, src) {
		t.Fatalf("n=%d err=%v", n, err)
	}
	// an empty file
	if n, err := writeAll(f, bytes.NewReader(nil), testRing(4096), nil, 0); n != 0 || err != nil {
		t.Fatalf("empty: n=%d err=%v", n, err)
	}
	// WriteAt fails on a read-only file
	ro, _ := os.Open(p)
	defer ro.Close()
	if _, err := writeAll(ro, bytes.NewReader(src), testRing(4096), nil, 0); err == nil {
		t.Fatal("no error from a failing WriterAt")
	}
	// a failing source
	if _, err := writeAll(&memFile{}, io.MultiReader(bytes.NewReader(src[:10000]), iotest.ErrReader(os.ErrClosed)), testRing(4096), nil, 0); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("failing source: %v", err)
	}
}

// The flushes come while the copy runs, one at a time, and a failing one
// stops it.
func TestWriteAllFlushes(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789abcdef"), 100003) // 1.6 MB: 390 regions of 4 KiB
	var mu sync.Mutex
	var calls, running, most int
	flush := func() error {
		mu.Lock()
		calls++
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	}
	dst := &memFile{}
	n, err := writeAll(dst, bytes.NewReader(src), testRing(4096), flush, 64<<10)
	if err != nil || n != int64(len(src)) || !bytes.Equal(dst.b, src) {
		t.Fatalf("n=%d err=%v", n, err)
	}
	if calls < 2 || calls > len(src)/(64<<10) || most != 1 {
		t.Fatalf("%d flushes (%d at once) for %d bytes every 64 KiB", calls, most, len(src))
	}
	_, err = writeAll(&memFile{}, bytes.NewReader(src), testRing(4096), func() error { return os.ErrPermission }, 64<<10)
	if !errors.Is(err, os.ErrPermission) {
		t.Fatalf("a failing flush: %v", err)
	}
}

// memFile is a destination file in memory.
type memFile struct {
	mu sync.Mutex
	b  []byte
}

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	copy(m.b[off:], p)
	return len(p), nil
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func TestHashAt(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789abcdef"), 100003)
	bufs := testRing(4096)
	want := sha256.Sum256(src)
	for _, tc := range []struct {
		name string
		size int64
		n    int64
		ok   bool
	}{{"exact", int64(len(src)), int64(len(src)), true}, {"longer", int64(len(src)) - 10, int64(len(src)) - 9, false},
		{"shorter", int64(len(src)) + 10, int64(len(src)), true}} {
		h := sha256.New()
		n, err := hashAt(h, bytes.NewReader(src), tc.size, bufs)
		if err != nil || n != tc.n || (bytes.Equal(h.Sum(nil), want[:]) != tc.ok) {
			t.Errorf("%s: n=%d err=%v", tc.name, n, err)
		}
	}
}
