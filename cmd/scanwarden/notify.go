package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/config"
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

func notifyTest(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, notifyUsage)
	configFile := c.fs.String("config", "", "serve's TOML config file")
	channel := c.fs.String("channel", "", "only this channel: webhook or mail")
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	if *channel != "" && *channel != "webhook" && *channel != "mail" {
		return c.fail(fmt.Errorf("--channel %q: webhook or mail", *channel))
	}
	picked, err := notifyChannels(*configFile, *channel)
	if err != nil {
		return c.fail(err)
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

// notifyChannels are serve's senders from the config file, or only the
// channel named.
func notifyChannels(configFile, channel string) ([]notify.Sender, error) {
	cfg, err := config.Load(configFile)
	if err != nil {
		return nil, err
	}
	senders, errs := cfg.Notify.Senders()
	for ch, err := range errs {
		if channel == "" || channel == ch {
			return nil, fmt.Errorf("%s: %w", ch, err)
		}
	}
	var picked []notify.Sender
	for _, s := range senders {
		if channel == "" || s.Channel() == channel {
			picked = append(picked, s)
		}
	}
	if len(picked) == 0 {
		return nil, errors.New("no channel configured ([notify] webhook_url, or smtp_host with smtp_from and mail_to)")
	}
	return picked, nil
}
