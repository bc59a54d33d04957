package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/scanwarden/scanwarden/installed"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
)

// runManPage prints scanwarden(8) (`help --man`) or scanwarden.toml(5)
// (`help --man-config`) as roff; scripts/package installs both.
func runManPage(ctx context.Context, env environ, which string) int {
	var err error
	switch which {
	case "--man":
		err = writeCLIMan(ctx, env, env.stdout)
	case "--man-config":
		err = config.WriteMan(env.stdout, scanwarden.BuildInfo().Version)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "scanwarden help %s: %v\n", which, err)
		return exitUsage
	}
	return exitOK
}

// roffText escapes text for roff: backslashes, and a leading . or '.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// roffInline is roffText for a word within a line.
func roffInline(s string) string { return strings.TrimSuffix(roffText(s), "\n") }

// manFlag is one flag as the flag package prints it.
type manFlag struct {
	name, arg, usage string
}

// helpOf runs "scanwarden PATH -h" and splits its output into the text
// before the flag list and the flags (flag.PrintDefaults' form: "  -name
// type" then the usage indented by a tab).
func helpOf(ctx context.Context, env environ, path []string) (text string, flags []manFlag) {
	var out bytes.Buffer
	sub := environ{stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: func(string) string { return "" }}
	run(ctx, append(append([]string(nil), path...), "-h"), sub.stdin, sub.stdout, sub.stderr)
	var textLines []string
	inFlags := false
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --"):
			inFlags = true
			f := strings.Fields(strings.TrimPrefix(line, "  -"))
			mf := manFlag{name: f[0]}
			if len(f) > 1 {
				mf.arg = f[1]
			}
			// A short usage may follow on the same line after a tab.
			if _, after, ok := strings.Cut(line, "\t"); ok {
				mf.usage = strings.TrimSpace(after)
			}
			flags = append(flags, mf)
		case inFlags && strings.HasPrefix(line, "    \t") && len(flags) > 0:
			u := &flags[len(flags)-1].usage
			*u = strings.TrimSpace(*u + " " + strings.TrimSpace(line))
		case !inFlags:
			textLines = append(textLines, line)
		}
	}
	text = strings.TrimSpace(strings.Join(textLines, "\n"))
	text = strings.TrimSuffix(text, "flags:")
	return strings.TrimSpace(text), flags
}

func writeCLIMan(ctx context.Context, env environ, w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH SCANWARDEN 8 \"\" \"scanwarden %s\" \"System Administration\"\n", roffEscapeQuoted(scanwarden.BuildInfo().Version))
	b.WriteString(".SH NAME\nscanwarden \\- find out why a Kyocera MFP cannot scan to its SMB folder, and guard it\n")
	type help struct {
		text  string
		flags []manFlag
	}
	helps := make([]help, len(manCommands))
	b.WriteString(".SH SYNOPSIS\n")
	for i, path := range manCommands {
		helps[i].text, helps[i].flags = helpOf(ctx, env, path)
		fmt.Fprintf(&b, ".B scanwarden %s\n", roffInline(strings.Join(path, " ")))
		if len(helps[i].flags) > 0 {
			b.WriteString(".RI [ options ]\n")
		}
		b.WriteString(".br\n")
	}
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString("scanwarden replays a scan destination's SMB logon exactly as the MFP stores it, layer by layer, and says what is wrong " +
		"and what to change where; as a daemon (\\fBserve\\fR) it checks every registered destination on a schedule, watches the MFPs " +
		"over SNMP, keeps incidents, notifies, runs a fallback scan share and serves a web page. The configuration file is described in " +
		"\\fBscanwarden.toml\\fR(5). Each command below has its own section; \\fBscanwarden help\\fR \\fICOMMAND\\fR prints the same.\n")
	b.WriteString(".SH COMMANDS\n")
	for i, path := range manCommands {
		text, flags := helps[i].text, helps[i].flags
		fmt.Fprintf(&b, ".SS scanwarden %s\n", strings.Join(path, " "))
		b.WriteString(roffHelp(text))
		if len(flags) > 0 {
			b.WriteString(".PP\nOptions:\n")
		}
		for _, f := range flags {
			b.WriteString(".TP\n.B \\-\\-" + roffInline(f.name))
			if f.arg != "" {
				b.WriteString(" \\fI" + roffInline(f.arg) + "\\fR")
			}
			b.WriteString("\n" + roffText(f.usage))
		}
	}
	b.WriteString(".SH EXIT STATUS\n.TP\n.B 0\nthe diagnosis is ok, or the command did what was asked.\n" +
		".TP\n.B 1\na finding: the destination fails, a peer did not answer, a destination fails in \\fBstatus\\fR.\n" +
		".TP\n.B 2\nthe command could not run: bad arguments, setup.\n")
	b.WriteString(".SH ENVIRONMENT\n.TP\n.B SCANWARDEN_DATA_DIR\nthe data directory when \\-\\-data\\-dir is not given.\n" +
		".TP\n.B SCANWARDEN_KEY_FILE\nthe sealing key's file when \\-\\-key\\-file is not given.\n" +
		".TP\n.B SCANWARDEN_PASSWORD\na destination's password when no \\-\\-password\\-file is given.\n")
	b.WriteString(".SH FILES\n.TP\n.I " + installed.ConfigFile + "\nthe installed configuration (\\fBscanwarden.toml\\fR(5)).\n" +
		".TP\n.I " + installed.DataDir + "\nthe installed data directory: database, the fallback share's inbox.\n" +
		".TP\n.I " + installed.KeyFile + "\nthe key that seals the stored secrets; back it up with the data.\n")
	b.WriteString(".SH SEE ALSO\n\\fBscanwarden.toml\\fR(5), \\fBsmbd\\fR(8), \\fBsystemctl\\fR(1)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// roffHelp turns a command's help text into man page paragraphs: its usage
// lines as synopsis lines that wrap at the page's width, each paragraph
// filled, indented blocks (examples, tables) kept as they are but indented.
func roffHelp(text string) string {
	var b strings.Builder
	paras := strings.Split(strings.ReplaceAll(text, "\r", ""), "\n\n")
	for _, para := range paras {
		lines := strings.Split(strings.Trim(para, "\n"), "\n")
		if len(lines) == 0 || strings.TrimSpace(para) == "" {
			continue
		}
		if first := strings.TrimSpace(lines[0]); strings.HasPrefix(first, "usage:") {
			lines[0] = strings.TrimSpace(strings.TrimPrefix(first, "usage:"))
			for _, l := range lines {
				l = strings.TrimSpace(l)
				if l == "" {
					continue
				}
				form, note, _ := strings.Cut(l, "   ")
				b.WriteString(".PP\n.B " + roffInline(strings.TrimSpace(form)) + "\n")
				if note = strings.TrimSpace(note); note != "" {
					b.WriteString(roffText(note))
				}
			}
			continue
		}
		var filled, kept []string
		flush := func() {
			if len(filled) > 0 {
				b.WriteString(".PP\n" + roffText(strings.Join(filled, " ")))
				filled = nil
			}
			if len(kept) > 0 {
				b.WriteString(".RS\n.nf\n" + roffText(strings.Join(kept, "\n")) + ".fi\n.RE\n")
				kept = nil
			}
		}
		for _, l := range lines {
			if strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t") {
				if len(filled) > 0 {
					flush()
				}
				kept = append(kept, strings.TrimSpace(l))
				continue
			}
			if len(kept) > 0 {
				flush()
			}
			filled = append(filled, strings.TrimSpace(l))
		}
		flush()
	}
	return b.String()
}

// roffEscapeQuoted makes s safe inside a quoted .TH argument.
func roffEscapeQuoted(s string) string {
	return strings.NewReplacer(`"`, `\(dq`, `\`, `\e`).Replace(s)
}
