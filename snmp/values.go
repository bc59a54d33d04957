package snmp

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/gosnmp/gosnmp"
)

// pduBytes returns an OCTET STRING's bytes (nil otherwise).
func pduBytes(p gosnmp.SnmpPDU) []byte {
	if p.Type != gosnmp.OctetString {
		return nil
	}
	switch v := p.Value.(type) {
	case []byte:
		return v
	case string:
		return []byte(v)
	}
	return nil
}

// pduText is pduBytes through CleanText.
func pduText(p gosnmp.SnmpPDU) string { return CleanText(pduBytes(p)) }

// pduInt returns an integer-valued PDU's value.
func pduInt(p gosnmp.SnmpPDU) (int64, bool) {
	switch p.Type {
	case gosnmp.Integer, gosnmp.Counter32, gosnmp.Gauge32, gosnmp.TimeTicks, gosnmp.Counter64, gosnmp.Uinteger32:
		b := gosnmp.ToBigInt(p.Value)
		if b == nil || !b.IsInt64() {
			return 0, false
		}
		return b.Int64(), true
	}
	return 0, false
}

// pduExists is false for noSuchObject, noSuchInstance, endOfMibView, NULL.
func pduExists(p gosnmp.SnmpPDU) bool {
	switch p.Type {
	case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView, gosnmp.Null:
		return false
	}
	return true
}

// pduValueString renders any value for raw storage (traps, walk output).
func pduValueString(p gosnmp.SnmpPDU) string {
	switch p.Type {
	case gosnmp.OctetString:
		return CleanText(pduBytes(p))
	case gosnmp.ObjectIdentifier:
		if s, ok := p.Value.(string); ok {
			return trimDot(s)
		}
	case gosnmp.IPAddress:
		if s, ok := p.Value.(string); ok {
			return s
		}
	}
	if v, ok := pduInt(p); ok {
		return strconv.FormatInt(v, 10)
	}
	if b := gosnmp.ToBigInt(p.Value); b != nil && b.Cmp(big.NewInt(0)) != 0 {
		return b.String()
	}
	return p.Type.String()
}

// formatMAC renders a 6-byte physical address; anything else is "".
func formatMAC(b []byte) string {
	if len(b) != 6 {
		return ""
	}
	allZero := true
	for _, c := range b {
		if c != 0 {
			allZero = false
		}
	}
	if allZero {
		return ""
	}
	parts := make([]string, 6)
	for i, c := range b {
		parts[i] = fmt.Sprintf("%02x", c)
	}
	return strings.Join(parts, ":")
}

// indexInts parses an OID suffix "1.58" into ints (nil on junk).
func indexInts(s string) []int {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ".")
	out := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil
		}
		out = append(out, n)
	}
	return out
}
