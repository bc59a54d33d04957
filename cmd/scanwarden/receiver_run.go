package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
)

// receiverRunArgs is a parsed "receiver run".
type receiverRunArgs struct {
	c                       *subcommand
	listen, share, account  string
	passwordFile            string
	configFile              string
	smb1, keep              bool
	retry, quiet, retention time.Duration
	allow                   []netip.Prefix
}

func receiverRun(ctx context.Context, env environ, name string, args []string) int {
	a, code, ok := parseReceiverRun(env, name, args)
	if !ok {
		return code
	}
	return a.run(ctx)
}

func parseReceiverRun(env environ, name string, args []string) (*receiverRunArgs, int, bool) {
	c := newReceiverCommand(env, name)
	a := &receiverRunArgs{c: c}
	fs := c.fs
	fs.StringVar(&a.listen, "listen", "", "the one address (and port, default 445) the share binds, e.g. 192.168.10.5 or 192.168.10.5:4445")
	fs.StringVar(&a.configFile, "config", "", forwardConfigUsage)
	fs.StringVar(&a.share, "share", samba.DefaultShare, "share name")
	fs.StringVar(&a.account, "account", samba.DefaultAccount, "the MFPs' login name on the share (a local account of scanwarden's smbd)")
	fs.StringVar(&a.passwordFile, "password-file", "", "file holding that account's password (first line; - for stdin; default $SCANWARDEN_RECEIVER_PASSWORD)")
	fs.BoolVar(&a.smb1, "smb1", false, "let SMB1/NTLMv1 firmware in (this share only; a standing security warning)")
	fs.DurationVar(&a.retry, "retry", receiver.DefaultForward.Retry, "first retry of a failed delivery (doubling up to 30m)")
	fs.DurationVar(&a.quiet, "quiet", receiver.DefaultWatch.Quiet, "a scan is complete after this long without a write (shortened once the MFP logs off)")
	fs.DurationVar(&a.retention, "retention", receiver.DefaultForward.Retention, "how long a delivered scan's local copy is kept")
	fs.BoolVar(&a.keep, "keep-smbd", false, "leave smbd running when this command stops")
	fs.Func("allow", "address or network (CIDR) that may connect to the share, e.g. the MFPs' 192.168.10.0/24 (repeatable; default any)", func(s string) error {
		p, err := samba.ParseAllowEntry(s)
		a.allow = append(a.allow, p)
		return err
	})
	pos, code, ok := c.parse(args, -1, "")
	switch {
	case !ok:
		return nil, code, false
	case len(pos) != 0:
		return nil, c.fail(fmt.Errorf("unexpected argument %s", pos[0])), false
	case a.listen == "":
		return nil, c.fail(errors.New("--listen IP[:PORT] is required (the share binds only that address)")), false
	case a.retry <= 0 || a.quiet <= 0 || a.retention < 0:
		return nil, c.fail(errors.New("--retry and --quiet must be positive, --retention 0 or more")), false
	}
	return a, 0, true
}

// config is the receiver's configuration from the flags, in dir.
func (a *receiverRunArgs) config(dir string) (receiver.Config, error) {
	ip, port, err := parseListen(a.listen)
	if err != nil {
		return receiver.Config{}, err
	}
	pw, err := readSecret(a.c.env, a.passwordFile, "--password-file", "SCANWARDEN_RECEIVER_PASSWORD")
	if err != nil {
		return receiver.Config{}, err
	}
	fwd := receiver.DefaultForward
	fwd.Retry, fwd.Retention = a.retry, a.retention
	fwd.MaxRetry = max(fwd.MaxRetry, a.retry)
	watch := receiver.DefaultWatch
	watch.Quiet = a.quiet
	return receiver.Config{DataDir: receiverDir(dir), Listen: ip, Port: port, Share: a.share,
		Accounts: []samba.Account{{Name: a.account, Password: pw}}, SMB1: a.smb1, Allow: a.allow, KeepSamba: a.keep,
		Watch: watch, Forward: fwd}, nil
}

// run runs the share until ctx ends.
func (a *receiverRunArgs) run(ctx context.Context) int {
	c, env := a.c, a.c.env
	daemonCfg, err := c.daemonConfig(a.configFile)
	if err != nil {
		return c.fail(err)
	}
	dir, err := c.data.dir(env)
	if err != nil {
		return c.fail(err)
	}
	cfg, err := a.config(dir)
	if err != nil {
		return c.fail(err)
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		r, err := receiver.New(cfg, st.Scans(), st.Destinations().Deliveries(), c.forwardRemote(ctx, daemonCfg, st), slog.New(slog.NewTextHandler(env.stderr, nil)))
		if err == nil {
			err = r.Open(ctx)
		}
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(env.stderr, "receiver: share \\\\%s\\%s on port %d (smbd pid %d), inbox %s\n", cfg.Listen, cfg.Share, cfg.Port, r.Samba().Pid(), receiver.Inbox(cfg.DataDir))
		if a.smb1 {
			fmt.Fprintln(env.stderr, "WARNING:", receiver.SMB1Warning)
		}
		<-ctx.Done()
		if err := r.Close(); err != nil {
			fmt.Fprintln(env.stderr, "scanwarden receiver run: stop:", err)
		}
		return exitOK
	})
}
