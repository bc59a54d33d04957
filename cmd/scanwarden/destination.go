package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

const destinationUsage = `usage:
  scanwarden destination add NAME //HOST[:PORT]/SHARE[/PATH] --user USER (--password-file FILE | --no-password)
                             [--device DEVICE] [--workstation NAME]
  scanwarden destination list [--device DEVICE] [--json]
  scanwarden destination show NAME [--json]
  scanwarden destination remove NAME
  (each takes --data-dir DIR and --key-file FILE)

The registry's scan destinations, as the MFP stores them. add stores (or
replaces) one by hand: NAME is 1-64 of letters, digits, . _ - ; the password
comes from --password-file FILE ("-" for stdin) or SCANWARDEN_PASSWORD and is
sealed at rest; --user '' is an empty login name (guest), --no-password an
empty password. list and show never print a password; show adds the last
check's report. "scanwarden check --destination NAME" replays one.

flags:
`

func runDestination(ctx context.Context, env environ, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, destinationUsage)
		return exitUsage
	}
	sub, rest := args[0], args[1:]
	fs := flag.NewFlagSet("destination "+sub, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, destinationUsage)
		fs.PrintDefaults()
	}
	df := registerDataFlags(fs)
	fail := func(err error) int {
		fmt.Fprintf(env.stderr, "scanwarden destination %s: %v\n", sub, err)
		return exitUsage
	}
	switch sub {
	case "add":
		var user string
		userSet := false
		fs.Func("user", "login user name exactly as stored on the MFP (user, DOMAIN\\user, user@upn, .\\user; '' for none)", func(v string) error {
			user, userSet = v, true
			return nil
		})
		passwordFile := fs.String("password-file", "", "file holding the login password (first line; - for stdin); else SCANWARDEN_PASSWORD")
		noPassword := fs.Bool("no-password", false, "the MFP stores an empty password")
		device := fs.String("device", "", "the device (MFP) this destination belongs to")
		workstation := fs.String("workstation", "", "NetBIOS name to replay with (default: the device's)")
		pos, err := parseInterspersed(fs, rest)
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		if err != nil {
			return exitUsage
		}
		if len(pos) != 2 {
			return fail(errors.New("want NAME and //HOST[:PORT]/SHARE[/PATH]"))
		}
		if !userSet {
			return fail(errors.New("give --user (--user '' for an empty login name)"))
		}
		t, err := smbcheck.ParseDestination(pos[1])
		if err != nil {
			return fail(err)
		}
		var pw scanwarden.Secret
		switch {
		case *noPassword && *passwordFile != "":
			return fail(errors.New("--no-password and --password-file exclude each other"))
		case !*noPassword:
			if pw, err = readSecret(env, *passwordFile, "--password-file", passwordEnv); err != nil {
				return fail(fmt.Errorf("no password: %w (or --no-password)", err))
			}
		}
		d := registry.Destination{Name: pos[0], Host: t.Host, Port: t.Port, Share: t.Share, Path: t.Path, User: user,
			Password: pw, Device: *device, Workstation: *workstation, Source: registry.SourceAdded}
		if err := d.Validate(); err != nil {
			return fail(err)
		}
		st, err := df.open(ctx, env)
		if err != nil {
			return fail(err)
		}
		defer st.Close()
		if err := st.PutDestination(ctx, d); err != nil {
			return fail(err)
		}
		humanf(env.stdout, "stored %s: %s as %s\n", d.Name, d.URL(), userLabel(d.User))
		return exitOK

	case "list":
		device := fs.String("device", "", "only this device's destinations")
		asJSON := fs.Bool("json", false, "print as JSON")
		pos, err := parseInterspersed(fs, rest)
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		if err != nil {
			return exitUsage
		}
		if len(pos) != 0 {
			return fail(errors.New("takes no arguments"))
		}
		st, err := df.open(ctx, env)
		if err != nil {
			return fail(err)
		}
		defer st.Close()
		ds, err := st.Destinations(ctx, *device)
		if err != nil {
			return fail(err)
		}
		out := []destinationJSON{}
		for _, d := range ds {
			last, ok, err := st.LatestReport(ctx, d.Name)
			if err != nil {
				return fail(err)
			}
			var lp *registry.Report
			if ok {
				lp = &last
			}
			out = append(out, fullDestJSON(d, lp))
		}
		if *asJSON {
			return writeJSON(env, "destination list", struct {
				Destinations []destinationJSON `json:"destinations"`
			}{out})
		}
		if len(out) == 0 {
			fmt.Fprintln(env.stdout, "no destinations (scanwarden import addressbook, or destination add)")
		}
		for i, j := range out {
			last := "never checked"
			if j.LastCheck != nil {
				last = fmt.Sprintf("%s %s", j.LastCheck.Cause, j.LastCheck.At.Local().Format("2006-01-02 15:04"))
			}
			dev := j.Device
			if dev == "" {
				dev = "-"
			}
			humanf(env.stdout, "%-24s %-12s %-40s %-28s %s\n", j.Name, dev, ds[i].URL(), userLabel(j.User), last)
		}
		return exitOK

	case "show":
		asJSON := fs.Bool("json", false, "print as JSON")
		pos, err := parseInterspersed(fs, rest)
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		if err != nil {
			return exitUsage
		}
		if len(pos) != 1 {
			return fail(errors.New("want one NAME"))
		}
		st, err := df.open(ctx, env)
		if err != nil {
			return fail(err)
		}
		defer st.Close()
		d, err := st.Destination(ctx, pos[0])
		if errors.Is(err, store.ErrNotFound) {
			fmt.Fprintf(env.stderr, "scanwarden destination show: no destination %q\n", pos[0])
			return exitFinding
		}
		if err != nil {
			return fail(err)
		}
		last, ok, err := st.LatestReport(ctx, d.Name)
		if err != nil {
			return fail(err)
		}
		var lp *registry.Report
		if ok {
			lp = &last
		}
		var dev *registry.Device
		if d.Device != "" {
			if v, err := st.Device(ctx, d.Device); err == nil {
				dev = &v
			}
		}
		j := fullDestJSON(d, lp)
		ws := d.Target(dev).Info().Workstation
		if *asJSON {
			out := struct {
				destinationJSON
				ReplayWorkstation string          `json:"replay_workstation"`
				LastReport        json.RawMessage `json:"last_report,omitempty"`
			}{destinationJSON: j, ReplayWorkstation: ws}
			if lp != nil {
				out.LastReport = lp.JSON
			}
			return writeJSON(env, "destination show", out)
		}
		printDestination(env.stdout, j, ws)
		if lp != nil {
			humanf(env.stdout, "last check    %s\n", lp.At.Local().Format("2006-01-02 15:04:05"))
			for _, s := range lp.Report.Steps {
				printStep(env.stdout, s)
			}
			printVerdict(env.stdout, lp.Report)
		} else {
			fmt.Fprintln(env.stdout, "last check    never (scanwarden check --destination "+d.Name+")")
		}
		return exitOK

	case "remove":
		pos, err := parseInterspersed(fs, rest)
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		if err != nil {
			return exitUsage
		}
		if len(pos) != 1 {
			return fail(errors.New("want one NAME"))
		}
		st, err := df.open(ctx, env)
		if err != nil {
			return fail(err)
		}
		defer st.Close()
		if err := st.RemoveDestination(ctx, pos[0]); errors.Is(err, store.ErrNotFound) {
			fmt.Fprintf(env.stderr, "scanwarden destination remove: no destination %q\n", pos[0])
			return exitFinding
		} else if err != nil {
			return fail(err)
		}
		humanf(env.stdout, "removed %s\n", pos[0])
		return exitOK

	case "-h", "--help", "help":
		fmt.Fprint(env.stdout, destinationUsage)
		return exitOK
	}
	fmt.Fprintf(env.stderr, "scanwarden destination: unknown subcommand %q\n\n%s", sub, destinationUsage)
	return exitUsage
}

func printDestination(w io.Writer, j destinationJSON, ws string) {
	humanf(w, "name          %s\n", j.Name)
	humanf(w, "destination   //%s:%d/%s/%s\n", j.Host, j.Port, j.Share, j.Path)
	humanf(w, "user          %s\n", userLabel(j.User))
	humanf(w, "password      (sealed)\n")
	if j.Device != "" {
		humanf(w, "device        %s\n", j.Device)
	}
	humanf(w, "workstation   %s\n", ws)
	humanf(w, "source        %s\n", j.Source)
	if j.AddressBookID != "" {
		humanf(w, "address book  Id %s, %q\n", j.AddressBookID, j.DisplayName)
	}
	humanf(w, "folder        %s\n", j.Folder)
}

func writeJSON(env environ, cmd string, v any) int {
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(env.stderr, "scanwarden %s: %v\n", cmd, err)
		return exitUsage
	}
	return exitOK
}
