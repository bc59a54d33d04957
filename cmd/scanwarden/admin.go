package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/internal/safefile"
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

// newAdminCommand is an admin command: --data-dir (the daemon's; no key:
// nothing it touches is sealed).
func newAdminCommand(env environ, name string) *subcommand {
	return newCommand(env, name, adminUsage, withDataDir)
}

// auditCLI records what an admin command did, as the CLI's.
func auditCLI(ctx context.Context, st *store.Store, action, target string) {
	web.AuditCLI(ctx, st.Auth(), time.Now(), action, target)
}

func adminSetPassword(ctx context.Context, env environ, name string, args []string) int {
	c := newAdminCommand(env, name)
	pwFile := c.fs.String("password-file", "", `file whose first line is the new password ("-": stdin)`)
	revoke := c.fs.Bool("revoke-tokens", true, "also revoke every API token")
	if _, code, ok := c.parse(args, 0, "want 0 argument(s)"); !ok {
		return code
	}
	if *pwFile == "" {
		return c.fail(errors.New("give --password-file FILE (\"-\" for stdin)"))
	}
	dir, err := c.data.dir(env)
	if err != nil {
		return c.fail(err)
	}
	sec, err := readSecretFile(env.stdin, *pwFile, "--password-file")
	if err != nil {
		return c.fail(err)
	}
	return c.withStore(ctx, false, func(st *store.Store) int {
		n, err := web.SetPassword(ctx, st.Auth(), sec.Reveal(), *revoke)
		if err != nil {
			return c.fail(err)
		}
		auditCLI(ctx, st, "password.set", "admin")
		daemon.RemoveSetupLink(dir)
		if *revoke {
			fmt.Fprintf(env.stdout, "The admin password is set; every web session has ended and %d API token(s) are revoked.\n", n)
		} else {
			fmt.Fprintln(env.stdout, "The admin password is set; every web session has ended (the API tokens are kept).")
		}
		return exitOK
	})
}

func adminSetupLink(ctx context.Context, env environ, name string, args []string) int {
	c := newAdminCommand(env, name)
	if _, code, ok := c.parse(args, 0, "want 0 argument(s)"); !ok {
		return code
	}
	dir, err := c.data.dir(env)
	if err != nil {
		return c.fail(err)
	}
	return printSetupLink(env, dir)
}

func adminTokenCreate(ctx context.Context, env environ, name string, args []string) int {
	c := newAdminCommand(env, name)
	scope := c.fs.String("scope", "read", "what the token may do: metrics, read or admin")
	pos, code, ok := c.parse(args, 1, "want 1 argument(s)")
	if !ok {
		return code
	}
	return c.withStore(ctx, false, func(st *store.Store) int {
		tok, err := web.CreateToken(ctx, st.Auth(), pos[0], *scope, time.Now())
		if err != nil {
			return c.fail(err)
		}
		auditCLI(ctx, st, "token.create", pos[0])
		fmt.Fprintf(env.stderr, "API token %q, scope %s (shown once; only its hash is kept):\n", pos[0], *scope)
		fmt.Fprintln(env.stdout, tok)
		return exitOK
	})
}

func adminTokenList(ctx context.Context, env environ, name string, args []string) int {
	c := newAdminCommand(env, name)
	if _, code, ok := c.parse(args, 0, "want 0 argument(s)"); !ok {
		return code
	}
	return c.readStore(ctx, false, func(st *store.Store) int {
		toks, err := st.Auth().Tokens(ctx)
		if err != nil {
			return c.fail(err)
		}
		for _, t := range toks {
			used := "never used"
			if !t.LastUsed.IsZero() {
				used = "last used " + t.LastUsed.Local().Format(time.DateTime)
			}
			fmt.Fprintf(env.stdout, "%s\tscope %s\tmade %s\t%s\n", t.Name, t.Scope, t.Created.Local().Format(time.DateTime), used)
		}
		return exitOK
	})
}

func adminTokenRevoke(ctx context.Context, env environ, name string, args []string) int {
	c := newAdminCommand(env, name)
	pos, code, ok := c.parse(args, 1, "want 1 argument(s)")
	if !ok {
		return code
	}
	return c.withStore(ctx, false, func(st *store.Store) int {
		if err := st.Auth().DeleteToken(ctx, pos[0]); err != nil {
			return c.fail(err)
		}
		auditCLI(ctx, st, "token.delete", pos[0])
		fmt.Fprintf(env.stdout, "Token %q revoked.\n", pos[0])
		return exitOK
	})
}

// printSetupLink prints the setup-link file the daemon wrote (the store is
// not opened: run as root, that would leave root-owned files in DIR). The
// file is the daemon's: read as such (safefile), its lines printed with
// control characters escaped.
func printSetupLink(env environ, dir string) int {
	file := filepath.Join(dir, daemon.SetupLinkName)
	b, err := safefile.Read(file, 64<<10)
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
	for _, l := range strings.SplitAfter(string(b), "\n") {
		text, nl := strings.CutSuffix(l, "\n")
		fmt.Fprint(env.stdout, terminalSafe(text))
		if nl {
			fmt.Fprintln(env.stdout)
		}
	}
	return exitOK
}
