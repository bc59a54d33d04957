package receiver

// The forwarder's copy loops. Memory is a fixed ring of buffers whatever
// the file's size; the network side keeps several requests in flight where
// the destination allows it (SMB2/3), so the wire, the server and the local
// side (disk, SHA-256) overlap.

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// copyBuf is the size of each of the forwarder's buffers: one SMB WRITE or
// READ of 1 MiB, the most the SMB library sends in one request (Windows
// takes no more, whatever it negotiates).
const copyBuf = 1 << 20

// inFlight is how many regions the forwarder keeps between the server and
// itself on a destination that takes concurrent requests (SMB2/3): each is
// a WRITE followed by the READ that checks it.
const inFlight = 4

// ringSize is the number of copy buffers: those in flight, one being
// filled from the held copy and one being hashed. (Measured: the reader
// hardly ever waits for a free buffer; the server's answers are what the
// copy waits for.)
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

// errStopped is the result of a region skipped after another failed.
var errStopped = errors.New("stopped")

// readBackError says a region did not read back as it was written.
type readBackError struct {
	off       int64
	want, got int
	err       error
}

func (e *readBackError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("read back at %d: %v", e.off, e.err)
	}
	return fmt.Sprintf("read back at %d: %d bytes, wrote %d", e.off, e.got, e.want)
}
func (e *readBackError) Unwrap() error { return e.err }

// sendVerify copies src to dst and reads each region back right after the
// server acknowledged its write, while later regions are still being
// written: up to inFlight regions in flight, each a WriteAt then a ReadAt of
// the same bytes into the same buffer. What was read back is hashed into h
// in file order. sent is how many bytes src gave, back how many read back
// (a destination longer than sent counts one more). The caller compares h
// with the catalogue: a held copy changed since it was catalogued fails
// there as surely as a destination that stored other bytes.
//
// flush, when not nil, is called from another goroutine each time another
// every bytes have read back (one call at a time), so the server writes the
// file to its disk while the rest is still on its way and the caller's last
// flush has little left to do.
func sendVerify(dst randomAccess, src io.Reader, h io.Writer, bufs [][]byte, flush func() error, every int64) (sent, back int64, err error) {
	type region struct {
		b    []byte
		n    int
		off  int64
		done chan error
	}
	free := make(chan []byte, len(bufs))
	for _, b := range bufs {
		free <- b
	}
	jobs := make(chan *region)
	order := make(chan *region, len(bufs)) // regions in file order, for the hash
	stop := make(chan struct{})            // closed at the first failure
	var wg sync.WaitGroup
	for range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				select {
				case <-stop:
					r.done <- errStopped
					continue
				default:
				}
				n, err := dst.WriteAt(r.b[:r.n], r.off)
				if err == nil && n != r.n {
					err = io.ErrShortWrite
				}
				if err != nil {
					r.done <- err
					continue
				}
				n, err = dst.ReadAt(r.b[:r.n], r.off)
				if err == io.EOF && n == r.n {
					err = nil
				}
				if err != nil || n != r.n {
					err = &readBackError{r.off, r.n, n, err}
				}
				r.done <- err
			}
		}()
	}
	var readErr error
	go func() {
		defer close(order)
		defer close(jobs)
		var off int64
		for {
			var b []byte
			select {
			case b = <-free:
			case <-stop:
				return
			}
			n, err := io.ReadFull(src, b)
			if n > 0 {
				r := &region{b, n, off, make(chan error, 1)}
				order <- r
				jobs <- r
				off += int64(n)
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return
			}
			if err != nil {
				readErr = fmt.Errorf("read held copy: %w", err)
				return
			}
		}
	}()
	var flushed chan error // the running flush, nil when none
	next := every
	for r := range order {
		rerr := <-r.done
		if err == nil {
			if rerr != nil {
				err = rerr
				close(stop)
			} else {
				h.Write(r.b[:r.n])
				back += int64(r.n)
			}
		}
		sent = max(sent, r.off+int64(r.n))
		free <- r.b
		if flushed != nil {
			select {
			case ferr := <-flushed:
				flushed = nil
				if ferr != nil && err == nil {
					err = fmt.Errorf("flush: %w", ferr)
					close(stop)
				}
			default:
			}
		}
		if flush != nil && err == nil && flushed == nil && back >= next {
			next = back + every
			flushed = make(chan error, 1)
			go func(c chan error) { c <- flush() }(flushed)
		}
	}
	wg.Wait() // no request on dst is left when this returns
	if flushed != nil {
		if ferr := <-flushed; ferr != nil && err == nil {
			err = fmt.Errorf("flush: %w", ferr)
		}
	}
	if err == nil {
		err = readErr // set before order was closed
	}
	if err != nil {
		return sent, back, err
	}
	var one [1]byte
	if n, _ := dst.ReadAt(one[:], sent); n > 0 {
		back += int64(n) // longer than what was written
	}
	return sent, back, nil
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
