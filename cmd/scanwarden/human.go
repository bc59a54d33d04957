package main

import (
	"fmt"
	"io"
	"strings"
	"unicode"
)

// humanf prints a line of human output. Every string argument is cleaned of
// control and format characters first: names, details and summaries carry
// what servers and directories sent (NTLM names, AD attributes), and a
// hostile one must not write escape sequences to the terminal or forge a
// line (a CR+LF and "fix: …"). JSON output stays exact; only this is cleaned.
func humanf(w io.Writer, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = terminalSafe(s)
		}
	}
	fmt.Fprintf(w, format, args...)
}

// terminalSafe shows control characters (C0, DEL, C1, line and paragraph
// separators) and invisible format characters (bidi overrides, zero-width)
// as escapes, so that what is printed is what was sent, visibly.
func terminalSafe(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
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
		case !unsafeRune(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}
