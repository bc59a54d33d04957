package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/installed"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
)

const receiverUsage = `usage:
  scanwarden receiver run [--data-dir D] [--config FILE] --listen IP[:PORT] [--share scans] [--account mfp --password-file F] [--smb1] [--allow NET]… [--retry 30s]
  scanwarden receiver list [--data-dir D] [--json]
  scanwarden receiver deliver [DESTINATION] [--data-dir D] [--config FILE]
  scanwarden receiver force ID [--data-dir D]
  scanwarden receiver status [--data-dir D] [--config FILE | --password-file F] [--json]
  scanwarden receiver prepare --config FILE [--user scanwarden]   (root; smbd in its own unit)

The fallback scan share. "run" starts scanwarden's own smbd on IP (port 445
unless given; one folder per registered destination plus _unsorted), takes in
every complete scan, holds it, and delivers it, verified, to the destination's
real folder once that works again; it runs in the foreground until SIGTERM.
smbd runs in its own session: a crash of scanwarden does not cut an upload,
and the next run finds it again. SMB1/NTLMv1 (old firmware) only with --smb1.
Only scans are delivered: a file whose bytes are not PDF, TIFF, JPEG, PNG,
XPS/OpenXPS, DOCX/XLSX/PPTX or plain text, or whose name's extension does not
agree with its bytes (an .exe, .lnk, .url, .scf; a program named .pdf), is
kept as "refused": listed, never delivered.
With --allow only those addresses or networks (the MFPs) may connect.
"run" and "deliver" log on to the destinations as serve's forwarder does,
with the daemon's config (--config, default
` + installed.ConfigFile + ` when it exists; an explicit
one's data_dir too unless --data-dir is given): its [checks] max_failures,
failure_window and timeout, and its [ad] (Kerberos realm and KDC; the
account a user name names, so that deliveries and checks spend one
failed-logon budget per account), with the settings saved on the web page
laid over it; without a config, the defaults and no [ad].
"list" prints every scan, "deliver" tries now, "force" lets an incomplete
scan be delivered as it is, "status" says how the share is: it logs on to
the share as the MFP account (password from --password-file,
$SCANWARDEN_RECEIVER_PASSWORD, or [receiver] password_file of --config,
default ` + installed.ConfigFile + ` when readable) and names why smbd refuses
the MFPs, with the fix (the package to install, the folder, the passdb, the
unit to start); without a password it shows the running receiver's last
such probe. "prepare" (as
root, scanwarden-smbd.service runs it) renders smbd's config from the config
file and the allowlist the unprivileged daemon hands over as data (addresses,
and networks inside [receiver] allow or this box's own; anything else is
refused and the last good list stays),
in [receiver] smbd_dir, and puts the MFP account into that smbd's passdb.

Exit status: 0 ok, 1 "deliver" could not deliver everything or "status" found
the share refusing the MFPs, 2 bad arguments or setup.
`

// newReceiverCommand is a receiver command: --data-dir and --key-file.
func newReceiverCommand(env environ, name string) *subcommand {
	return newCommand(env, name, receiverUsage, withDataDir, withKeyFile)
}

// receiverDir is the receiver's part of the data dir.
func receiverDir(dataDir string) string { return filepath.Join(dataDir, "receiver") }

// parseListen reads --listen IP[:PORT] by samba.ParseListen.
func parseListen(s string) (netip.Addr, int, error) {
	ip, port, err := samba.ParseListen(s)
	if err != nil {
		return ip, port, fmt.Errorf("--listen %q: %w", s, err)
	}
	return ip, port, nil
}

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
		r, err := receiver.New(cfg, st.Scans(), st.Deliveries(), c.forwardRemote(ctx, daemonCfg, st), slog.New(slog.NewTextHandler(env.stderr, nil)))
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

// forwardConfigUsage is --config's help for "run" and "deliver".
const forwardConfigUsage = "the daemon's config: [checks] failure budget and [ad], as serve's deliveries log on (default " +
	installed.ConfigFile + " when it exists; its data_dir too when given)"

// daemonConfig is the daemon's config for "run" and "deliver" (see
// daemonConfigFile); nil without one. An installed config this user cannot
// read is said on stderr: deliveries then go without its [ad].
func (c *subcommand) daemonConfig(file string) (*config.Config, error) {
	cfg, note, err := daemonConfigFile(file, &c.data)
	if note != "" {
		fmt.Fprintf(c.env.stderr, "scanwarden %s: %s; deliveries go without its [checks] and [ad]\n", c.name, note)
	}
	return cfg, err
}

// forwardRemote is how "run" and "deliver" log on to the destinations: as
// serve's forwarder does (daemon.Forwarding over cfg with the settings
// saved on the web page laid over it), behind the store's failure ledger
// (its key unlocked); the defaults without a config. What cannot be used
// is said on stderr, and the deliveries go without it.
func (c *subcommand) forwardRemote(ctx context.Context, cfg *config.Config, st *store.Store) receiver.Remote {
	conf := config.Defaults()
	if cfg != nil {
		var skipped []string
		var err error
		conf, skipped, err = daemon.WithStoredSettings(ctx, *cfg, st)
		if err != nil {
			conf = *cfg
			fmt.Fprintf(c.env.stderr, "scanwarden %s: the settings saved on the web page are not used: %v\n", c.name, err)
		}
		for _, s := range skipped {
			fmt.Fprintf(c.env.stderr, "scanwarden %s: a setting saved on the web page is not used: %s\n", c.name, s)
		}
	}
	r, err := daemon.Forwarding(conf, st.Ledger())
	if err != nil {
		fmt.Fprintf(c.env.stderr, "scanwarden %s: %v\n", c.name, err)
	}
	r.Logger = slog.New(slog.NewTextHandler(c.env.stderr, nil))
	return r
}

// scanJSON is one scan in `receiver list --json`: a contract.
type scanJSON struct {
	ID          int64      `json:"id"`
	Destination string     `json:"destination"`
	File        string     `json:"file"`
	Size        int64      `json:"size"`
	SHA256      string     `json:"sha256"`
	State       string     `json:"state"`
	ReceivedAt  time.Time  `json:"received_at"`
	DeliveredAt *time.Time `json:"delivered_at"`
	Error       string     `json:"error"`
}

func receiverList(ctx context.Context, env environ, name string, args []string) int {
	c := newReceiverCommand(env, name)
	asJSON := c.fs.Bool("json", false, "print JSON")
	if pos, code, ok := c.parse(args, -1, ""); !ok {
		return code
	} else if len(pos) != 0 {
		return c.fail(fmt.Errorf("unexpected argument %s", pos[0]))
	}
	return c.readStore(ctx, false, func(st *store.Store) int {
		rows, err := st.Scans().Scans(ctx, receiver.ScanQuery{})
		if err != nil {
			return c.fail(err)
		}
		out := make([]scanJSON, 0, len(rows))
		for _, r := range rows {
			j := scanJSON{ID: r.ID, Destination: r.Destination, File: r.File, Size: r.Size, SHA256: r.SHA256,
				State: string(r.State), ReceivedAt: r.ReceivedAt, Error: r.Error}
			if !r.DeliveredAt.IsZero() {
				t := r.DeliveredAt
				j.DeliveredAt = &t
			}
			out = append(out, j)
		}
		if *asJSON {
			return c.printJSON(out)
		}
		printScans(env.stdout, out)
		return exitOK
	})
}

func printScans(w io.Writer, scans []scanJSON) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tDESTINATION\tFILE\tSIZE\tRECEIVED\tNOTE")
	for _, j := range scans {
		dest := j.Destination
		if dest == "" {
			dest = receiver.Unsorted
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", j.ID, j.State, terminalSafe(dest), terminalSafe(j.File), j.Size,
			j.ReceivedAt.Local().Format("2006-01-02 15:04:05"), terminalSafe(j.Error))
	}
	tw.Flush()
}

func receiverDeliver(ctx context.Context, env environ, name string, args []string) int {
	c := newReceiverCommand(env, name)
	configFile := c.fs.String("config", "", forwardConfigUsage)
	pos, code, ok := c.parse(args, -1, "")
	if !ok {
		return code
	}
	if len(pos) > 1 {
		return c.fail(errors.New("at most one destination"))
	}
	dest := ""
	if len(pos) == 1 {
		dest = pos[0]
	}
	daemonCfg, err := c.daemonConfig(*configFile)
	if err != nil {
		return c.fail(err)
	}
	dir, err := c.data.dir(env)
	if err != nil {
		return c.fail(err)
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		n, err := receiver.DeliverNow(ctx, receiverDir(dir), st.Scans(), st.Deliveries(), c.forwardRemote(ctx, daemonCfg, st), dest)
		fmt.Fprintf(env.stdout, "delivered %d scan(s)\n", n)
		if err != nil {
			return c.finding(err)
		}
		return exitOK
	})
}

func receiverForce(ctx context.Context, env environ, name string, args []string) int {
	c := newReceiverCommand(env, name)
	pos, code, ok := c.parse(args, 1, "want one scan ID")
	if !ok {
		return code
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return c.fail(fmt.Errorf("bad ID %s", pos[0]))
	}
	dir, err := c.data.dir(env)
	if err != nil {
		return c.fail(err)
	}
	return c.withStore(ctx, false, func(st *store.Store) int {
		sc, err := receiver.Force(ctx, receiverDir(dir), st.Scans(), id)
		if err != nil {
			return c.finding(err)
		}
		fmt.Fprintf(env.stdout, "scan %d (%s) is held and will be delivered as it is\n", sc.ID, terminalSafe(sc.File))
		return exitOK
	})
}

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

// daemonConfigFile reads the daemon's config for a receiver command: file
// (--config: an error when it cannot be read; its data_dir is used unless
// --data-dir is given), else the installed config when it exists (a note
// saying why when this user cannot read it). nil when there is none.
func daemonConfigFile(file string, data *dataFlags) (cfg *config.Config, note string, err error) {
	explicit := file != ""
	if !explicit {
		if _, err := os.Stat(installed.ConfigFile); err != nil {
			return nil, "", nil
		}
		file = installed.ConfigFile
	}
	c, err := config.Load(file)
	switch {
	case err != nil && explicit:
		return nil, "", err
	case err != nil:
		return nil, fmt.Sprintf("%s cannot be read here (%v): run as root or as the daemon's user", file, err), nil
	}
	if explicit && data.dataDir == "" {
		data.dataDir = c.DataDir
	}
	return &c, "", nil
}

// linkLocalAllowed is the installed config's allow_link_local (false
// without a config this user can read): whether a destination written
// here may name a link-local address.
func linkLocalAllowed(data *dataFlags) bool {
	d := *data // the config's data_dir is not taken over
	cfg, _, err := daemonConfigFile("", &d)
	return err == nil && cfg != nil && cfg.AllowLinkLocal
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
