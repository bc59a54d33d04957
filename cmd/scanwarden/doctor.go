package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/scanwarden/scanwarden/installed"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/doctor"
)

const doctorUsage = `usage: scanwarden doctor [--config FILE] [--key-file FILE] [--json] [--timeout 5s]

Checks this installation and changes nothing: the config is valid, the data
dir is writable by the daemon's user, the sealing key is there with mode 0600
and fits the data dir, Samba is installed (and its version), ports 445, 139,
162 and the web port are free or held by scanwarden, the daemon answers, and
when configured: Active Directory answers and binds, the clock agrees with
the DC's, each registered device answers SNMP. Every problem comes with its
fix. Run it as root on an installed box (it reads ` + installed.KeyFile + `
and sees which process holds a port).

Exit status: 0 nothing failed (warnings may be printed), 1 a check failed,
2 bad arguments.

flags:
`

func runDoctor(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, doctorUsage, withKeyFile)
	configFile := c.fs.String("config", "", "the daemon's config (default "+doctor.DefaultConfig+" when it exists)")
	asJSON := c.fs.Bool("json", false, "print the report as JSON")
	timeout := c.fs.Duration("timeout", 5*time.Second, "bound on each network check")
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	if *timeout <= 0 {
		return c.fail(errors.New("--timeout must be positive"))
	}
	rep := doctor.Run(ctx, doctor.Options{ConfigFile: *configFile, KeyFile: c.data.keyFile, Getenv: env.getenv, Timeout: *timeout})
	if *asJSON {
		c.printJSON(rep)
	} else {
		printDoctor(env, rep)
	}
	if rep.Result == doctor.Fail {
		return exitFinding
	}
	return exitOK
}

func printDoctor(env environ, rep doctor.Report) {
	width := 0
	for _, c := range rep.Checks {
		width = max(width, len(c.ID))
	}
	counts := map[doctor.Status]int{}
	for _, c := range rep.Checks {
		counts[c.Status]++
		humanf(env.stdout, "%-4s  %-*s  %s\n", strings.ToUpper(string(c.Status)), width, c.ID, c.Detail)
		if c.Fix != "" && c.Status != doctor.OK && c.Status != doctor.Skip {
			humanf(env.stdout, "      %-*s  fix: %s\n", width, "", c.Fix)
		}
	}
	fmt.Fprintf(env.stdout, "\n%s: %d ok, %d warning(s), %d failed, %d skipped\n",
		rep.Result, counts[doctor.OK], counts[doctor.Warn], counts[doctor.Fail], counts[doctor.Skip])
}
