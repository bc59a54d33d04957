package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/testlab"
)

// sourceFlags are the flag names this command's source registers
// (fs.String("name", …), fs.StringVar(&v, "name", …), …), read from the
// source itself, not from the page's generator.
func sourceFlags(t *testing.T) map[string]bool {
	t.Helper()
	files, _ := filepath.Glob("*.go")
	nameArg := map[string]int{"String": 0, "Bool": 0, "Int": 0, "Int64": 0, "Uint": 0, "Duration": 0, "Float64": 0,
		"Func": 0, "BoolFunc": 0, "Var": 1, "TextVar": 1, "StringVar": 1, "BoolVar": 1, "IntVar": 1, "Int64Var": 1,
		"DurationVar": 1, "UintVar": 1, "Float64Var": 1}
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			i, ok := nameArg[sel.Sel.Name]
			if !ok || len(call.Args) <= i+1 {
				return true
			}
			// The receiver is a flag set: fs, c.fs, f.fs, flags.
			recv := strings.ToLower(exprText(sel.X))
			if !strings.HasSuffix(recv, "fs") && !strings.Contains(recv, "flag") {
				return true
			}
			if lit, ok := call.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if name, err := strconv.Unquote(lit.Value); err == nil {
					out[name] = true
				}
			}
			return true
		})
	}
	return out
}

func exprText(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprText(x.X) + "." + x.Sel.Name
	}
	return ""
}

// TestManPages: scanwarden(8) holds every flag the source registers, under
// every command; scanwarden.toml(5) every config key; man renders both.
func TestManPages(t *testing.T) {
	r := runCLI(t, nil, "", "help", "--man")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, ".TH SCANWARDEN 8") {
		t.Fatalf("help --man: %d %s", r.code, r.stderr)
	}
	page := r.stdout
	flags := sourceFlags(t)
	if len(flags) < 40 {
		t.Fatalf("only %d flags found in the source", len(flags))
	}
	for name := range flags {
		if !strings.Contains(page, `.B \-\-`+strings.ReplaceAll(name, "-", `\-`)) {
			t.Errorf("flag --%s is not on scanwarden(8)", name)
		}
	}
	for _, path := range manCommands {
		if !strings.Contains(page, ".SS scanwarden "+strings.Join(path, " ")+"\n") {
			t.Errorf("command %v has no section", path)
		}
	}
	// A command path that is not one prints the command's usage error, not
	// its help: every listed path must be a real command.
	for _, path := range manCommands {
		text, _ := helpOf(t.Context(), environ{}, path)
		if strings.Contains(text, "unknown subcommand") || strings.Contains(text, "unknown command") {
			t.Errorf("%v: %s", path, text)
		}
	}
	for _, sec := range []string{".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH COMMANDS\n", ".SH EXIT STATUS\n", ".SH FILES\n", ".SH SEE ALSO\n"} {
		if !strings.Contains(page, sec) {
			t.Errorf("scanwarden(8) lacks %q", strings.TrimSpace(sec))
		}
	}
	r = runCLI(t, nil, "", "help", "--man-config")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, ".TH SCANWARDEN.TOML 5") {
		t.Fatalf("help --man-config: %d %s", r.code, r.stderr)
	}
	keys, err := config.Keys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.Contains(r.stdout, ".B "+strings.ReplaceAll(k.Key, "-", `\-`)+"\n") {
			t.Errorf("config key %s is not on scanwarden.toml(5)", k.Name())
		}
	}
	// man renders both without warnings (when man is installed).
	man, err := exec.LookPath("man")
	if err != nil {
		t.Log("man not installed: rendering not checked")
		return
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"scanwarden.8": page, "scanwarden.toml.5": r.stdout} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		cmd := exec.Command(man, "--warnings", "-l", p)
		cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=100", "LANG=C.UTF-8")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("man -l %s: %v\n%s", name, err, stderr.String())
			continue
		}
		if strings.Contains(stderr.String(), "warning") {
			t.Errorf("man -l %s warns:\n%s", name, grepLines(stderr.String(), "warning"))
		}
		if !strings.Contains(string(out), "scanwarden") || len(out) < 2000 {
			t.Errorf("man -l %s rendered %d bytes", name, len(out))
		}
	}
}

func grepLines(s, want string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, want) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestManPagesFit: both pages render at 80 columns without groff warnings.
func TestManPagesFit(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		testlab.Missing(t, "man(1) is not installed (testlab/deps installs man-db): "+err.Error())
	}
	for _, which := range []string{"--man", "--man-config"} {
		r := runCLI(t, nil, "", "help", which)
		if r.code != exitOK {
			t.Fatalf("help %s: %d %s", which, r.code, r.stderr)
		}
		manFits(t, "help "+which, r.stdout)
	}
}

// manFits renders a page as man(1) does at MANWIDTH=80 and wants no line
// wider than 80 columns and no warning from groff (what lintian's
// manpage checks run).
func manFits(t *testing.T, name, page string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "page")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("man", "--warnings", "-l", file)
	cmd.Env = append(os.Environ(), "MANWIDTH=80", "LC_ALL=C.UTF-8", "MANPAGER=cat", "PAGER=cat")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("man -l %s: %v %s", name, err, errb.String())
	}
	if w := strings.TrimSpace(errb.String()); w != "" {
		t.Errorf("groff warns about %s:\n%s", name, w)
	}
	wide := 0
	plain := regexp.MustCompile(".\b").ReplaceAllString(out.String(), "") // bold and underline as overstrike
	for _, line := range strings.Split(plain, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			if wide++; wide <= 5 {
				t.Errorf("%s: a line of %d columns at MANWIDTH=80: %q", name, n, line)
			}
		}
	}
}
