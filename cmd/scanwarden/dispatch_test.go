package main

import (
	"strings"
	"testing"
)

// TestGroupsAnswerAlike: every group of verbs, whether it has one verb
// ("import addressbook") or several, answers the same way: no verb prints
// its usage on stderr (exit 2), an unknown verb is named before it (exit
// 2), and help, -h and --help print it on stdout (exit 0). The one-verb
// groups had a dispatcher of their own that named no unknown verb and took
// help for a usage error.
func TestGroupsAnswerAlike(t *testing.T) {
	var groups [][]string
	var walk func(path []string, cmds []command)
	walk = func(path []string, cmds []command) {
		for _, c := range cmds {
			p := append(append([]string(nil), path...), c.name)
			if c.run == nil {
				groups = append(groups, p)
				walk(p, c.verbs)
			}
		}
	}
	walk(nil, commands)
	if len(groups) < 10 {
		t.Fatalf("only %d groups: %v", len(groups), groups)
	}
	for _, g := range groups {
		name := strings.Join(g, " ")
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, nil, "", g...)
			if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "usage:") {
				t.Errorf("no verb: %d %q %q", r.code, r.stdout, r.stderr)
			}
			r = runCLI(t, nil, "", append(g, "nosuchverb")...)
			want := "scanwarden " + name + ": unknown subcommand \"nosuchverb\"\n\n"
			if r.code != exitUsage || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "usage:") {
				t.Errorf("unknown verb: %d %q", r.code, r.stderr)
			}
			for _, h := range []string{"help", "-h", "--help"} {
				r = runCLI(t, nil, "", append(g, h)...)
				if r.code != exitOK || r.stderr != "" || !strings.Contains(r.stdout, "usage:") {
					t.Errorf("%s: %d %q %q", h, r.code, r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestHelpFromTable: the help lists every top-level command of the table
// in its order, each form in one column, then help's own lines.
func TestHelpFromTable(t *testing.T) {
	var forms []string
	for _, c := range commands {
		if len(c.help) == 0 {
			t.Errorf("%s has no line in the help", c.name)
		}
		for _, l := range c.help {
			forms = append(forms, l.form)
		}
	}
	for _, l := range helpLines {
		forms = append(forms, l.form)
	}
	i := 0
	for _, line := range strings.Split(usage, "\n") {
		if !strings.HasPrefix(line, "  scanwarden ") {
			continue
		}
		if i >= len(forms) || !strings.HasPrefix(line, "  scanwarden "+forms[i]+" ") {
			t.Fatalf("line %d %q, want form %d of %v", i, line, i, forms)
		}
		if at := len("  scanwarden ") + 55; len(forms[i]) <= 54 && (line[at-1] != ' ' || line[at] == ' ') {
			t.Errorf("%q: what it does does not start in column %d", line, at)
		}
		i++
	}
	if i != len(forms) {
		t.Errorf("%d lines for %d forms", i, len(forms))
	}
}
