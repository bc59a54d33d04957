package main

import (
	"fmt"
	"io"

	"github.com/scanwarden/scanwarden"
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

// terminalSafe shows control characters and invisible format characters
// as escapes (scanwarden.Visible).
func terminalSafe(s string) string { return scanwarden.Visible(s) }
