package localname

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// LLMNR (RFC 4795 §2.1.1) constants.
const (
	llmnrHeaderLen = 12

	llmnrQR     = 0x8000
	llmnrOpcode = 0x7800
	llmnrC      = 0x0400 // conflict
	llmnrTC     = 0x0200 // truncated
	llmnrT      = 0x0100 // tentative
	llmnrRcode  = 0x000F

	typeA     = 1
	typeAAAA  = 28
	classIN   = 1
	classMask = 0x7FFF // the top bit of an answer's class is mDNS's cache flush; not LLMNR's, ignored
)

// llmnrQuery encodes an LLMNR query for name (one label) of type qtype.
func llmnrQuery(id uint16, name string, qtype uint16) ([]byte, error) {
	if why := SingleLabel(name); why != "" {
		return nil, fmt.Errorf("llmnr name: %s", why)
	}
	b := make([]byte, llmnrHeaderLen, llmnrHeaderLen+len(name)+2+4)
	binary.BigEndian.PutUint16(b[0:], id)
	binary.BigEndian.PutUint16(b[4:], 1) // QDCOUNT; flags all zero: a standard query
	b = appendName(b, strings.TrimSuffix(name, "."))
	b = binary.BigEndian.AppendUint16(b, qtype)
	return binary.BigEndian.AppendUint16(b, classIN), nil
}

// LLMNRResponse is a parsed LLMNR response: the question it answers and
// the A and AAAA records for that name (other records are skipped).
type LLMNRResponse struct {
	ID        uint16
	Conflict  bool // C: the name is claimed by more than one responder
	Truncated bool // TC
	Tentative bool // T: the responder has not yet verified that the name is its own
	Rcode     int
	Name      string // the question's name
	Addrs     []netip.Addr
}

// ParseLLMNRResponse reads an LLMNR response. A response with RCODE not 0
// wraps ErrNegative; anything that is not a well-formed response is an
// error naming the field.
func ParseLLMNRResponse(b []byte) (LLMNRResponse, error) {
	var r LLMNRResponse
	if len(b) < llmnrHeaderLen {
		return r, fmt.Errorf("llmnr response: %d bytes, shorter than the %d-byte header", len(b), llmnrHeaderLen)
	}
	r.ID = binary.BigEndian.Uint16(b)
	flags := binary.BigEndian.Uint16(b[2:])
	qd, an := binary.BigEndian.Uint16(b[4:]), binary.BigEndian.Uint16(b[6:])
	if flags&llmnrQR == 0 {
		return r, errors.New("llmnr response: the QR bit is clear: a query, not a response")
	}
	if op := flags & llmnrOpcode >> 11; op != 0 {
		return r, fmt.Errorf("llmnr response: opcode %d, not a standard query response (0)", op)
	}
	r.Conflict, r.Truncated, r.Tentative = flags&llmnrC != 0, flags&llmnrTC != 0, flags&llmnrT != 0
	r.Rcode = int(flags & llmnrRcode)
	if qd != 1 {
		return r, fmt.Errorf("llmnr response: QDCOUNT %d, want 1 (a response repeats its question)", qd)
	}
	labels, off, err := readName(b, llmnrHeaderLen)
	if err != nil {
		return r, fmt.Errorf("llmnr response: question name: %w", err)
	}
	if off+4 > len(b) {
		return r, errors.New("llmnr response: question cut short after its name")
	}
	r.Name = strings.Join(labels, ".")
	off += 4
	if r.Rcode != 0 {
		return r, fmt.Errorf("llmnr response: rcode %d for %s: %w", r.Rcode, r.Name, ErrNegative)
	}
	for i := 0; i < int(an); i++ {
		labels, next, err := readName(b, off)
		if err != nil {
			return r, fmt.Errorf("llmnr response: answer %d name: %w", i+1, err)
		}
		off = next
		if off+10 > len(b) {
			return r, fmt.Errorf("llmnr response: answer %d cut short after its name (%d bytes left, want 10)", i+1, len(b)-off)
		}
		typ, class := binary.BigEndian.Uint16(b[off:]), binary.BigEndian.Uint16(b[off+2:])&classMask
		rdlen := int(binary.BigEndian.Uint16(b[off+8:]))
		off += 10
		if off+rdlen > len(b) {
			return r, fmt.Errorf("llmnr response: answer %d RDLENGTH %d runs past the end of the %d-byte message", i+1, rdlen, len(b))
		}
		rdata := b[off : off+rdlen]
		off += rdlen
		if class != classIN || !strings.EqualFold(strings.Join(labels, "."), r.Name) {
			continue // not an address of the name asked
		}
		switch typ {
		case typeA:
			if rdlen != 4 {
				return r, fmt.Errorf("llmnr response: answer %d: an A record with %d bytes of data, want 4", i+1, rdlen)
			}
			r.Addrs = append(r.Addrs, netip.AddrFrom4([4]byte(rdata)))
		case typeAAAA:
			if rdlen != 16 {
				return r, fmt.Errorf("llmnr response: answer %d: an AAAA record with %d bytes of data, want 16", i+1, rdlen)
			}
			r.Addrs = append(r.Addrs, netip.AddrFrom16([16]byte(rdata)).Unmap())
		}
	}
	return r, nil
}
