package receiver

// The forwarder's copy loops. Memory is a fixed ring of buffers whatever
// the file's size; the network side keeps several requests in flight where
// the destination allows it (SMB2/3), so the wire, the server and the local
// side (disk, SHA-256) overlap.
//
// Over SMB2/3 a scan is written whole (writeAll), then read back whole
// (hashAt). Measured against reading each region back right after its
// write, with the writes of later regions in flight: the interleaved
// copy cost the lab DC's smbd ~0.75 CPU-s more per GiB (3.5 vs 2.75) and
// took longer on these 2 cores, and its peak RSS was ~9 MiB higher.

import (
	"fmt"
	"io"
	"sync"
)

// copyBuf is the size of each of the forwarder's buffers: one SMB WRITE or
// READ of 1 MiB, the most the SMB library sends in one request (Windows
// takes no more, whatever it negotiates).
const copyBuf = 1 << 20

// inFlight is how many WRITE (or READ) requests the forwarder keeps in
// flight on a destination that takes concurrent requests (SMB2/3).
const inFlight = 4

// ringSize is the number of copy buffers: those in flight, one being
// filled from the held copy (or hashed) and one spare.
const ringSize = inFlight + 2

// flushEvery is how many bytes the forwarder lets the server gather before
// it asks it to write them to its disk.
const flushEvery = 64 << 20

// randomAccess is a remote file that takes concurrent writes and reads at
// offsets: an SMB2/3 file (or a local one).
type randomAccess interface {
	io.WriterAt
	io.ReaderAt
}

// concurrent returns f as a randomAccess when it takes concurrent requests:
// an SMB1 file answers WriteAt with errors.ErrUnsupported. WriteAt of no
// bytes sends nothing.
func concurrent(f RemoteFile) (randomAccess, bool) {
	ra, ok := f.(randomAccess)
	if !ok {
		return nil, false
	}
	if _, err := ra.WriteAt(nil, 0); err != nil {
		return nil, false
	}
	return ra, true
}

// pipe copies src to dst through a fixed ring of buffers, reading the next
// buffer while the last one is written, so a slow network side and the
// local side (disk, SHA-256) overlap. Memory: len(bufs) buffers.
func pipe(dst io.Writer, src io.Reader, bufs [][]byte) (int64, error) {
	type chunk struct {
		b []byte
		n int
	}
	full := make(chan chunk, len(bufs))
	free := make(chan []byte, len(bufs))
	for _, b := range bufs {
		free <- b
	}
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		defer close(full)
		for {
			var b []byte
			select {
			case b = <-free:
			case <-stop:
				readErr <- nil
				return
			}
			n, err := io.ReadFull(src, b)
			if n > 0 {
				full <- chunk{b, n}
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				readErr <- nil
				return
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	var total int64
	var werr error
	for c := range full {
		if werr == nil {
			var n int
			n, werr = dst.Write(c.b[:c.n])
			total += int64(n)
			if werr == nil && n != c.n {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				close(stop)
			}
		}
		if werr == nil {
			free <- c.b
		}
	}
	rerr := <-readErr
	if werr != nil {
		return total, werr
	}
	return total, rerr
}

// hashAt reads size bytes of r with up to inFlight reads in flight, hashes
// them in order into h, and returns how many bytes r holds (one more read
// past size tells whether it is longer).
func hashAt(h io.Writer, r io.ReaderAt, size int64, bufs [][]byte) (int64, error) {
	type result struct {
		b   []byte
		n   int
		err error
	}
	free := make(chan []byte, len(bufs))
	for _, b := range bufs {
		free <- b
	}
	order := make(chan chan result, inFlight)
	stop := make(chan struct{})
	go func() {
		defer close(order)
		for off := int64(0); off < size; {
			var b []byte
			select {
			case b = <-free:
			case <-stop:
				return
			}
			m := int(min(int64(len(b)), size-off))
			c := make(chan result, 1)
			order <- c
			go func(b []byte, off int64) {
				n, err := r.ReadAt(b[:m], off)
				if err == io.EOF && n == m {
					err = nil
				}
				c <- result{b, n, err}
			}(b, off)
			off += int64(m)
		}
	}()
	var total int64
	var err error
	for c := range order {
		res := <-c
		if err == nil {
			if res.err == nil || res.err == io.EOF {
				h.Write(res.b[:res.n])
				total += int64(res.n)
			}
			if res.err != nil {
				err = res.err
				close(stop)
			}
		}
		free <- res.b
	}
	if err != nil {
		if err == io.EOF {
			return total, nil // shorter than size: the caller compares
		}
		return total, err
	}
	var one [1]byte
	if n, _ := r.ReadAt(one[:], size); n > 0 {
		total += int64(n) // longer than size
	}
	return total, nil
}

// writeAll copies src to dst with up to inFlight concurrent WriteAt calls,
// reading src sequentially into the ring. flush, when not nil, is called
// from another goroutine each time another every bytes have been handed
// to the writers (one call at a time), so the server writes the file to
// its disk while the rest is on its way.
func writeAll(dst io.WriterAt, src io.Reader, bufs [][]byte, flush func() error, every int64) (int64, error) {
	w := startRing(dst, bufs)
	var off int64
	var rerr error
	next := every
	for !w.failed() {
		b := <-w.free
		n, err := io.ReadFull(src, b)
		if n > 0 {
			w.jobs <- region{b, n, off}
			off += int64(n)
		} else {
			w.free <- b
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			rerr = fmt.Errorf("read held copy: %w", err)
			break
		}
		w.endFlush(false)
		if flush != nil && every > 0 && w.flushed == nil && off >= next {
			next = off + every
			w.flushed = make(chan error, 1)
			go func(c chan error) { c <- flush() }(w.flushed)
		}
	}
	close(w.jobs)
	w.wg.Wait()
	w.endFlush(true)
	if w.werr != nil {
		return off, w.werr
	}
	return off, rerr
}

// region is one buffer of the ring, filled with n bytes of the file at off.
type region struct {
	b   []byte
	n   int
	off int64
}

// writeRing is writeAll's state: the free buffers, the writers' queue and first
// error, and the running flush.
type writeRing struct {
	free    chan []byte
	jobs    chan region
	mu      sync.Mutex
	werr    error // the first write or flush error
	wg      sync.WaitGroup
	flushed chan error // the running flush, nil when none
}

// startRing fills the free list with bufs and starts inFlight writers to
// dst; a writer hands its buffer back whether it wrote or not.
func startRing(dst io.WriterAt, bufs [][]byte) *writeRing {
	w := &writeRing{free: make(chan []byte, len(bufs)), jobs: make(chan region)}
	for _, b := range bufs {
		w.free <- b
	}
	for range inFlight {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for r := range w.jobs {
				if !w.failed() {
					n, err := dst.WriteAt(r.b[:r.n], r.off)
					if err == nil && n != r.n {
						err = io.ErrShortWrite
					}
					if err != nil {
						w.setErr(err)
					}
				}
				w.free <- r.b
			}
		}()
	}
	return w
}

func (w *writeRing) setErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.werr == nil {
		w.werr = err
	}
}

func (w *writeRing) failed() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.werr != nil }

// endFlush collects the running flush's result: waiting for it, or only if
// it has ended.
func (w *writeRing) endFlush(wait bool) {
	if w.flushed == nil {
		return
	}
	var ferr error
	if wait {
		ferr = <-w.flushed
	} else {
		select {
		case ferr = <-w.flushed:
		default:
			return
		}
	}
	w.flushed = nil
	if ferr != nil {
		w.setErr(fmt.Errorf("flush: %w", ferr))
	}
}
