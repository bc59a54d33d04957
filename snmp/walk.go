package snmp

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gosnmp/gosnmp"
)

// WalkOptions bound a walk.
type WalkOptions struct {
	Subtrees       []string      // default SubtreesForWalk
	MaxRepetitions int           // default 20
	MaxVars        int           // stop after this many variables (default 100,000)
	MaxTime        time.Duration // stop after this long (default 5m)
}

// WalkStats says what a walk recorded.
type WalkStats struct {
	Vars      int   `json:"vars"`
	PDUs      int64 `json:"pdus"`
	Truncated bool  `json:"truncated"` // a bound was hit
}

// Walk records the device's relevant subtrees to w in snmpsim's .snmprec
// format (OID|TAG|VALUE, sorted by OID), so that a real device's walk
// becomes a test fixture. OCTET STRINGs that are not printable text are
// written as hex (tag 4x).
func Walk(ctx context.Context, t Target, w io.Writer, opt WalkOptions) (WalkStats, error) {
	if err := t.Validate(); err != nil {
		return WalkStats{}, err
	}
	t = t.withDefaults()
	opt = opt.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opt.MaxTime)
	defer cancel()
	c := newClient()
	if err := c.connect(ctx, t, uint32(opt.MaxRepetitions), nil); err != nil {
		return WalkStats{}, err
	}
	defer c.close()
	wk := &walker{bw: bufio.NewWriter(w), maxVars: opt.MaxVars, seen: map[string]bool{}}
	for _, root := range opt.Subtrees {
		next := trimDot(root)
		for wk.st.Vars < opt.MaxVars {
			pkt, err := walkNext(ctx, c, t.Version, next, opt.MaxRepetitions)
			if pkt == nil && err == nil {
				break // end of MIB view in v1
			}
			if err != nil {
				wk.st.PDUs = c.pdus.Load()
				if ctx.Err() != nil {
					wk.st.Truncated = true
					return wk.st, wk.bw.Flush()
				}
				return wk.st, fmt.Errorf("walk %s under %s: %w", t.Addr(), root, err)
			}
			if next, err = wk.record(pkt, root, next); err != nil {
				return wk.st, err
			}
			if next == "" {
				break
			}
		}
	}
	wk.st.PDUs = c.pdus.Load()
	return wk.st, wk.bw.Flush()
}

// walker is one Walk's output and what it has written.
type walker struct {
	bw      *bufio.Writer
	maxVars int
	st      WalkStats
	seen    map[string]bool
}

// record writes the variables of pkt, asked for after next, that fall
// under root and were not written yet, up to maxVars. It returns the OID
// to ask after next; "" ends the subtree (a variable beyond root, one not
// after the last, or none at all).
func (wk *walker) record(pkt *gosnmp.SnmpPacket, root, next string) (string, error) {
	progressed := false
	for _, p := range pkt.Variables {
		name := trimDot(p.Name)
		if !hasPrefix(name, root) || !pduExists(p) {
			return "", nil
		}
		if !oidLess(next, name) {
			// Not increasing: a broken agent; stop this subtree.
			return "", nil
		}
		next = name
		progressed = true
		if wk.seen[name] {
			continue
		}
		wk.seen[name] = true
		line, ok := snmprecLine(p)
		if !ok {
			continue
		}
		if _, err := wk.bw.WriteString(line + "\n"); err != nil {
			return "", err
		}
		wk.st.Vars++
		if wk.st.Vars >= wk.maxVars {
			wk.st.Truncated = true
			break
		}
	}
	if !progressed {
		return "", nil
	}
	return next, nil
}

// withDefaults fills the options left at zero (or below).
func (opt WalkOptions) withDefaults() WalkOptions {
	if len(opt.Subtrees) == 0 {
		opt.Subtrees = SubtreesForWalk
	}
	if opt.MaxRepetitions <= 0 {
		opt.MaxRepetitions = 20
	}
	if opt.MaxVars <= 0 {
		opt.MaxVars = 100_000
	}
	if opt.MaxTime <= 0 {
		opt.MaxTime = 5 * time.Minute
	}
	return opt
}

// walkNext asks for the variables after next: GETNEXT in v1, GETBULK
// otherwise. A nil packet with a nil error is the end of a v1 agent's view.
func walkNext(ctx context.Context, c *client, v Version, next string, maxRep int) (*gosnmp.SnmpPacket, error) {
	if v != V1 {
		return c.getBulk(ctx, []string{next}, 0, uint32(maxRep))
	}
	pkt, err := c.getNext(ctx, []string{next})
	var pe *PDUError
	if errors.As(err, &pe) && pe.Status == gosnmp.NoSuchName.String() {
		return nil, nil
	}
	return pkt, err
}

// snmprecLine renders one variable in snmpsim's format.
func snmprecLine(p gosnmp.SnmpPDU) (string, bool) {
	name := trimDot(p.Name)
	switch p.Type {
	case gosnmp.Integer:
		v, _ := pduInt(p)
		return name + "|2|" + strconv.FormatInt(v, 10), true
	case gosnmp.OctetString:
		b := pduBytes(p)
		if printable(b) {
			return name + "|4|" + string(b), true
		}
		return name + "|4x|" + hex.EncodeToString(b), true
	case gosnmp.Null:
		return name + "|5|", true
	case gosnmp.ObjectIdentifier:
		s, _ := p.Value.(string)
		return name + "|6|" + trimDot(s), true
	case gosnmp.IPAddress:
		s, _ := p.Value.(string)
		return name + "|64|" + s, true
	case gosnmp.Counter32:
		return name + "|65|" + gosnmp.ToBigInt(p.Value).String(), true
	case gosnmp.Gauge32, gosnmp.Uinteger32:
		return name + "|66|" + gosnmp.ToBigInt(p.Value).String(), true
	case gosnmp.TimeTicks:
		return name + "|67|" + gosnmp.ToBigInt(p.Value).String(), true
	case gosnmp.Opaque:
		if b, ok := p.Value.([]byte); ok {
			return name + "|68x|" + hex.EncodeToString(b), true
		}
	case gosnmp.Counter64:
		b := gosnmp.ToBigInt(p.Value)
		if b == nil {
			b = big.NewInt(0)
		}
		return name + "|70|" + b.String(), true
	}
	return "", false
}

// printable: valid UTF-8 without control characters survives the
// .snmprec line format unchanged.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// oidLess compares numeric OIDs.
func oidLess(a, b string) bool {
	as, bs := strings.Split(trimDot(a), "."), strings.Split(trimDot(b), ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.ParseUint(as[i], 10, 64)
		y, _ := strconv.ParseUint(bs[i], 10, 64)
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}
