package localname

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// NetBIOS name service (RFC 1002 §4.2) constants.
const (
	nbnsHeaderLen = 12

	nbnsResponse = 0x8000 // R
	nbnsOpcode   = 0x7800 // OPCODE (0: query)
	nbnsAA       = 0x0400
	nbnsTC       = 0x0200
	nbnsRD       = 0x0100
	nbnsB        = 0x0010 // broadcast
	nbnsRcode    = 0x000F

	nbnsTypeNB  = 0x0020
	nbnsClassIN = 0x0001

	// ServerSuffix is the 16th byte of a NetBIOS name that a file server
	// registers (<20>): what Windows asks for a \\HOST\share path.
	ServerSuffix = 0x20

	// NetBIOSNameLen is the longest NetBIOS name (the 16th byte is the suffix).
	NetBIOSNameLen = 15
)

// nbnsQuery encodes a NAME QUERY REQUEST (RFC 1002 §4.2.12) for name<suffix>:
// with B set for a broadcast, without it for a WINS server. RD is set in both,
// as RFC 1002 asks of a query.
func nbnsQuery(id uint16, name string, suffix byte, broadcast bool) ([]byte, error) {
	enc, err := encodeNetBIOSName(name, suffix)
	if err != nil {
		return nil, err
	}
	flags := uint16(nbnsRD)
	if broadcast {
		flags |= nbnsB
	}
	b := make([]byte, nbnsHeaderLen, nbnsHeaderLen+len(enc)+2+4)
	binary.BigEndian.PutUint16(b[0:], id)
	binary.BigEndian.PutUint16(b[2:], flags)
	binary.BigEndian.PutUint16(b[4:], 1) // QDCOUNT
	b = appendName(b, enc)
	b = binary.BigEndian.AppendUint16(b, nbnsTypeNB)
	return binary.BigEndian.AppendUint16(b, nbnsClassIN), nil
}

// encodeNetBIOSName is RFC 1001 §14.1's first-level encoding of name, upper
// case and padded with spaces to 15 bytes, plus suffix: each of the 16
// bytes becomes two letters 'A'+high nibble, 'A'+low nibble.
func encodeNetBIOSName(name string, suffix byte) (string, error) {
	if why := SingleLabel(name); why != "" {
		return "", fmt.Errorf("netbios name: %s", why)
	}
	name = strings.ToUpper(strings.TrimSuffix(name, "."))
	if len(name) > NetBIOSNameLen {
		return "", fmt.Errorf("netbios name: %s is longer than %d characters", name, NetBIOSNameLen)
	}
	var raw [16]byte
	copy(raw[:], name)
	for i := len(name); i < NetBIOSNameLen; i++ {
		raw[i] = ' '
	}
	raw[15] = suffix
	out := make([]byte, 32)
	for i, c := range raw {
		out[2*i] = 'A' + c>>4
		out[2*i+1] = 'A' + c&0x0F
	}
	return string(out), nil
}

// decodeNetBIOSName undoes encodeNetBIOSName on one label: the name without
// its padding, and its suffix.
func decodeNetBIOSName(label string) (string, byte, error) {
	if len(label) != 32 {
		return "", 0, fmt.Errorf("netbios name label of %d bytes, want 32", len(label))
	}
	var raw [16]byte
	for i := range raw {
		hi, lo := label[2*i]-'A', label[2*i+1]-'A'
		if hi > 15 || lo > 15 {
			return "", 0, fmt.Errorf("netbios name label byte %d (%q) is not a letter A-P", 2*i, label[2*i:2*i+2])
		}
		raw[i] = hi<<4 | lo
	}
	return strings.TrimRight(string(raw[:15]), " "), raw[15], nil
}

// NBNSRcode names the RCODEs of RFC 1002 §4.2.6 a name query response can carry.
var nbnsRcodes = map[int]string{1: "FMT_ERR", 2: "SRV_ERR", 3: "NAM_ERR (no such name)", 4: "IMP_ERR", 5: "RFS_ERR (refused)", 6: "ACT_ERR", 7: "CFT_ERR (name in conflict)"}

// NBNSEntry is one address of a positive name query response.
type NBNSEntry struct {
	Addr  netip.Addr
	Group bool // a group name, not a unique one
}

// NBNSResponse is a parsed NAME QUERY RESPONSE (RFC 1002 §4.2.13, 4.2.14).
type NBNSResponse struct {
	ID        uint16
	Broadcast bool // B: the responder answered a broadcast
	Rcode     int  // 0 for a positive response
	Name      string
	Suffix    byte
	Entries   []NBNSEntry
}

// ErrNegative marks a response that says the name is not there (a WINS
// server's NAM_ERR), as opposed to a packet that cannot be read.
var ErrNegative = errors.New("negative answer")

// ParseNBNSResponse reads a name query response. A negative response
// (RCODE not 0) is returned with an error wrapping ErrNegative; anything
// that is not a well-formed response is an error naming the field.
func ParseNBNSResponse(b []byte) (NBNSResponse, error) {
	var r NBNSResponse
	if len(b) < nbnsHeaderLen {
		return r, fmt.Errorf("nbns response: %d bytes, shorter than the %d-byte header", len(b), nbnsHeaderLen)
	}
	r.ID = binary.BigEndian.Uint16(b)
	flags := binary.BigEndian.Uint16(b[2:])
	qd, an := binary.BigEndian.Uint16(b[4:]), binary.BigEndian.Uint16(b[6:])
	if flags&nbnsResponse == 0 {
		return r, errors.New("nbns response: the R bit is clear: a request, not a response")
	}
	if op := flags & nbnsOpcode >> 11; op != 0 {
		return r, fmt.Errorf("nbns response: opcode %d, not a name query response (0)", op)
	}
	r.Broadcast = flags&nbnsB != 0
	r.Rcode = int(flags & nbnsRcode)
	off := nbnsHeaderLen
	for i := 0; i < int(qd); i++ { // a response carries none, but skip any
		_, next, err := readName(b, off)
		if err != nil {
			return r, fmt.Errorf("nbns response: question %d: %w", i+1, err)
		}
		if off = next + 4; off > len(b) {
			return r, fmt.Errorf("nbns response: question %d cut short", i+1)
		}
	}
	if an == 0 {
		if r.Rcode != 0 {
			return r, fmt.Errorf("nbns response: rcode %d %s: %w", r.Rcode, nbnsRcodes[r.Rcode], ErrNegative)
		}
		return r, errors.New("nbns response: no answer record in a positive response")
	}
	labels, next, err := readName(b, off)
	if err != nil {
		return r, fmt.Errorf("nbns response: answer name: %w", err)
	}
	if len(labels) == 0 {
		return r, errors.New("nbns response: answer name is empty")
	}
	if r.Name, r.Suffix, err = decodeNetBIOSName(labels[0]); err != nil {
		return r, fmt.Errorf("nbns response: answer name: %w", err)
	}
	if r.Rcode != 0 {
		return r, fmt.Errorf("nbns response: rcode %d %s for %s<%02X>: %w", r.Rcode, nbnsRcodes[r.Rcode], r.Name, r.Suffix, ErrNegative)
	}
	off = next
	if off+10 > len(b) {
		return r, fmt.Errorf("nbns response: answer record of %s cut short after its name (%d bytes left, want 10)", r.Name, len(b)-off)
	}
	typ, class := binary.BigEndian.Uint16(b[off:]), binary.BigEndian.Uint16(b[off+2:])
	rdlen := int(binary.BigEndian.Uint16(b[off+8:]))
	off += 10
	if typ != nbnsTypeNB || class != nbnsClassIN {
		return r, fmt.Errorf("nbns response: answer type 0x%04x class 0x%04x, want NB (0x0020) IN (0x0001)", typ, class)
	}
	if off+rdlen > len(b) {
		return r, fmt.Errorf("nbns response: RDLENGTH %d runs past the end of the %d-byte message", rdlen, len(b))
	}
	if rdlen == 0 || rdlen%6 != 0 {
		return r, fmt.Errorf("nbns response: RDLENGTH %d is not a positive multiple of 6 (flags + IPv4 address)", rdlen)
	}
	for p := off; p < off+rdlen; p += 6 {
		nbFlags := binary.BigEndian.Uint16(b[p:])
		r.Entries = append(r.Entries, NBNSEntry{Addr: netip.AddrFrom4([4]byte(b[p+2 : p+6])), Group: nbFlags&0x8000 != 0})
	}
	return r, nil
}
