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

func TestSendVerify(t *testing.T) {
	src := bytes.Repeat([]byte("abcdefghij"), 350001)
	want := sha256.Sum256(src)
	p := filepath.Join(t.TempDir(), "dst")
	f, _ := os.Create(p)
	defer f.Close()
	h := sha256.New()
	sent, back, err := sendVerify(f, bytes.NewReader(src), h, testRing(4096), nil, 0)
	got, _ := os.ReadFile(p)
	if err != nil || sent != int64(len(src)) || back != sent || !bytes.Equal(got, src) || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatalf("sent=%d back=%d err=%v", sent, back, err)
	}
	// an empty file
	h.Reset()
	e, _ := os.Create(p + ".empty")
	defer e.Close()
	if sent, back, err := sendVerify(e, bytes.NewReader(nil), h, testRing(4096), nil, 0); sent != 0 || back != 0 || err != nil {
		t.Fatalf("empty: sent=%d back=%d err=%v", sent, back, err)
	}
	// WriteAt fails on a read-only file
	ro, _ := os.Open(p)
	defer ro.Close()
	if _, _, err := sendVerify(ro, bytes.NewReader(src), sha256.New(), testRing(4096), nil, 0); err == nil {
		t.Fatal("no error from a failing WriterAt")
	}
}

// What the destination stores is what is hashed: a destination that keeps
// other bytes, keeps fewer, or holds more than was written shows in the
// hash or the count, never as the source's hash.
func TestSendVerifyReadsBack(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789abcdef"), 100003)
	want := sha256.Sum256(src)
	for _, tc := range []struct {
		name    string
		dst     *memFile
		back    int64
		err     bool
		matches bool
	}{
		{"faithful", &memFile{}, int64(len(src)), false, true},
		{"flips a byte", &memFile{flipAt: 70000}, int64(len(src)), false, false},
		{"drops the tail", &memFile{keep: 50000}, 0, true, false},
		{"holds more", &memFile{extra: 3}, int64(len(src)) + 1, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := sha256.New()
			sent, back, err := sendVerify(tc.dst, bytes.NewReader(src), h, testRing(4096), nil, 0)
			if (err != nil) != tc.err || sent != int64(len(src)) && !tc.err {
				t.Fatalf("sent=%d back=%d err=%v", sent, back, err)
			}
			if tc.err {
				var rb *readBackError
				if !errors.As(err, &rb) {
					t.Fatalf("err %v is not a read-back error", err)
				}
				return
			}
			if back != tc.back || bytes.Equal(h.Sum(nil), want[:]) != tc.matches {
				t.Fatalf("back=%d (want %d), hash matches %v", back, tc.back, !tc.matches)
			}
		})
	}
}

// memFile is a destination file in memory that can misbehave: flip one
// byte at flipAt, keep only the first keep bytes, or grow extra bytes
// past the end (a fake: no real server here stores other bytes on demand).
type memFile struct {
	mu     sync.Mutex
	b      []byte
	flipAt int64
	keep   int64
	extra  int
}

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	end := off + int64(len(p))
	if m.keep > 0 {
		end = min(end, m.keep)
	}
	if end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b))+int64(m.extra))...)
	}
	if off < end {
		copy(m.b[off:end], p)
	}
	if m.flipAt > 0 && off <= m.flipAt && m.flipAt < end {
		m.b[m.flipAt] ^= 0x20
	}
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

// The flushes come while the copy runs, one at a time, and a failing one
// stops it.
func TestSendVerifyFlushes(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789abcdef"), 100003) // 1.6 MB: 390 regions of 4 KiB
	var mu sync.Mutex
	var calls, running, most int
	flush := func() error {
		mu.Lock()
		calls++
		running++
		most = max(most, running)
		mu.Unlock()
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	}
	_, back, err := sendVerify(&memFile{}, bytes.NewReader(src), sha256.New(), testRing(4096), flush, 64<<10)
	if err != nil || back != int64(len(src)) {
		t.Fatalf("back=%d err=%v", back, err)
	}
	if calls < 2 || calls > len(src)/(64<<10) || most != 1 {
		t.Fatalf("%d flushes (%d at once) for %d bytes every 64 KiB", calls, most, len(src))
	}
	_, _, err = sendVerify(&memFile{}, bytes.NewReader(src), sha256.New(), testRing(4096), func() error { return os.ErrPermission }, 64<<10)
	if !errors.Is(err, os.ErrPermission) {
		t.Fatalf("a failing flush: %v", err)
	}
}
