package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
)

// receiverPrepare is the root side of the installed layout
// (scanwarden-smbd.service's ExecStartPre= and ExecReload=): it renders
// smb.conf from the root-owned config and the daemon's allowlist (data,
// validated), in root's own folder, and sets the MFP account.
func receiverPrepare(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, receiverUsage)
	configFile := c.fs.String("config", "", "the daemon's config (root's own): data_dir and [receiver] (required)")
	owner := c.fs.String("user", "scanwarden", "the daemon's Unix user: owner of the allowlist file, the share's force user, the group that may read smbd's log")
	pos, code, ok := c.parse(args, -1, "")
	if !ok {
		return code
	}
	if len(pos) != 0 || *configFile == "" {
		return c.fail(errors.New("want --config FILE and no argument"))
	}
	fail := c.fail
	cfg, err := config.Load(*configFile)
	if err != nil {
		return fail(err)
	}
	rc := cfg.Receiver
	if !rc.Enabled || !rc.ExternalSMBD {
		fmt.Fprintf(env.stdout, "receiver not enabled with external_smbd in %s: nothing to prepare\n", *configFile)
		return exitOK
	}
	dir, err := store.DataDir(cfg.DataDir, env.getenv, store.Local)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return fail(err)
	}
	ip, port, err := parseListen(rc.Listen)
	if err != nil {
		return fail(err)
	}
	// the networks the daemon may name: [receiver] allow and this box's own
	nets := samba.LocalNetworks().Nets
	for _, a := range rc.Allow {
		p, err := samba.ParseAllowEntry(a)
		if err != nil {
			return fail(fmt.Errorf("receiver.allow %q: %w", a, err))
		}
		nets = append(nets, p)
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	res, err := samba.PrepareShare(ctx, samba.ShareSetup{
		Config: samba.Config{Dir: rc.SmbdDir, Inbox: receiver.Inbox(receiverDir(dir)), Listen: ip, Port: port, Share: rc.Share,
			Accounts: []samba.Account{{Name: rc.Account, Password: rc.Password}}, SMB1: rc.SMB1},
		AllowFile: samba.AllowFile(receiverDir(dir)),
		Owner:     *owner,
		Networks:  nets,
	}, log)
	if err != nil {
		return fail(err)
	}
	if res.Changed {
		fmt.Fprintf(env.stdout, "%s written: share %s on %s, allow %s\n", res.Conf, rc.Share, rc.Listen, prefixList(res.Allow))
	}
	return exitOK
}

// dropTime leaves the time out of a log line (the journal stamps it).
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func prefixList(ps []netip.Prefix) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(out, " ")
}
