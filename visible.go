package scanwarden

import (
	"fmt"
	"strings"
	"unicode"
)

// Visible shows control characters (C0, DEL, C1, line and paragraph
// separators) and invisible format characters (bidi overrides, zero-width)
// in s as escapes (\x1b, \u202e), so that what is shown — on a terminal or
// a page — is what a device or a peer sent, visibly.
func Visible(s string) string {
	clean := true
	for _, r := range s {
		if hiddenRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == unicode.ReplacementChar:
			b.WriteString(`\ufffd`)
		case !hiddenRune(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func hiddenRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}
