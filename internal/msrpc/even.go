package msrpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// EventLog is the MS-EVEN interface (\pipe\eventlog).
var EventLog = Interface{mustUUID("82273fdc-e32a-18c3-3f78-827929dc23ea"), 0, 0}

// MS-EVEN opnums.
const (
	opCloseEventLog     = 2
	opNumberOfRecords   = 4
	opOldestRecord      = 5
	opOpenEventLogW     = 7
	opReadEventLogW     = 10
	readSeek            = 0x2
	readBackwards       = 0x8
	statusBufferTooSmal = 0xC0000023
	statusEndOfFile     = 0xC0000011
	// MaxRead is the most one ElfrReadELW asks for (MAX_BATCH_BUFF).
	MaxRead = 0x7FFFF
)

// Handle is a context handle (an open log).
type Handle [20]byte

// StatusError is an NTSTATUS other than success that an MS-EVEN call
// returned.
type StatusError struct {
	Op     string
	Status uint32
}

func (e *StatusError) Error() string { return fmt.Sprintf("%s: status 0x%08X", e.Op, e.Status) }

// OpenEventLogRequest is ElfrOpenELW's stub for the log named module.
func OpenEventLogRequest(module string) []byte {
	var e enc
	e.u32(0) // UNCServerName: NULL
	e.counted(module)
	e.counted("") // RegModuleName
	e.u32(1)      // MajorVersion
	e.u32(1)      // MinorVersion
	return e.b
}

// ParseOpenEventLog reads ElfrOpenELW's response.
func ParseOpenEventLog(stub []byte) (Handle, error) {
	var h Handle
	if len(stub) != 24 {
		return h, fmt.Errorf("open event log: response of %d bytes, want 24", len(stub))
	}
	if st := binary.LittleEndian.Uint32(stub[20:]); st != 0 {
		return h, &StatusError{"open event log", st}
	}
	copy(h[:], stub)
	return h, nil
}

// HandleRequest is the stub of a call that takes only the handle
// (ElfrCloseEL, ElfrNumberOfRecords).
func HandleRequest(h Handle) []byte { return append([]byte(nil), h[:]...) }

// ReadEventLogRequest asks for up to n bytes of records, from record
// number from backwards (towards older ones).
func ReadEventLogRequest(h Handle, from, n uint32) []byte {
	var e enc
	e.b = append(e.b, h[:]...)
	e.u32(readSeek | readBackwards)
	e.u32(from)
	e.u32(n)
	return e.b
}

// ReadResult is what one ElfrReadELW gave: its records' bytes, or (More
// set) the buffer size the next record needs; EOF when none is left.
type ReadResult struct {
	Data []byte
	Need uint32
	EOF  bool
}

// ParseReadEventLog reads ElfrReadELW's response.
func ParseReadEventLog(stub []byte) (ReadResult, error) {
	d := dec{b: stub}
	n := d.u32()
	data := d.take(int(n))
	d.align(4)
	sent := d.u32()
	real := d.u32()
	st := d.u32()
	if d.err != nil {
		return ReadResult{}, fmt.Errorf("read event log: %w", d.err)
	}
	switch st {
	case 0:
	case statusEndOfFile:
		return ReadResult{EOF: true}, nil
	case statusBufferTooSmal:
		return ReadResult{Need: real}, nil
	default:
		return ReadResult{}, &StatusError{"read event log", st}
	}
	if sent > n {
		return ReadResult{}, fmt.Errorf("read event log: %d bytes sent in a buffer of %d", sent, n)
	}
	return ReadResult{Data: data[:sent]}, nil
}

// ParseCount reads the response of ElfrNumberOfRecords or
// ElfrOldestRecord: one number.
func ParseCount(stub []byte) (uint32, error) {
	if len(stub) != 8 {
		return 0, fmt.Errorf("record count: response of %d bytes, want 8", len(stub))
	}
	if st := binary.LittleEndian.Uint32(stub[4:]); st != 0 {
		return 0, &StatusError{"record count", st}
	}
	return binary.LittleEndian.Uint32(stub), nil
}

// Log is an open event log on a bound MS-EVEN connection.
type Log struct {
	c *Conn
	h Handle
}

// OpenLog opens the log named module ("Security", "System").
func OpenLog(c *Conn, module string) (*Log, error) {
	stub, err := c.Call(opOpenEventLogW, OpenEventLogRequest(module))
	if err != nil {
		return nil, err
	}
	h, err := ParseOpenEventLog(stub)
	if err != nil {
		return nil, err
	}
	return &Log{c: c, h: h}, nil
}

// Range returns the oldest record number and how many records the log
// holds.
func (l *Log) Range() (oldest, count uint32, err error) {
	stub, err := l.c.Call(opOldestRecord, HandleRequest(l.h))
	if err != nil {
		return 0, 0, err
	}
	if oldest, err = ParseCount(stub); err != nil {
		return 0, 0, err
	}
	if stub, err = l.c.Call(opNumberOfRecords, HandleRequest(l.h)); err != nil {
		return 0, 0, err
	}
	count, err = ParseCount(stub)
	return oldest, count, err
}

// Read returns records from record number from backwards, as many as fit
// in size bytes (at least one: a buffer too small is grown up to MaxRead).
// None at the end of the log.
func (l *Log) Read(from, size uint32) ([]Record, error) {
	for {
		stub, err := l.c.Call(opReadEventLogW, ReadEventLogRequest(l.h, from, size))
		if err != nil {
			return nil, err
		}
		r, err := ParseReadEventLog(stub)
		switch {
		case err != nil:
			return nil, err
		case r.EOF:
			return nil, nil
		case r.Need > 0:
			if r.Need <= size || r.Need > MaxRead {
				return nil, fmt.Errorf("read event log: a record of %d bytes", r.Need)
			}
			size = r.Need
			continue
		}
		return ParseRecords(r.Data)
	}
}

// Close closes the log (best effort).
func (l *Log) Close() error {
	_, err := l.c.Call(opCloseEventLog, HandleRequest(l.h))
	return err
}

// Record is one EVENTLOGRECORD.
type Record struct {
	Number    uint32
	Generated time.Time
	Written   time.Time
	// EventID as the log keeps it: the low 16 bits are the event number
	// the admin knows (4625); the high bits are severity and facility.
	EventID  uint32
	Type     uint16 // EVENTLOG_AUDIT_FAILURE, …
	Category uint16
	Source   string
	Computer string
	Strings  []string
}

// ID is the event number (the low 16 bits of EventID).
func (r Record) ID() uint16 { return uint16(r.EventID) }

// Event types.
const (
	TypeError        = 0x0001
	TypeWarning      = 0x0002
	TypeInformation  = 0x0004
	TypeAuditSuccess = 0x0008
	TypeAuditFailure = 0x0010
)

const recordMagic = 0x654c664c // "LfLe"

// ParseRecords splits a read's bytes into records.
func ParseRecords(b []byte) ([]Record, error) {
	var out []Record
	for len(b) > 0 {
		if len(b) < 56 {
			return out, fmt.Errorf("event record: %d bytes left, shorter than its header", len(b))
		}
		n := int(binary.LittleEndian.Uint32(b))
		if n < 56 || n > len(b) {
			return out, fmt.Errorf("event record length %d with %d bytes left", n, len(b))
		}
		r, err := parseRecord(b[:n])
		if err != nil {
			return out, err
		}
		out = append(out, r)
		b = b[n:]
	}
	return out, nil
}

func parseRecord(b []byte) (Record, error) {
	le := binary.LittleEndian
	if le.Uint32(b[4:]) != recordMagic {
		return Record{}, errors.New("event record: no LfLe signature")
	}
	r := Record{
		Number:    le.Uint32(b[8:]),
		Generated: time.Unix(int64(le.Uint32(b[12:])), 0).UTC(),
		Written:   time.Unix(int64(le.Uint32(b[16:])), 0).UTC(),
		EventID:   le.Uint32(b[20:]),
		Type:      le.Uint16(b[24:]),
		Category:  le.Uint16(b[28:]),
	}
	nStrings := int(le.Uint16(b[26:]))
	stringOff := int(le.Uint32(b[36:]))
	var used int
	r.Source, used = utf16z(b[56:])
	r.Computer, _ = utf16z(b[56+used:])
	if nStrings > 0 {
		if stringOff < 56 || stringOff > len(b) {
			return r, fmt.Errorf("event record %d: strings at %d, outside its %d bytes", r.Number, stringOff, len(b))
		}
		if nStrings > 256 {
			return r, fmt.Errorf("event record %d: %d strings", r.Number, nStrings)
		}
		p := b[stringOff:]
		for i := 0; i < nStrings; i++ {
			if len(p) == 0 {
				return r, fmt.Errorf("event record %d: %d of %d strings", r.Number, i, nStrings)
			}
			s, used := utf16z(p)
			r.Strings = append(r.Strings, s)
			p = p[used:]
		}
	}
	return r, nil
}
