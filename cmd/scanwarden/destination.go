package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
)

const destinationUsage = `usage:
  scanwarden destination add NAME //HOST[:PORT]/SHARE[/PATH] --user USER (--password-file FILE | --no-password)
                             [--device DEVICE] [--workstation NAME] [--auth ntlm|kerberos|auto]
  scanwarden destination list [--device DEVICE] [--json]
  scanwarden destination show NAME [--json]
  scanwarden destination remove NAME
  scanwarden destination bridge [--off] NAME
  (each takes --data-dir DIR, --key-file FILE and --config FILE)

The registry's scan destinations, as the MFP stores them. add stores (or
replaces) one by hand: NAME is 1-64 of letters, digits, . _ - ; the password
comes from --password-file FILE ("-" for stdin) or SCANWARDEN_PASSWORD and is
sealed at rest; --user '' is an empty login name (guest), --no-password an
empty password. list and show never print a password; show adds the last
check's report. "scanwarden check --destination NAME" replays one.

bridge makes a destination a standing route through the fallback share: the
MFP scans to the destination's folder there (export addressbook --bridged
points it there) and scanwarden delivers with its own client (SMB 3.1.1,
signing, encryption, Kerberos), verified — for a server whose demands the
MFP cannot meet while scanwarden can (a check offers it). Its checks are
then scanwarden's own, and its health the bridge's: the share serving, the
own check of the real folder, the last delivery, the oldest waiting scan.
--off ends it.

--config is the config serve runs on (default the installed one): its
data_dir, allow_link_local (add) and [receiver] bridge_stuck_after, by
which list and show judge a bridge.

flags:
`

func destinationAdd(ctx context.Context, c *subcommand, args []string) int {
	var user string
	userSet := false
	c.fs.Func("user", "login user name exactly as stored on the MFP (user, DOMAIN\\user, user@upn, .\\user; '' for none)", func(v string) error {
		user, userSet = v, true
		return nil
	})
	passwordFile := c.fs.String("password-file", "", "file holding the login password (first line; - for stdin); else SCANWARDEN_PASSWORD")
	noPassword := c.fs.Bool("no-password", false, "the MFP stores an empty password")
	device := c.fs.String("device", "", "the device (MFP) this destination belongs to")
	workstation := c.fs.String("workstation", "", "NetBIOS name to replay with (default: the device's)")
	authFlag := c.fs.String("auth", "ntlm", "how the MFP logs on: ntlm (what MFPs send), kerberos (a Kerberos-capable MFP) or auto (Kerberos, then NTLM)")
	pos, code, ok := c.parse(args, 2, "want NAME and //HOST[:PORT]/SHARE[/PATH]")
	if !ok {
		return code
	}
	if !userSet {
		return c.fail(errors.New("give --user (--user '' for an empty login name)"))
	}
	t, err := scanwarden.ParseDestination(pos[1])
	if err != nil {
		return c.fail(err)
	}
	auth, err := scanwarden.ParseAuth(*authFlag)
	if err != nil {
		return c.fail(fmt.Errorf("--%w", err))
	}
	var pw scanwarden.Secret
	switch {
	case *noPassword && *passwordFile != "":
		return c.fail(errors.New("--no-password and --password-file exclude each other"))
	case !*noPassword:
		if pw, err = readSecret(c.env, *passwordFile, "--password-file", passwordEnv); err != nil {
			return c.fail(fmt.Errorf("no password: %w (or --no-password)", err))
		}
	}
	d := registry.Destination{Name: pos[0], Host: t.Host, Port: t.Port, Share: t.Share, Path: t.Path, User: user,
		Password: pw, Device: *device, Workstation: *workstation, Auth: auth, Source: registry.SourceAdded}
	if err := d.Validate(); err != nil {
		return c.fail(err)
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		st.AllowLinkLocal(linkLocalAllowed(&c.data))
		if err := st.Destinations().PutDestination(ctx, d); err != nil {
			return c.fail(err)
		}
		humanf(c.env.stdout, "stored %s: %s as %s\n", d.Name, destString(d.Target(nil)), userLabel(d.User))
		return exitOK
	})
}

func destinationList(ctx context.Context, c *subcommand, args []string) int {
	device := c.fs.String("device", "", "only this device's destinations")
	asJSON := c.fs.Bool("json", false, "print as JSON")
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	return c.readStore(ctx, true, func(st *store.Store) int {
		ds, err := st.Destinations().Destinations(ctx, *device)
		if err != nil {
			return c.fail(err)
		}
		out := []destinationJSON{}
		share, stuck := lastShareCheck(c), bridgeStuckAfter(&c.data)
		for _, d := range ds {
			last, err := latestReport(ctx, st, d.Name)
			if err != nil {
				return c.fail(err)
			}
			j := fullDestJSON(d, last)
			if err := withBridge(ctx, st, &j, d, share, stuck); err != nil {
				return c.fail(err)
			}
			out = append(out, j)
		}
		if *asJSON {
			return c.printJSON(struct {
				Destinations []destinationJSON `json:"destinations"`
			}{out})
		}
		if len(out) == 0 {
			fmt.Fprintln(c.env.stdout, "no destinations (scanwarden import addressbook, or destination add)")
		}
		for i, j := range out {
			last := "never checked"
			if j.LastCheck != nil {
				last = fmt.Sprintf("%s %s", j.LastCheck.Cause, j.LastCheck.At.Local().Format("2006-01-02 15:04"))
			}
			if j.PasswordUnreadable != "" {
				last += " — " + registry.PasswordUnreadableMark
			}
			if j.Bridge != nil {
				last += " — " + j.Bridge.Line(time.Now())
			}
			humanf(c.env.stdout, "%-24s %-12s %-40s %-28s %s\n", j.Name, orDash(j.Device), destString(ds[i].Target(nil)), userLabel(j.User), last)
		}
		return exitOK
	})
}

func destinationShow(ctx context.Context, c *subcommand, args []string) int {
	asJSON := c.fs.Bool("json", false, "print as JSON")
	pos, code, ok := c.parse(args, 1, "want one NAME")
	if !ok {
		return code
	}
	return c.readStore(ctx, true, func(st *store.Store) int {
		r, err := st.Destinations().Target(ctx, pos[0])
		if errors.Is(err, store.ErrNotFound) {
			return c.missing("destination", pos[0])
		}
		if err != nil {
			return c.fail(err)
		}
		d := r.Destination
		last, err := latestReport(ctx, st, d.Name)
		if err != nil {
			return c.fail(err)
		}
		j := fullDestJSON(d, last)
		if err := withBridge(ctx, st, &j, d, lastShareCheck(c), bridgeStuckAfter(&c.data)); err != nil {
			return c.fail(err)
		}
		ws := r.Target.Info().Workstation
		if *asJSON {
			out := struct {
				destinationJSON
				ReplayWorkstation string          `json:"replay_workstation"`
				LastReport        json.RawMessage `json:"last_report,omitempty"`
			}{destinationJSON: j, ReplayWorkstation: ws}
			if last != nil {
				out.LastReport = last.JSON
			}
			return c.printJSON(out)
		}
		w := c.env.stdout
		printDestination(w, j, ws)
		if last == nil {
			fmt.Fprintln(w, "last check    never (scanwarden check --destination "+d.Name+")")
			return exitOK
		}
		humanf(w, "last check    %s\n", last.At.Local().Format("2006-01-02 15:04:05"))
		for _, s := range last.Report.Steps {
			printStep(w, s)
		}
		printVerdict(w, last.Report)
		return exitOK
	})
}

func destinationRemove(ctx context.Context, c *subcommand, args []string) int {
	pos, code, ok := c.parse(args, 1, "want one NAME")
	if !ok {
		return code
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		if err := st.Destinations().RemoveDestination(ctx, pos[0]); errors.Is(err, store.ErrNotFound) {
			return c.missing("destination", pos[0])
		} else if err != nil {
			return c.fail(err)
		}
		humanf(c.env.stdout, "removed %s\n", pos[0])
		return exitOK
	})
}

// latestReport is the destination's last check, nil when never checked.
func latestReport(ctx context.Context, st *store.Store, name string) (*registry.Report, error) {
	r, ok, err := st.Reports().LatestReport(ctx, name)
	if err != nil || !ok {
		return nil, err
	}
	return &r, nil
}

func printDestination(w io.Writer, j destinationJSON, ws string) {
	humanf(w, "name          %s\n", j.Name)
	humanf(w, "destination   %s\n", destString(scanwarden.Target{Host: j.Host, Port: j.Port, Share: j.Share, Path: j.Path}))
	humanf(w, "user          %s\n", userLabel(j.User))
	if j.PasswordUnreadable != "" {
		humanf(w, "password      none: %s (%s)\n", registry.PasswordUnreadableMark, j.PasswordUnreadable)
	} else {
		humanf(w, "password      (sealed)\n")
	}
	if j.Device != "" {
		humanf(w, "device        %s\n", j.Device)
	}
	humanf(w, "workstation   %s\n", ws)
	humanf(w, "auth          %s\n", j.Auth)
	humanf(w, "source        %s\n", j.Source)
	if j.AddressBookID != "" {
		humanf(w, "address book  Id %s, \"%s\"\n", j.AddressBookID, j.DisplayName)
	}
	humanf(w, "folder        %s\n", j.Folder)
	if j.Bridge != nil {
		humanf(w, "bridge        %s\n", j.Bridge.Line(time.Now()))
	}
}
