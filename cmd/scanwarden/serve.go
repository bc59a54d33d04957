package main

import (
	"context"
	"fmt"

	"github.com/scanwarden/scanwarden/installed"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/store"
)

const serveUsage = `usage: scanwarden serve [--config FILE]

Runs the appliance: checks every registered destination on an interval,
watches the devices over SNMP (poll, traps, job-log e-mail), checks a
destination at once when its device reports a send failure, keeps incidents
and notifies (webhook, e-mail), and serves the web page, the API and
/metrics. Without a config file every key has its default: web on
127.0.0.1:8080, data in $SCANWARDEN_DATA_DIR, else ` + installed.DataDir + ` on an
installed box, else ./scanwarden-data (made when missing). SIGHUP reloads
the config (a bad file keeps the running one); SIGTERM drains running
checks and exits within 10 s.

One serve per data dir: it holds an flock on DATA_DIR/serve.lock while it
runs; a second one exits at once naming the first's pid and listen address.
A listen address (listen, and [snmp] trap_listen and smtp_listen when set)
that cannot be bound ends serve at start, naming the process that has it
when this user can see it (else doctor, as root, does).

Exit status: 0 stopped cleanly, 2 the config or the data dir is unusable,
another serve holds the data dir, or a listen address cannot be bound.

flags:
`

func runServe(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, serveUsage, withKeyFile)
	configFile := c.fs.String("config", "", "TOML config file (default: none, every key at its default)")
	checkOnly := c.fs.Bool("check-config", false, "read and validate the config, print it is fine, and exit")
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	cfg, err := config.Load(*configFile)
	if err != nil {
		return c.fail(err)
	}
	if *checkOnly {
		dir, err := store.DataDir(cfg.DataDir, env.getenv, store.Local)
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(env.stdout, "config ok: data_dir %s, listen %s\n", dir, cfg.Listen)
		return exitOK
	}
	m := &daemon.Main{Config: &cfg, Stderr: env.stderr, Getenv: env.getenv, KeyFile: c.data.keyFile}
	if err := m.Run(ctx); err != nil {
		return c.failSafe(err)
	}
	return exitOK
}
