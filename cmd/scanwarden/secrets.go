package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
)

const secretsUsage = `usage: scanwarden secrets rotate [--data-dir DIR] [--key-file FILE]

Re-encrypts every stored secret (destination passwords, SNMP credentials)
under a new key, in one transaction, and replaces the key file. The old key
no longer opens anything: drop its copies (backups hold the old key's
secrets). A key handed over by systemd ($CREDENTIALS_DIRECTORY) is read-only:
rotate with --key-file pointing at the key's source, then reload the
credential.

flags:
`

func runSecrets(ctx context.Context, env environ, args []string) int {
	if len(args) == 0 || args[0] != "rotate" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(env.stdout, secretsUsage)
			return exitOK
		}
		fmt.Fprint(env.stderr, secretsUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("secrets rotate", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	df := registerDataFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, secretsUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if len(pos) != 0 {
		fmt.Fprintln(env.stderr, "scanwarden secrets rotate: takes no arguments")
		return exitUsage
	}
	st, err := df.open(ctx, env)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden secrets rotate:", err)
		return exitUsage
	}
	defer st.Close()
	oldID, newID, n, err := st.RotateKey(ctx)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden secrets rotate:", err, "(nothing changed)")
		return exitUsage
	}
	fmt.Fprintf(env.stdout, "re-encrypted %d secrets: key %s replaced by %s in %s\n", n, oldID, newID, st.Key().Path())
	return exitOK
}
