package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/doctor"
	"github.com/scanwarden/scanwarden/evidence"
	"github.com/scanwarden/scanwarden/internal/localname"
	"github.com/scanwarden/scanwarden/pattern"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/warning"
)

const checkUsage = `usage: scanwarden check //HOST[:PORT]/SHARE[/PATH] --user USER [flags]
       scanwarden check --destination NAME [--data-dir DIR] [flags]   (a stored destination, as stored; its report is kept)

Replays a scan destination's SMB logon as a Kyocera MFP stores it — name, TCP,
negotiate, session (and other user name forms), share, folder, write — and
names the cause of a failure and the fix. The password comes from
--password-file FILE ("-" for stdin) or SCANWARDEN_PASSWORD; --no-password
replays an empty Login Password, --user '' an empty Login User Name (the
anonymous/guest logon an MFP sends then).

A check that passes may still print a warning: what will fail days ahead
(the account's password or the account expiring, the folder's volume filling
up, bad passwords someone else keeps sending), judged with the [warnings]
thresholds of --config. A warning never changes the verdict or the exit
status; with --json it is in "warnings". In --json, "profile" is the SMB
client the check replayed; "device_profile" (older, kept for scripts) is the
device's profile with the --device-* flags over it, each value with its
session, seen and note too; where scanwarden's own client was replayed (a
bridged destination) it still lists the device's values.

Exit status: 0 the destination works, 1 a problem was found, 2 the check could not run.

flags:
`

// checkArgs is a parsed check command line.
type checkArgs struct {
	c                                     *subcommand
	pos                                   []string
	user, passwordFile, workstation, auth string
	configFile, destination, wins         string
	eventlogUser, eventlogPasswordFile    string
	noPassword, noWrite, asJSON           bool
	profile                               *profileFlags
	device                                map[registry.ProfileField]string // the device flags given
	maxFailures                           int
	winsServers                           []netip.Addr // --wins
	timeout                               time.Duration
	ad                                    *adFlags
	// a stored destination's: bridged, its store (BridgeCheck) and the
	// receiver's folder (the share's last probe)
	bridged     bool
	st          *store.Store
	receiverDir string
	stuck       time.Duration // the config's [receiver] bridge_stuck_after
}

func runCheck(ctx context.Context, env environ, name string, args []string) int {
	a, code, ok := parseCheckArgs(env, args)
	if !ok {
		return code
	}
	return a.run(ctx)
}

// parseCheckArgs reads the flags; ok false: the command ends with code.
func parseCheckArgs(env environ, args []string) (*checkArgs, int, bool) {
	c := newCommand(env, "check", checkUsage)
	a := &checkArgs{c: c}
	fs := c.fs
	fs.StringVar(&a.user, "user", "", "login user name exactly as typed on the MFP (user, DOMAIN\\user, user@upn, .\\user)")
	fs.StringVar(&a.passwordFile, "password-file", "", "file holding the login password (first line; - for stdin)")
	fs.BoolVar(&a.noPassword, "no-password", false, "the destination's Login Password is empty (implied by --user '' when no password is given)")
	fs.StringVar(&a.workstation, "workstation", "", "NetBIOS name the MFP sends (its host name; default "+scanwarden.DefaultWorkstation+")")
	fs.BoolVar(&a.noWrite, "no-write", false, "do not create, write and delete a test file")
	fs.IntVar(&a.maxFailures, "max-failures", smbcheck.DefaultMaxFailures, "failed logons allowed per account per 30 minutes (0: replay nothing that can fail)")
	fs.BoolVar(&a.asJSON, "json", false, "print the report as JSON")
	fs.DurationVar(&a.timeout, "timeout", 10*time.Second, "time limit of each network step")
	a.profile = registerProfileFlags(fs)
	fs.StringVar(&a.auth, "auth", "", "how the MFP logs on: ntlm (what MFPs send), kerberos (a Kerberos-capable MFP) or auto (Kerberos, then NTLM); default ntlm, or the stored destination's")
	a.ad = registerADFlags(fs)
	fs.StringVar(&a.configFile, "config", "", "the daemon's config, for its [warnings] thresholds and [receiver] bridge_stuck_after (default "+doctor.DefaultConfig+" when it exists; else the defaults)")
	fs.StringVar(&a.destination, "destination", "", "replay the stored destination NAME (user, password, port, the device's workstation name); its report is kept")
	fs.StringVar(&a.eventlogUser, "eventlog-user", "", "after the check, read the file server's event log and its share's connection count as USER (DOMAIN\\user; a read-only account, never the scan account)")
	fs.StringVar(&a.eventlogPasswordFile, "eventlog-password-file", "", "file holding --eventlog-user's password (first line; - for stdin)")
	fs.StringVar(&a.wins, "wins", "", "WINS servers (IPv4 addresses, comma-separated) asked, besides a NetBIOS broadcast and LLMNR, for a host name DNS does not know")
	c.data.register(fs, withDataDir, withStateDir, withKeyFile)
	pos, code, ok := c.parse(args, -1, "")
	if !ok {
		return nil, code, false
	}
	a.pos = pos
	var err error
	if a.device, err = a.profile.settings(c.given); err != nil {
		return nil, c.fail(err), false
	}
	if a.maxFailures < 0 {
		return nil, c.fail(errors.New("--max-failures must be 0 or more")), false
	}
	if (a.eventlogUser == "") != (a.eventlogPasswordFile == "") {
		return nil, c.fail(errors.New("--eventlog-user and --eventlog-password-file go together")), false
	}
	if a.winsServers, err = parseWINSFlag(a.wins); err != nil {
		return nil, c.fail(err), false
	}
	return a, 0, true
}

// run replays the destination and prints the verdict.
func (a *checkArgs) run(ctx context.Context) int {
	c := a.c
	cfg, err := checkConfig(a.configFile)
	if err != nil {
		return c.failSafe(err)
	}
	a.stuck = cfg.Receiver.BridgeStuckAfter.D()
	warn := checkWarnings{}
	warn.tracker.Thresholds = cfg.Warnings.Thresholds()
	t, dev, ledger, canaries, unreadable, code, ok := a.target(ctx, &warn)
	if !ok {
		return code
	}
	defer ledger.Close()
	profile := dev.ValuesWith(a.device)
	opts, err := a.options(&t, dev, profile, ledger, canaries)
	if err != nil {
		return c.fail(err)
	}
	if a.ad.configured() {
		dirc, err := a.ad.open(ctx, c.env)
		if err != nil {
			return c.failSafe(fmt.Errorf("open Active Directory: %w", err))
		}
		defer dirc.Close()
		a.ad.into(&opts, dirc)
	}
	if !a.asJSON {
		printCheckStart(c.env.stdout, t)
		printReplayedAs(c.env.stdout, dev, profile)
		opts.Progress = func(s smbcheck.Step) { printStep(c.env.stdout, s) }
	}
	var readers evidence.Readers
	if a.eventlogUser != "" {
		pw, err := readSecretFile(c.env.stdin, a.eventlogPasswordFile, "--eventlog-password-file")
		if err != nil {
			return c.failSafe(err)
		}
		acct := evidence.Account(a.eventlogUser, pw)
		readers.Default = &acct
	}
	rep := a.replay(ctx, t, opts, unreadable, readers)
	return finishCheck(ctx, c.env, ledger, warn, rep, profile, a.asJSON)
}

// options are the check's options: the client that replays it (the
// device's profile, or scanwarden's own for a bridged destination), the
// ledger and canaries, the profile the report names. It sets t's logon
// when --auth gives one.
func (a *checkArgs) options(t *scanwarden.Target, dev *registry.Device, profile []registry.ProfileValue, ledger *storeLedger,
	canaries smbcheck.CanaryJournal) (smbcheck.Options, error) {
	client := registry.ClientOf(profile)
	if a.bridged {
		// the MFP scans to the fallback share; the real folder gets
		// scanwarden's own client, as the forwarder delivers
		client = smbcheck.Device{}
	}
	if err := client.Validate(); err != nil {
		return smbcheck.Options{}, err
	}
	if a.auth != "" {
		au, err := scanwarden.ParseAuth(a.auth)
		if err != nil {
			return smbcheck.Options{}, fmt.Errorf("--%w", err)
		}
		t.Auth = au
	}
	opts := smbcheck.Options{NoWrite: a.noWrite, MaxFailures: a.maxFailures, Ledger: ledger, StepTimeout: a.timeout,
		Device: client, Canaries: canaries, LocalNames: localname.Local{WINS: a.winsServers}}
	if dev != nil {
		opts.Profile = registry.ReportProfile(dev.Name, profile)
	} else if len(a.device) > 0 {
		opts.Profile = registry.ReportProfile("", profile)
	}
	return opts, nil
}

// replay runs the check (through the bridge for a bridged destination;
// nothing when the stored password is unreadable) and attaches what
// readers read from the file server.
func (a *checkArgs) replay(ctx context.Context, t scanwarden.Target, opts smbcheck.Options, unreadable string, readers evidence.Readers) smbcheck.Report {
	var rep smbcheck.Report
	switch {
	case unreadable != "":
		// Nothing to replay: the import could not read its password.
		rep = smbcheck.PasswordUnreadable(t, unreadable, time.Now())
		if opts.Progress != nil {
			opts.Progress(rep.Steps[0])
		}
	case a.bridged:
		share := func() *samba.ShareHealth { return receiver.LastShareCheck(a.receiverDir) }
		rep = daemon.BridgeCheck(ctx, a.st, share, a.stuck, a.destination, func() smbcheck.Report { return smbcheck.Run(ctx, t, opts) })
		readers.Attach(ctx, t, &rep)
	default:
		rep = smbcheck.RunWithOwn(ctx, t, opts)
		rep.Bridge.Named(a.destination)
		readers.Attach(ctx, t, &rep)
	}
	return rep
}

// target is what to replay, the device whose client replays it (nil:
// none stored; the device flags alone), the ledger (the state store,
// opening) and the canary journal: a stored destination's (--destination),
// or the one typed on the command line. unreadable: why a stored password
// is unknown.
func (a *checkArgs) target(ctx context.Context, warn *checkWarnings) (t scanwarden.Target, dev *registry.Device, ledger *storeLedger,
	canaries smbcheck.CanaryJournal, unreadable string, code int, ok bool) {
	c := a.c
	dir, dirErr := c.data.dir(c.env)
	if a.destination != "" {
		// A stored destination: everything comes from the registry.
		if len(a.pos) != 0 || a.user != "" || a.passwordFile != "" || a.noPassword || a.workstation != "" {
			return t, nil, nil, nil, "", c.fail(errors.New("--destination replays what is stored: give no //HOST/SHARE, --user, --password-file, --no-password or --workstation")), false
		}
		st, d, err := openDestination(ctx, c.env, &c.data, a.destination)
		if err != nil {
			return t, nil, nil, nil, "", c.failSafe(err), false
		}
		ledger = openedStoreLedger(st)
		warn.st, warn.destination, warn.device = st, a.destination, d.Destination.Device
		ledger.keep = func(rep smbcheck.Report) error { return st.Reports().AddReport(ctx, a.destination, rep) }
		if dirErr == nil {
			canaries = dirCanaries{filepath.Join(dir, "canaries")}
			a.receiverDir = receiverDir(dir)
		}
		a.bridged, a.st = d.Bridged(), st
		return d.Target, d.Device, ledger, canaries, d.PasswordUnreadable, 0, true
	}
	if len(a.pos) != 1 {
		fmt.Fprintln(c.env.stderr, "scanwarden check: want exactly one destination //HOST[:PORT]/SHARE[/PATH] (or --destination NAME)")
		c.fs.Usage()
		return t, nil, nil, nil, "", exitUsage, false
	}
	t, err := typedTarget(c.env, a.pos[0], a.user, c.given("user"), a.workstation, a.passwordFile, a.noPassword)
	if err != nil {
		return t, nil, nil, nil, "", c.failSafe(err), false
	}
	if dirErr != nil {
		return t, nil, nil, nil, "", c.failSafe(dirErr), false
	}
	// The state store opens while the first network steps run: the ledger
	// is first needed right before the first logon.
	ledger = openStoreLedger(context.WithoutCancel(ctx), c.env, &c.data)
	return t, nil, ledger, dirCanaries{filepath.Join(dir, "canaries")}, "", 0, true
}

// checkWarnings judges a check's report for what will fail days ahead:
// with the thresholds of the daemon's config, the history in the state
// store and, for a stored destination, its name and device (its warnings
// are kept as the daemon keeps them).
type checkWarnings struct {
	tracker     warning.Tracker
	st          *store.Store // nil: the ledger's store, once open
	destination string
	device      string
}

// checkConfig is the daemon's config for its [warnings] thresholds and
// [receiver] bridge_stuck_after: file, or the installed config when it
// exists; the defaults otherwise. Only the file is parsed: the secret files
// it names are not read.
func checkConfig(file string) (config.Config, error) {
	if file == "" {
		if _, err := os.Stat(doctor.DefaultConfig); err != nil {
			return config.Defaults(), nil
		}
		file = doctor.DefaultConfig
	}
	return parseConfigFile(file)
}

// typedTarget is the destination given on the command line: where, the
// Login User Name as stored (userSet: --user was given, perhaps empty), the
// workstation and the Login Password (a file, stdin, the environment, or
// none with --no-password).
func typedTarget(env environ, dest, user string, userSet bool, workstation, passwordFile string, noPassword bool) (scanwarden.Target, error) {
	t, err := scanwarden.ParseDestination(dest)
	if err != nil {
		return t, err
	}
	t.User, t.Workstation = user, workstation
	if !userSet {
		return t, errors.New("--user is required: the destination's Login User Name as stored (--user '' when it is empty: an anonymous/guest logon)")
	}
	switch {
	case noPassword && passwordFile != "":
		return t, errors.New("--no-password and --password-file exclude each other")
	case noPassword, user == "" && passwordFile == "" && env.getenv(passwordEnv) == "":
		// An empty Login Password, as stored; with an empty login name
		// the MFP sends an empty password too.
		t.Password = scanwarden.NewSecret("")
	default:
		pw, err := readPassword(env, passwordFile)
		if err != nil {
			return t, err
		}
		t.Password = pw
	}
	return t, t.Validate()
}

// finishCheck waits for the state store, keeps the report of a stored
// destination and prints the verdict; it returns the exit status.
func finishCheck(ctx context.Context, env environ, ledger *storeLedger, warn checkWarnings, rep smbcheck.Report, profile []registry.ProfileValue, asJSON bool) int {
	// Ctrl-C or SIGTERM ends the check early, yet the verdict reached so
	// far is still printed: the store is waited for without the signal.
	if _, err := ledger.wait(context.WithoutCancel(ctx)); err != nil {
		humanf(env.stderr, "scanwarden check: state: %s\n", err.Error())
		return exitUsage
	}
	// An interrupted check says nothing about the destination: not kept.
	if ledger.keep != nil && ctx.Err() == nil {
		if err := ledger.keep(rep); err != nil {
			humanf(env.stderr, "scanwarden check: keep the report: %s\n", err.Error())
			return exitUsage
		}
	}
	warns := []warning.Warning{}
	if warn.st == nil {
		warn.st = ledger.st
	}
	if warn.st != nil && ctx.Err() == nil {
		warn.tracker.Store = warn.st.Warnings()
		up, err := warn.tracker.Observe(context.WithoutCancel(ctx), warn.destination, warn.device, rep)
		if err != nil {
			// The verdict stands without them.
			humanf(env.stderr, "scanwarden check: warnings not judged: %s\n", err.Error())
		} else if up.Warnings != nil {
			warns = up.Warnings
		}
	}
	// A stored destination's history, this check included: its pattern.
	var pat *pattern.Explanation
	if warn.st != nil && warn.destination != "" && ctx.Err() == nil {
		e, err := warn.st.History().Pattern(context.WithoutCancel(ctx), store.Of{Destination: warn.destination}, time.Now())
		if err != nil {
			humanf(env.stderr, "scanwarden check: history not read: %s\n", err.Error())
		} else {
			pat = &e
		}
	}
	if asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		out := struct {
			smbcheck.Report
			Warnings []warning.Warning    `json:"warnings"`
			Pattern  *pattern.Explanation `json:"pattern,omitempty"`
			// DeviceProfile is the device's profile with the one-off
			// flags over it, each value with where it came from — kept
			// for the scripts that read it. What the check replayed is
			// the report's Profile: the same values where a device's
			// profile was replayed (TestCheckJSONProfileKeys), none for
			// scanwarden's own client (a bridged destination, no device).
			DeviceProfile []registry.ProfileValue `json:"device_profile"`
		}{rep, warns, pat, profile}
		if err := enc.Encode(out); err != nil {
			humanf(env.stderr, "scanwarden check: %s\n", err.Error())
			return exitUsage
		}
	} else {
		printVerdict(env.stdout, rep)
		printWarnings(env.stdout, warns)
		if pat != nil {
			humanf(env.stdout, "history: %s\n", pat.Sentence)
		}
	}
	if rep.OK() {
		return exitOK
	}
	return exitFinding
}

// readPassword takes the login password from --password-file (a file, or
// "-" for stdin) or SCANWARDEN_PASSWORD. There is no --password: a command
// line is readable by every local user in /proc.
func readPassword(env environ, file string) (scanwarden.Secret, error) {
	pw, err := readSecret(env, file, "--password-file", passwordEnv)
	if err != nil {
		return pw, fmt.Errorf("no password: %w", err)
	}
	return pw, nil
}

const passwordEnv = "SCANWARDEN_PASSWORD"

// parseWINSFlag reads --wins: comma-separated IPv4 addresses.
func parseWINSFlag(v string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, f := range strings.Split(v, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		a, err := localname.ParseWINS(f)
		if err != nil {
			return nil, fmt.Errorf("--wins: %w", err)
		}
		out = append(out, a)
	}
	return out, nil
}
