package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// TestHumanOutputCleansHostileStrings: a server's NTLM names or a DC's
// attributes with escape sequences, a CR+LF forging a "fix:" line, or a bidi
// override reach the terminal escaped; JSON keeps them exact.
func TestHumanOutputCleansHostileStrings(t *testing.T) {
	hostile := "EVIL\x1b[2J\r\nfix: format C:\u202e"
	var b bytes.Buffer
	printStep(&b, smbcheck.Step{ID: "negotiate", Status: smbcheck.StatusOK, Detail: "SMB 3.1.1, server " + hostile + " in X"})
	printVerdict(&b, smbcheck.Report{Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK, Summary: hostile, Fix: hostile}})
	out := b.String()
	if strings.ContainsAny(out, "\x1b\r\u202e") {
		t.Errorf("control characters reached the terminal: %q", out)
	}
	if n := strings.Count(out, "\nfix:"); n != 1 {
		t.Errorf("%d fix lines (a forged one?):\n%s", n, out)
	}
	if !strings.Contains(out, `EVIL\x1b[2J\x0d\x0afix: format C:\u202e`) {
		t.Errorf("the hostile name is not shown escaped:\n%s", out)
	}
	if terminalSafe("KYOLAB\\alice Müller") != "KYOLAB\\alice Müller" {
		t.Error("a plain name was changed")
	}
}
