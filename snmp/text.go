package snmp

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxText bounds any device-provided string we keep (a DisplayString is at
// most 255 octets; job-log e-mails can be longer).
const maxText = 1024

// CleanText turns device-provided bytes into a string that is safe to store
// and log as data: invalid UTF-8 and control characters become U+FFFD,
// runs of white space collapse, NULs end nothing, and the result is bounded.
// It escapes nothing for HTML: the renderer does that.
func CleanText(b []byte) string {
	if len(b) > 4*maxText {
		b = b[:4*maxText]
	}
	var sb strings.Builder
	sb.Grow(len(b))
	space := false
	n := 0
	for len(b) > 0 && n < maxText {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case r == utf8.RuneError && size <= 1:
			r = utf8.RuneError
		case r == '\t' || r == '\n' || r == '\r' || r == ' ':
			if !space && sb.Len() > 0 {
				sb.WriteByte(' ')
				n++
			}
			space = true
			continue
		case unicode.IsControl(r) || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Bidi_Control, r):
			r = utf8.RuneError
		}
		space = false
		sb.WriteRune(r)
		n++
	}
	return strings.TrimRight(sb.String(), " ")
}

// cleanString is CleanText for a string.
func cleanString(s string) string { return CleanText([]byte(s)) }
