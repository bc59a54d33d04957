package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/installed"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
)

func receiverStatus(ctx context.Context, env environ, name string, args []string) int {
	c := newReceiverCommand(env, name)
	asJSON := c.fs.Bool("json", false, "print JSON")
	configFile := c.fs.String("config", "", "the daemon's config: the MFP account's password_file (default "+installed.ConfigFile+" when this user can read it) and data_dir")
	passwordFile := c.fs.String("password-file", "", "the MFP account's password, to probe the share as the MFPs log on (- for stdin; default $SCANWARDEN_RECEIVER_PASSWORD)")
	if pos, code, ok := c.parse(args, -1, ""); !ok {
		return code
	} else if len(pos) != 0 {
		return c.fail(fmt.Errorf("unexpected argument %s", pos[0]))
	}
	pw, account, note, err := statusPassword(env, *configFile, *passwordFile, &c.data)
	if err != nil {
		return c.fail(err)
	}
	dir, err := c.data.dir(env)
	if err != nil {
		return c.fail(err)
	}
	var fresh *samba.ShareHealth
	if p, ok := receiver.ReadShareProbe(receiverDir(dir)); ok && !pw.IsZero() {
		if account != "" {
			p.Account.Name = account
		}
		p.Account.Password = pw
		h := samba.ProbeShare(ctx, p)
		fresh = &h
	}
	return c.readStore(ctx, false, func(st *store.Store) int {
		s, err := receiver.ReadStatus(ctx, receiverDir(dir), st.Scans(), fresh)
		if err != nil {
			return c.fail(err)
		}
		if *asJSON {
			c.printJSON(s)
		} else {
			printReceiverStatus(env.stdout, s, fresh != nil, note)
		}
		if s.Fault != "" {
			return exitFinding
		}
		return exitOK
	})
}

// statusPassword finds the MFP account's password for `receiver status`'s
// probe: --password-file, $SCANWARDEN_RECEIVER_PASSWORD, or the config's
// [receiver] (--config, else the installed config when readable; its
// data_dir too unless --data-dir is given). None: a zero secret and a note
// saying why (the running receiver's own probe is shown instead).
func statusPassword(env environ, configFile, passwordFile string, data *dataFlags) (pw scanwarden.Secret, account, note string, err error) {
	if passwordFile != "" {
		pw, err = readSecretFile(env.stdin, passwordFile, "--password-file")
		return pw, "", "", err
	}
	if v := env.getenv("SCANWARDEN_RECEIVER_PASSWORD"); v != "" {
		return scanwarden.NewSecret(v), "", "", nil
	}
	cfg, note, err := daemonConfigFile(configFile, data)
	switch {
	case err != nil || note != "":
		return pw, "", note, err
	case cfg == nil:
		return pw, "", "no MFP password given (--password-file or --config)", nil
	case cfg.Receiver.Password.IsZero():
		return pw, "", cfg.File + " names no [receiver] password_file", nil
	}
	return cfg.Receiver.Password, cfg.Receiver.Account, "", nil
}

// printReceiverStatus prints s for a terminal; every string in it may come
// from receiver.json, which the daemon writes: printed by humanf.
func printReceiverStatus(w io.Writer, s receiver.Status, probedHere bool, note string) {
	up := "down"
	if s.SmbdUp {
		up = fmt.Sprintf("up (pid %d)", s.SmbdPid)
	}
	smb1 := "off"
	if s.SMB1 {
		smb1 = "ON"
	}
	humanf(w, "smbd:      %s, \\\\%s\\%s port %d\n", up, s.Listen, s.Share, s.Port)
	switch h := s.ShareCheck; {
	case h == nil && s.Listen != "":
		humanf(w, "share:     not probed: %s, and the running receiver has not probed it yet\n", note)
	case h == nil:
	default:
		by := "by this command"
		if !probedHere {
			by = fmt.Sprintf("by the running receiver %s ago", time.Since(h.At).Round(time.Second))
			if note != "" {
				by += " (" + note + ")"
			}
		}
		if h.OK() {
			humanf(w, "share:     ok, %s (%s)\n", h.Detail, by)
			break
		}
		humanf(w, "share:     REFUSES THE MFPs (%s, %s): %s\n", string(h.Cause), by, h.Detail)
		if h.SmbdLog != "" {
			humanf(w, "           smbd's log: %s\n", h.SmbdLog)
		}
		humanf(w, "           fix: %s\n", h.Fix)
	}
	humanf(w, "SMB1:      %s\n", smb1)
	allow := "any address"
	if len(s.Allow) > 0 {
		allow = strings.Join(s.Allow, " ")
	}
	humanf(w, "allow:     %s\n", allow)
	humanf(w, "inbox:     %d file(s), %d bytes not yet taken in\n", s.Inbox, s.InboxBytes)
	humanf(w, "held:      %d scan(s), %d bytes waiting; %d incomplete, %d failed, %d delivered, %d refused (not a scan format: never delivered)\n",
		s.Counts[receiver.Held]+s.Counts[receiver.Failed]+s.Counts[receiver.Delivering], s.HeldBytes,
		s.Counts[receiver.Incomplete], s.Counts[receiver.Failed], s.Counts[receiver.Delivered], s.Counts[receiver.Refused])
	if s.OldestHeld != nil {
		humanf(w, "oldest:    %s (%s ago)\n", s.OldestHeld.Local().Format("2006-01-02 15:04:05"), time.Since(*s.OldestHeld).Round(time.Second))
	}
	if s.LastError != nil {
		humanf(w, "last delivery error: scan %d: %s\n", s.LastError.Scan, s.LastError.Error)
	}
	for _, x := range s.Warnings {
		humanf(w, "WARNING: %s\n", x)
	}
}
