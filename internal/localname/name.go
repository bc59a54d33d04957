package localname

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Limits of a DNS-style name (RFC 1035 §2.3.4), which NetBIOS name service
// and LLMNR messages both carry.
const (
	maxLabel    = 63
	maxName     = 255
	maxPointers = 16 // compression pointers followed in one name
)

// readName reads the (possibly compressed, RFC 1035 §4.1.4; RFC 1002 §4.1
// calls it a label string pointer) name at off in msg. It returns the
// labels and the offset just after the name where it appears (not where a
// pointer led). A pointer must point backwards, so that no name can loop.
func readName(msg []byte, off int) (labels []string, next int, err error) {
	next = -1
	total := 0
	for jumps := 0; ; {
		if off >= len(msg) {
			return nil, 0, fmt.Errorf("name at byte %d runs past the end of the %d-byte message", off, len(msg))
		}
		n := int(msg[off])
		switch n & 0xC0 {
		case 0x00:
			if n == 0 {
				if next < 0 {
					next = off + 1
				}
				return labels, next, nil
			}
			if off+1+n > len(msg) {
				return nil, 0, fmt.Errorf("label of %d bytes at byte %d runs past the end of the %d-byte message", n, off, len(msg))
			}
			total += n + 1
			if total > maxName {
				return nil, 0, fmt.Errorf("name longer than %d bytes", maxName)
			}
			labels = append(labels, string(msg[off+1:off+1+n]))
			off += 1 + n
		case 0xC0:
			if off+2 > len(msg) {
				return nil, 0, fmt.Errorf("compression pointer at byte %d cut short", off)
			}
			ptr := int(binary.BigEndian.Uint16(msg[off:]) & 0x3FFF)
			if ptr >= off {
				return nil, 0, fmt.Errorf("compression pointer at byte %d points forward (to %d)", off, ptr)
			}
			if jumps++; jumps > maxPointers {
				return nil, 0, fmt.Errorf("more than %d compression pointers in one name", maxPointers)
			}
			if next < 0 {
				next = off + 2
			}
			off = ptr
		default:
			return nil, 0, fmt.Errorf("label type 0x%02x at byte %d is not a length or a pointer", n&0xC0, off)
		}
	}
}

// appendName appends labels as an uncompressed name.
func appendName(b []byte, labels ...string) []byte {
	for _, l := range labels {
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	return append(b, 0)
}

// SingleLabel reports why host cannot be asked over NetBIOS or LLMNR, or
// "" when it can: only a single-label name is asked (RFC 4795 has an LLMNR
// sender send only single-label names by default; a NetBIOS name has no
// dots), in printable ASCII, without the characters NetBIOS forbids.
func SingleLabel(host string) string {
	h := strings.TrimSuffix(host, ".")
	switch {
	case h == "":
		return "an empty name"
	case strings.Contains(h, "."):
		return fmt.Sprintf("%s has a dot: only a single-label name is asked over NetBIOS or LLMNR", host)
	case len(h) > maxLabel:
		return fmt.Sprintf("%s is longer than %d characters", host, maxLabel)
	}
	for _, r := range h {
		if r <= ' ' || r > '~' || strings.ContainsRune(`\/:*?"<>|`, r) {
			return fmt.Sprintf("%s has the character %q, which no NetBIOS or LLMNR name has", host, r)
		}
	}
	return ""
}
