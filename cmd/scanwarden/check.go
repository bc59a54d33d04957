package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/doctor"
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
status; with --json it is in "warnings".

Exit status: 0 the destination works, 1 a problem was found, 2 the check could not run.

flags:
`

func runCheck(ctx context.Context, env environ, args []string) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	user := fs.String("user", "", "login user name exactly as typed on the MFP (user, DOMAIN\\user, user@upn, .\\user)")
	passwordFile := fs.String("password-file", "", "file holding the login password (first line; - for stdin)")
	noPassword := fs.Bool("no-password", false, "the destination's Login Password is empty (implied by --user '' when no password is given)")
	workstation := fs.String("workstation", "", "NetBIOS name the MFP sends (its host name; default "+smbcheck.DefaultWorkstation+")")
	noWrite := fs.Bool("no-write", false, "do not create, write and delete a test file")
	maxFailures := fs.Int("max-failures", smbcheck.DefaultMaxFailures, "failed logons allowed per account per 30 minutes (0: replay nothing that can fail)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	timeout := fs.Duration("timeout", 10*time.Second, "time limit of each network step")
	smb1Only := fs.Bool("device-smb1-only", false, "the MFP speaks only SMB1 (old firmware or SMB1 setting)")
	ntlmv1 := fs.Bool("device-ntlmv1", false, "the MFP logs on with NTLMv1 (old SMB1 firmware; implies --device-smb1-only)")
	noSigning := fs.Bool("device-no-signing", false, "the MFP cannot sign SMB traffic")
	authFlag := fs.String("auth", "", "how the MFP logs on: ntlm (what MFPs send), kerberos (a Kerberos-capable MFP) or auto (Kerberos, then NTLM); default ntlm, or the stored destination's")
	adf := registerADFlags(fs)
	configFile := fs.String("config", "", "the daemon's config, for its [warnings] thresholds (default "+doctor.DefaultConfig+" when it exists; else the defaults)")
	destName := fs.String("destination", "", "replay the stored destination NAME (user, password, port, the device's workstation name); its report is kept")
	df := registerDataFlags(fs)
	df.stateDirAlias(fs)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, checkUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *maxFailures < 0 {
		fmt.Fprintln(env.stderr, "scanwarden check: --max-failures must be 0 or more")
		return exitUsage
	}
	warn := checkWarnings{}
	th, err := warningThresholds(*configFile)
	if err != nil {
		humanf(env.stderr, "scanwarden check: %s\n", err.Error())
		return exitUsage
	}
	warn.tracker.Thresholds = th
	var t smbcheck.Target
	var ledger *storeLedger
	var canaries smbcheck.CanaryJournal
	unreadable := "" // the stored destination's password is unknown: why
	if *destName != "" {
		// A stored destination: everything comes from the registry.
		if len(pos) != 0 || *user != "" || *passwordFile != "" || *noPassword || *workstation != "" {
			fmt.Fprintln(env.stderr, "scanwarden check: --destination replays what is stored: give no //HOST/SHARE, --user, --password-file, --no-password or --workstation")
			return exitUsage
		}
		st, d, err := openDestination(ctx, env, df, *destName)
		if err != nil {
			humanf(env.stderr, "scanwarden check: %s\n", err.Error())
			return exitUsage
		}
		defer st.Close()
		t, ledger, unreadable = d.Target, openedStoreLedger(st), d.PasswordUnreadable
		warn.st, warn.destination, warn.device = st, *destName, d.Destination.Device
		ledger.keep = func(rep smbcheck.Report) error { return st.AddReport(ctx, *destName, rep) }
		if dir, err := df.dir(env); err == nil {
			canaries = dirCanaries{filepath.Join(dir, "canaries")}
		}
	} else {
		if len(pos) != 1 {
			fmt.Fprintln(env.stderr, "scanwarden check: want exactly one destination //HOST[:PORT]/SHARE[/PATH] (or --destination NAME)")
			fs.Usage()
			return exitUsage
		}
		userSet := false
		fs.Visit(func(f *flag.Flag) { userSet = userSet || f.Name == "user" })
		var err error
		t, err = typedTarget(env, pos[0], *user, userSet, *workstation, *passwordFile, *noPassword)
		if err != nil {
			humanf(env.stderr, "scanwarden check: %s\n", err.Error())
			return exitUsage
		}
		dir, err := df.dir(env)
		if err != nil {
			humanf(env.stderr, "scanwarden check: %s\n", err.Error())
			return exitUsage
		}
		// The state store opens while the first network steps run: the ledger
		// is first needed right before the first logon.
		ledger = openStoreLedger(context.WithoutCancel(ctx), dir, df.keyPath(env, dir))
		canaries = dirCanaries{filepath.Join(dir, "canaries")}
	}
	defer ledger.Close()
	if *authFlag != "" {
		a, err := smbcheck.ParseAuth(*authFlag)
		if err != nil {
			fmt.Fprintf(env.stderr, "scanwarden check: --%s\n", err.Error())
			return exitUsage
		}
		t.Auth = a
	}

	opts := smbcheck.Options{
		NoWrite:     *noWrite,
		MaxFailures: *maxFailures,
		Ledger:      ledger,
		StepTimeout: *timeout,
		Device:      smbcheck.Device{SMB1Only: *smb1Only || *ntlmv1, NoSigning: *noSigning, NTLMv1: *ntlmv1},
		Canaries:    canaries,
	}
	if adf.configured() {
		dirc, err := adf.open(ctx, env)
		if err != nil {
			humanf(env.stderr, "scanwarden check: Active Directory: %s\n", err.Error())
			return exitUsage
		}
		defer dirc.Close()
		opts.Directory = dirc
		if d := dirc.DNSDomain(); d != "" {
			opts.DNSDomains = []string{d}
			opts.Realm = d
		}
		if h := dirc.KDCHost(); h != "" {
			opts.KDCs = []string{h}
		}
	}
	if !*asJSON {
		if t.User == "" {
			humanf(env.stdout, "checking %s with an empty login name (anonymous logon; workstation %s)\n", destString(t), t.Info().Workstation)
		} else {
			humanf(env.stdout, "checking %s as %s (workstation %s%s)\n", destString(t), t.User, t.Info().Workstation, authLabel(t.Auth))
		}
		opts.Progress = func(s smbcheck.Step) { printStep(env.stdout, s) }
	}
	var rep smbcheck.Report
	if unreadable != "" {
		// Nothing to replay: the import could not read its password.
		rep = smbcheck.PasswordUnreadable(t, unreadable, time.Now())
		if opts.Progress != nil {
			opts.Progress(rep.Steps[0])
		}
	} else {
		rep = smbcheck.Run(ctx, t, opts)
	}
	return finishCheck(ctx, env, ledger, warn, rep, *asJSON)
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

// warningThresholds reads [warnings] from file, or from the installed
// config when it exists; the defaults otherwise. Only the file is parsed:
// the secret files it names are not read.
func warningThresholds(file string) (warning.Thresholds, error) {
	if file == "" {
		if _, err := os.Stat(doctor.DefaultConfig); err != nil {
			return warning.DefaultThresholds(), nil
		}
		file = doctor.DefaultConfig
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return warning.Thresholds{}, fmt.Errorf("config: %w", err)
	}
	c, err := daemon.ParseConfig(file, b)
	if err != nil {
		return warning.Thresholds{}, err
	}
	return c.Warnings.Thresholds(), nil
}

// typedTarget is the destination given on the command line: where, the
// Login User Name as stored (userSet: --user was given, perhaps empty), the
// workstation and the Login Password (a file, stdin, the environment, or
// none with --no-password).
func typedTarget(env environ, dest, user string, userSet bool, workstation, passwordFile string, noPassword bool) (smbcheck.Target, error) {
	t, err := smbcheck.ParseDestination(dest)
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
func finishCheck(ctx context.Context, env environ, ledger *storeLedger, warn checkWarnings, rep smbcheck.Report, asJSON bool) int {
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
		warn.tracker.Store = warn.st
		up, err := warn.tracker.Observe(context.WithoutCancel(ctx), warn.destination, warn.device, rep)
		if err != nil {
			// The verdict stands without them.
			humanf(env.stderr, "scanwarden check: warnings not judged: %s\n", err.Error())
		} else if up.Warnings != nil {
			warns = up.Warnings
		}
	}
	if asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		out := struct {
			smbcheck.Report
			Warnings []warning.Warning `json:"warnings"`
		}{rep, warns}
		if err := enc.Encode(out); err != nil {
			humanf(env.stderr, "scanwarden check: %s\n", err.Error())
			return exitUsage
		}
	} else {
		printVerdict(env.stdout, rep)
		printWarnings(env.stdout, warns)
	}
	if rep.OK() {
		return exitOK
	}
	return exitFinding
}

// destString is the destination as the panel shows it: \\HOST\SHARE\PATH
// with one kind of separator, and the port when it is not 445.
func destString(t smbcheck.Target) string {
	s := smbcheck.UNC(t.Host, t.Share, t.Path)
	if t.Port != 0 && t.Port != 445 {
		s += fmt.Sprintf(" port %d", t.Port)
	}
	return s
}

func printStep(w io.Writer, s smbcheck.Step) {
	ms := fmt.Sprintf("%dms", s.Duration.Milliseconds())
	if s.Status == smbcheck.StatusSkipped {
		ms = "-"
	}
	line := fmt.Sprintf("  %-7s %-9s %7s  %s", s.Status, s.ID, ms, s.Detail)
	if s.Cause != "" {
		line += "  [" + string(s.Cause) + "]"
	}
	humanf(w, "%s\n", line)
}

func printVerdict(w io.Writer, r smbcheck.Report) {
	v := r.Verdict
	code := ""
	if v.KyoceraCode != "" {
		code = fmt.Sprintf(" (the panel most likely shows %s)", v.KyoceraCode)
	}
	humanf(w, "\nverdict: %s%s\n  %s\n", v.Cause, code, v.Summary)
	if v.FromLedger {
		fmt.Fprintln(w, "  (from an earlier observation: not replayed now to protect the account)")
	}
	for _, c := range v.Also {
		found := false
		for _, s := range r.Steps {
			if s.Cause == c {
				humanf(w, "  also found: %s — %s\n", c, s.Detail)
				found = true
				break
			}
		}
		if !found {
			// Found inside another step (the Kerberos replay behind an
			// NTLM refusal): its generic summary.
			humanf(w, "  also found: %s — %s\n", c, c.Info().Summary)
		}
	}
	if r.WorkingForm != nil {
		humanf(w, "  working user name: %s\n", r.WorkingForm.Typed)
	}
	if r.Canary != "" {
		humanf(w, "  left behind: %s\n", r.Canary)
	}
	humanf(w, "fix: %s\n", v.Fix)
}

// printWarnings prints what will fail days ahead, after the verdict: one
// line each and what to do.
func printWarnings(w io.Writer, ws []warning.Warning) {
	for _, x := range ws {
		humanf(w, "warning: %s — %s\n", x.Kind, x.Summary())
		humanf(w, "  what to do: %s\n", x.Fix)
	}
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

// storeLedger is the failed-logon ledger of the state store, opened in the
// background.
type storeLedger struct {
	ready chan struct{}
	st    *store.Store
	l     *store.Ledger
	err   error
	// keep stores the report (a registry destination's check).
	keep func(smbcheck.Report) error
}

// openStoreLedger opens the store in dir and unlocks its sealing key
// (keyPath, made on first use): the ledger's password fingerprints are keyed
// from it, and it never goes into the database.
func openStoreLedger(ctx context.Context, dir, keyPath string) *storeLedger {
	s := &storeLedger{ready: make(chan struct{})}
	go func() {
		defer close(s.ready)
		s.st, s.err = store.OpenDir(ctx, dir)
		if s.err != nil {
			return
		}
		if _, s.err = s.st.UnlockKey(ctx, keyPath); s.err != nil {
			s.err = fmt.Errorf("the ledger's key: %w", s.err)
			return
		}
		s.l = s.st.Ledger()
	}()
	return s
}

func (s *storeLedger) wait(ctx context.Context) (*store.Ledger, error) {
	select {
	case <-s.ready:
		return s.l, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *storeLedger) Reserve(ctx context.Context, a smbcheck.Attempt, since time.Time, budget int) (int64, *smbcheck.Refusal, error) {
	l, err := s.wait(ctx)
	if err != nil {
		return 0, nil, err
	}
	return l.Reserve(ctx, a, since, budget)
}

func (s *storeLedger) Resolve(ctx context.Context, id int64, o smbcheck.Outcome) error {
	l, err := s.wait(ctx)
	if err != nil {
		return err
	}
	return l.Resolve(ctx, id, o)
}

func (s *storeLedger) Key(ctx context.Context) ([]byte, error) {
	l, err := s.wait(ctx)
	if err != nil {
		return nil, err
	}
	return l.Key(ctx)
}

// Close waits for the store and closes it.
func (s *storeLedger) Close() error {
	<-s.ready
	if s.st != nil {
		return s.st.Close()
	}
	return nil
}

// authLabel words a destination's auth for the first line of a check: ""
// for NTLM, what MFPs send.
func authLabel(a smbcheck.Auth) string {
	if a == "" || a == smbcheck.AuthNTLM {
		return ""
	}
	return ", auth " + string(a)
}
