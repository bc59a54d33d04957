package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/notify"
)

const notifyUsage = `usage: scanwarden notify test [--config FILE] [--channel webhook|mail]

Sends a test notification on every channel the serve config turns on (or
only --channel): a webhook POST shaped like a real "incident.opened" (with
"test": true), and a mail. Says per channel what happened.

Exit status: 0 every channel delivered, 1 a channel failed, 2 bad
arguments, a bad config, or no channel configured.

flags:
`

func runNotify(ctx context.Context, env environ, args []string) int {
	if len(args) == 0 || args[0] != "test" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(env.stdout, notifyUsage)
			return exitOK
		}
		fmt.Fprint(env.stderr, notifyUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("notify test", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	configFile := fs.String("config", "", "serve's TOML config file")
	channel := fs.String("channel", "", "only this channel: webhook or mail")
	fs.Usage = func() {
		fmt.Fprint(env.stderr, notifyUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *channel != "" && *channel != "webhook" && *channel != "mail" {
		fmt.Fprintf(env.stderr, "scanwarden notify test: --channel %q: webhook or mail\n", *channel)
		return exitUsage
	}
	cfg, err := daemon.LoadConfig(*configFile)
	if err != nil {
		fmt.Fprintf(env.stderr, "scanwarden notify test: %v\n", err)
		return exitUsage
	}
	senders, errs := daemon.Senders(cfg)
	for ch, err := range errs {
		if *channel == "" || *channel == ch {
			fmt.Fprintf(env.stderr, "scanwarden notify test: %s: %v\n", ch, err)
			return exitUsage
		}
	}
	var picked []notify.Sender
	for _, s := range senders {
		if *channel == "" || s.Channel() == *channel {
			picked = append(picked, s)
		}
	}
	if len(picked) == 0 {
		fmt.Fprintln(env.stderr, "scanwarden notify test: no channel configured ([notify] webhook_url, or smtp_host with smtp_from and mail_to)")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	code := exitOK
	for _, o := range notify.New(picked...).Send(ctx, notify.TestMessage(time.Now())) {
		if o.Err != nil {
			humanf(env.stdout, "%s: failed after %d attempt(s): %s\n", o.Channel, o.Attempts, o.Err.Error())
			code = exitFinding
			continue
		}
		fmt.Fprintf(env.stdout, "%s: delivered (%d attempt(s))\n", o.Channel, o.Attempts)
	}
	return code
}
