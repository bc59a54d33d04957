package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/warning"
)

// printReplayedAs says which MFP client the check replays: the device's
// profile (with the one-off flags over it); nothing where nothing is known
// (scanwarden's own client).
func printReplayedAs(w io.Writer, dev *registry.Device, profile []registry.ProfileValue) {
	var known []string
	for _, v := range profile {
		if v.Value != "" {
			from := string(v.Origin)
			if v.Origin == registry.OriginAdmin {
				from = "set by hand"
			}
			known = append(known, fmt.Sprintf("%s %s (%s)", strings.ReplaceAll(string(v.Field), "_", " "), v.Value, from))
		}
	}
	who := "the MFP"
	if dev != nil {
		who = "device " + dev.Name
	}
	if len(known) == 0 {
		return // scanwarden's own client, as always
	}
	humanf(w, "replaying as %s's SMB client: %s\n", who, strings.Join(known, ", "))
}

// printCheckStart is the check's first line: where, as whom.
func printCheckStart(w io.Writer, t scanwarden.Target) {
	if t.User == "" {
		humanf(w, "checking %s with an empty login name (anonymous logon; workstation %s)\n", destString(t), t.Info().Workstation)
		return
	}
	humanf(w, "checking %s as %s (workstation %s%s)\n", destString(t), t.User, t.Info().Workstation, authLabel(t.Auth))
}

// destString is the destination as the panel shows it: \\HOST\SHARE\PATH
// with one kind of separator, and the port when it is not 445.
func destString(t scanwarden.Target) string {
	s := scanwarden.UNC(t.Host, t.Share, t.Path)
	if scanwarden.NonDefaultPort(t.Port) {
		s += fmt.Sprintf(" port %d", t.Port)
	}
	return s
}

func printStep(w io.Writer, s smbcheck.Step) {
	ms := fmt.Sprintf("%dms", s.Duration.Milliseconds())
	if s.Status == smbcheck.StatusSkipped {
		ms = "-"
	}
	line := fmt.Sprintf("  %-7s %-9s %7s  %s", s.Status, s.ID, ms, s.Detail)
	if s.Cause != "" {
		line += "  [" + string(s.Cause) + "]"
	}
	humanf(w, "%s\n", line)
}

func printVerdict(w io.Writer, r smbcheck.Report) {
	v := r.Verdict
	code := ""
	if v.KyoceraCode != "" {
		code = fmt.Sprintf(" (the panel most likely shows %s)", v.KyoceraCode)
	}
	humanf(w, "\nverdict: %s%s\n  %s\n", v.Cause, code, v.Summary)
	if v.FromLedger {
		fmt.Fprintln(w, "  (from an earlier observation: not replayed now to protect the account)")
	}
	for _, c := range v.Also {
		found := false
		for _, s := range r.Steps {
			if s.Cause == c {
				humanf(w, "  also found: %s — %s\n", c, s.Detail)
				found = true
				break
			}
		}
		if !found {
			// Found inside another step (the Kerberos replay behind an
			// NTLM refusal): its generic summary.
			humanf(w, "  also found: %s — %s\n", c, c.Info().Summary)
		}
	}
	if r.WorkingForm != nil {
		humanf(w, "  working user name: %s\n", r.WorkingForm.Typed)
	}
	if r.Canary != "" {
		humanf(w, "  left behind: %s\n", r.Canary)
	}
	humanf(w, "fix: %s\n", v.Fix)
	printBridge(w, r.Bridge)
	if r.ServerLog != nil {
		humanf(w, "the server's own story (read as %s; evidence, not the verdict):\n", r.ServerLog.Reader)
		for _, l := range r.ServerLog.Lines() {
			humanf(w, "  %s\n", l)
		}
	}
}

// printWarnings prints what will fail days ahead, after the verdict: one
// line each and what to do.
func printWarnings(w io.Writer, ws []warning.Warning) {
	for _, x := range ws {
		humanf(w, "warning: %s — %s\n", x.Kind, x.Summary())
		humanf(w, "  what to do: %s\n", x.Fix)
	}
}

// authLabel words a destination's auth for the first line of a check: ""
// for NTLM, what MFPs send.
func authLabel(a scanwarden.Auth) string {
	if a == "" || a == scanwarden.AuthNTLM {
		return ""
	}
	return ", auth " + string(a)
}
