package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/summary"
)

const statusUsage = `usage:
  scanwarden status [--json] [--data-dir DIR] [--key-file FILE] [--config FILE]

The overview's headline for the shell: first line one sentence of state
("All 3 destinations accept scans" / "1 destination failing: NAME — CAUSE
since 10:42, 4 scans held"), then the scans the fallback share holds and the
oldest open incident. Read from the data dir, beside a running serve; the
web page's "Check all now" (or POST /api/v1/check-all) checks everything
now. Bridges are judged by [receiver] bridge_stuck_after of the daemon's
config: pass --config FILE for a serve run on another config than the
installed one (its data_dir too, unless --data-dir is given). Exit status 1
while a destination fails, 0 otherwise.

flags:
`

func runStatus(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, statusUsage, withDataDir, withKeyFile, withConfig)
	asJSON := c.fs.Bool("json", false, "print the summary as JSON (GET /api/v1/summary's form)")
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	return c.readStore(ctx, true, func(st *store.Store) int {
		now := time.Now()
		sum, err := daemon.Summary(ctx, st, lastShareCheck(c), bridgeStuckAfter(&c.data), now)
		if err != nil {
			return c.fail(err)
		}
		code := exitOK
		if sum.State == summary.StateFailing {
			code = exitFinding
		}
		if *asJSON {
			if r := c.printJSON(sum); r != exitOK {
				return r
			}
			return code
		}
		humanf(env.stdout, "%s\n", sum.Sentence)
		held := fmt.Sprintf("%d scans held", sum.HeldScans)
		if sum.HeldScans == 1 {
			held = "1 scan held"
		}
		humanf(env.stdout, "%s by the fallback share\n", held)
		for _, g := range sum.Causes {
			humanf(env.stdout, "cause: %s: %s\n", g.Headline, strings.Join(g.Destinations, ", "))
		}
		for _, g := range sum.ComingUp {
			humanf(env.stdout, "coming up: %s\n", g.Text)
		}
		for _, b := range sum.Bridges {
			humanf(env.stdout, "bridge: %s — %s\n", b.Destination, b.Health.Line(now))
		}
		if o := sum.OldestIncident; o != nil {
			cause := ""
			if o.Cause != "" {
				cause = " (" + string(o.Cause) + ")"
			}
			humanf(env.stdout, "oldest open incident: #%d %s%s, opened %s\n", o.ID, o.Destination, cause, o.OpenedAt.Local().Format("2006-01-02 15:04"))
		} else {
			fmt.Fprintln(env.stdout, "no open incident")
		}
		return code
	})
}
