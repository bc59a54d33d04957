package main

import (
	"context"
	"fmt"

	"github.com/scanwarden/scanwarden/store"
)

const secretsUsage = `usage: scanwarden secrets rotate [--data-dir DIR] [--key-file FILE]

Re-encrypts every stored secret (destination passwords, SNMP credentials,
the AD, webhook, mail and SNMP secrets saved from the settings page) under a
new key, in one transaction, and replaces the key file. A value that does
not open with the current key is named and nothing is changed. The old key
no longer opens anything: drop its copies (backups hold the old key's
secrets). A key handed over by systemd ($CREDENTIALS_DIRECTORY) is read-only:
rotate with --key-file pointing at the key's source. A running serve keeps
the old key until it is restarted (systemctl restart scanwarden, which also
hands it the new credential): until then it opens no stored secret and
refuses to store one.

flags:
`

func secretsRotate(ctx context.Context, env environ, name string, args []string) int {
	c := newSubcommand(env, name, secretsUsage)
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		oldID, newID, n, err := st.RotateKey(ctx)
		if err != nil {
			return c.fail(fmt.Errorf("%w (nothing changed)", err))
		}
		fmt.Fprintf(env.stdout, "re-encrypted %d secrets: key %s replaced by %s in %s\n", n, oldID, newID, st.Key().Path())
		return exitOK
	})
}
