package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

const adminUsage = `usage:
  scanwarden admin set-password [--data-dir DIR] --password-file FILE [--revoke-tokens=false]
                                                     set the web admin's password (argon2id); ends every session and
                                                     revokes every API token (--revoke-tokens=false keeps them)
  scanwarden admin setup-link [--data-dir DIR]      print the one-time setup link (and the certificate's fingerprint)
  scanwarden admin token create NAME [--scope metrics|read|admin] [--data-dir DIR]
                                                     make an API token (printed once, stored hashed); scope metrics
                                                     reads only /metrics, read (the default) the GET API and /metrics,
                                                     admin also runs checks
  scanwarden admin token list [--data-dir DIR]       list the API tokens with their scope and last use
  scanwarden admin token revoke NAME [--data-dir DIR]  revoke an API token

The password file's first line is the password ("-" reads stdin); it needs at least 10 characters.
--data-dir is the daemon's data directory (default: as every command finds it; see the README).
setup-link reads DIR/setup-link, which the daemon writes at each start while no admin password is set (mode 0600:
run it as root or as the daemon's user).
`

func runAdmin(ctx context.Context, env environ, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, adminUsage)
		return exitUsage
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "set-password", "setup-link":
	case "token":
		if len(rest) == 0 {
			fmt.Fprint(env.stderr, adminUsage)
			return exitUsage
		}
		sub, rest = "token "+rest[0], rest[1:]
		switch sub {
		case "token create", "token list", "token revoke":
		default:
			fmt.Fprintf(env.stderr, "scanwarden admin: unknown subcommand %q\n\n%s", sub, adminUsage)
			return exitUsage
		}
	case "-h", "--help", "help":
		fmt.Fprint(env.stdout, adminUsage)
		return exitOK
	default:
		fmt.Fprintf(env.stderr, "scanwarden admin: unknown subcommand %q\n\n%s", sub, adminUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("admin "+sub, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprint(env.stderr, adminUsage); fs.PrintDefaults() }
	dataDir := fs.String("data-dir", "", dataDirUsage)
	var pwFile, scope *string
	var revoke *bool
	switch sub {
	case "set-password":
		pwFile = fs.String("password-file", "", `file whose first line is the new password ("-": stdin)`)
		revoke = fs.Bool("revoke-tokens", true, "also revoke every API token")
	case "token create":
		scope = fs.String("scope", "read", "what the token may do: metrics, read or admin")
	}
	pos, err := parseInterspersed(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	wantPos := 1
	if sub == "set-password" || sub == "setup-link" || sub == "token list" {
		wantPos = 0
	}
	if err == nil && len(pos) != wantPos {
		err = fmt.Errorf("want %d argument(s), got %d", wantPos, len(pos))
	}
	if err == nil && pwFile != nil && *pwFile == "" {
		err = errors.New("give --password-file FILE (\"-\" for stdin)")
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "scanwarden admin %s: %v\n", sub, err)
		return exitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(env.stderr, "scanwarden admin %s: %v\n", sub, err)
		return exitUsage
	}
	dir, err := store.DataDir(*dataDir, env.getenv, store.UserStateDir)
	if err != nil {
		return fail(err)
	}
	if sub == "setup-link" {
		return printSetupLink(env, dir)
	}
	var pw string
	if pwFile != nil {
		sec, err := readSecretFile(env.stdin, *pwFile, "--password-file")
		if err != nil {
			return fail(err)
		}
		pw = sec.Reveal()
	}
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	audit := func(action, target string) {
		web.AuditCLI(ctx, st, time.Now(), action, target)
	}
	switch sub {
	case "set-password":
		n, err := web.SetPassword(ctx, st, pw, *revoke)
		if err != nil {
			return fail(err)
		}
		audit("password.set", "admin")
		daemon.RemoveSetupLink(dir)
		if *revoke {
			fmt.Fprintf(env.stdout, "The admin password is set; every web session has ended and %d API token(s) are revoked.\n", n)
		} else {
			fmt.Fprintln(env.stdout, "The admin password is set; every web session has ended (the API tokens are kept).")
		}
	case "token create":
		tok, err := web.CreateToken(ctx, st, pos[0], *scope, time.Now())
		if err != nil {
			return fail(err)
		}
		audit("token.create", pos[0])
		fmt.Fprintf(env.stderr, "API token %q, scope %s (shown once; only its hash is kept):\n", pos[0], *scope)
		fmt.Fprintln(env.stdout, tok)
	case "token list":
		toks, err := st.Tokens(ctx)
		if err != nil {
			return fail(err)
		}
		for _, t := range toks {
			used := "never used"
			if !t.LastUsed.IsZero() {
				used = "last used " + t.LastUsed.Local().Format(time.DateTime)
			}
			fmt.Fprintf(env.stdout, "%s\tscope %s\tmade %s\t%s\n", t.Name, t.Scope, t.Created.Local().Format(time.DateTime), used)
		}
	case "token revoke":
		if err := st.DeleteToken(ctx, pos[0]); err != nil {
			return fail(err)
		}
		audit("token.delete", pos[0])
		fmt.Fprintf(env.stdout, "Token %q revoked.\n", pos[0])
	}
	return exitOK
}

// printSetupLink prints the setup-link file the daemon wrote (the store is
// not opened: run as root, that would leave root-owned files in DIR).
func printSetupLink(env environ, dir string) int {
	file := filepath.Join(dir, daemon.SetupLinkName)
	b, err := os.ReadFile(file)
	switch {
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(env.stderr, "scanwarden admin setup-link: no %s: an admin password is set already (change it with `scanwarden admin set-password`), "+
			"or the daemon has not started since (it writes the link at each start while no password is set)\n", file)
		return exitUsage
	case errors.Is(err, os.ErrPermission):
		fmt.Fprintf(env.stderr, "scanwarden admin setup-link: %s is readable by root and the daemon's user only: run it with sudo\n", file)
		return exitUsage
	case err != nil:
		fmt.Fprintf(env.stderr, "scanwarden admin setup-link: %v\n", err)
		return exitUsage
	}
	env.stdout.Write(b)
	return exitOK
}
