package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

const receiverUsage = `usage:
  scanwarden receiver run [--data-dir D] --listen IP[:PORT] [--share scans] [--account mfp --password-file F] [--smb1] [--allow NET]… [--retry 30s]
  scanwarden receiver list [--data-dir D] [--json]
  scanwarden receiver deliver [DESTINATION] [--data-dir D]
  scanwarden receiver force ID [--data-dir D]
  scanwarden receiver status [--data-dir D] [--json]
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
"list" prints every scan, "deliver" tries now, "force" lets an incomplete
scan be delivered as it is, "status" says how the share is. "prepare" (as
root, scanwarden-smbd.service runs it) renders smbd's config from the config
file and the allowlist the unprivileged daemon hands over as data (addresses
and networks only; anything else is refused and the last good list stays),
in [receiver] smbd_dir, and puts the MFP account into that smbd's passdb.

Exit status: 0 ok, 1 "deliver" could not deliver everything, 2 bad arguments or setup.
`

func runReceiver(ctx context.Context, env environ, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(env.stderr, receiverUsage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	switch args[0] {
	case "run":
		return receiverRun(ctx, env, args[1:])
	case "list":
		return receiverList(ctx, env, args[1:])
	case "deliver":
		return receiverDeliver(ctx, env, args[1:])
	case "force":
		return receiverForce(ctx, env, args[1:])
	case "status":
		return receiverStatus(ctx, env, args[1:])
	case "prepare":
		return receiverPrepare(ctx, env, args[1:])
	}
	fmt.Fprintf(env.stderr, "scanwarden receiver: unknown command %q\n\n%s", args[0], receiverUsage)
	return exitUsage
}

// receiverDataDir is the data dir (store.DataDir's rule), absolute: smbd
// is given paths inside it.
func receiverDataDir(flagValue string, getenv func(string) string) (string, error) {
	d, err := store.DataDir(flagValue, getenv, store.UserStateDir)
	if err != nil {
		return "", err
	}
	return filepath.Abs(d)
}

// receiverDir is the receiver's part of the data dir.
func receiverDir(dataDir string) string { return filepath.Join(dataDir, "receiver") }

type receiverFlags struct {
	fs      *flag.FlagSet
	dataDir *string
	keyFile *string
}

func newReceiverFlags(env environ, name, usage string) *receiverFlags {
	fs := flag.NewFlagSet("receiver "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	f := &receiverFlags{fs: fs}
	f.dataDir = fs.String("data-dir", "", dataDirUsage)
	f.keyFile = fs.String("key-file", "", "key that seals the stored passwords (default $"+seal.EnvKeyFile+", else $CREDENTIALS_DIRECTORY/"+seal.FileName+", else "+seal.FileName+" in the data dir)")
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "usage: scanwarden receiver "+usage)
		fs.PrintDefaults()
	}
	return f
}

// parse returns the positional arguments, or an exit code.
func (f *receiverFlags) parse(args []string) ([]string, int, bool) {
	pos, err := parseInterspersed(f.fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK, false
		}
		return nil, exitUsage, false
	}
	return pos, 0, true
}

func (f *receiverFlags) open(ctx context.Context, env environ) (string, *store.Store, error) {
	dir, err := receiverDataDir(*f.dataDir, env.getenv)
	if err != nil {
		return "", nil, err
	}
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		return "", nil, err
	}
	return dir, st, nil
}

// parseListen reads --listen IP[:PORT] by receiver.ParseListen.
func parseListen(s string) (netip.Addr, int, error) {
	ip, port, err := receiver.ParseListen(s)
	if err != nil {
		return ip, port, fmt.Errorf("--listen %q: %w", s, err)
	}
	return ip, port, nil
}

func receiverRun(ctx context.Context, env environ, args []string) int {
	f := newReceiverFlags(env, "run", "run [--data-dir D] --listen IP[:PORT] [--share scans] [--account mfp --password-file F] [--smb1] [--allow NET]… [--retry 30s]")
	listen := f.fs.String("listen", "", "the one address (and port, default 445) the share binds, e.g. 192.168.10.5 or 192.168.10.5:4445")
	share := f.fs.String("share", receiver.DefaultShare, "share name")
	account := f.fs.String("account", "mfp", "the MFPs' login name on the share (a local account of scanwarden's smbd)")
	passwordFile := f.fs.String("password-file", "", "file holding that account's password (first line; - for stdin; default $SCANWARDEN_RECEIVER_PASSWORD)")
	smb1 := f.fs.Bool("smb1", false, "let SMB1/NTLMv1 firmware in (this share only; a standing security warning)")
	retry := f.fs.Duration("retry", receiver.DefaultForward.Retry, "first retry of a failed delivery (doubling up to 30m)")
	quiet := f.fs.Duration("quiet", receiver.DefaultWatch.Quiet, "a scan is complete after this long without a write (shortened once the MFP logs off)")
	retention := f.fs.Duration("retention", receiver.DefaultForward.Retention, "how long a delivered scan's local copy is kept")
	keep := f.fs.Bool("keep-smbd", false, "leave smbd running when this command stops")
	var allow []netip.Prefix
	f.fs.Func("allow", "address or network (CIDR) that may connect to the share, e.g. the MFPs' 192.168.10.0/24 (repeatable; default any)", func(s string) error {
		p, err := receiver.ParseAllowEntry(s)
		allow = append(allow, p)
		return err
	})
	pos, code, ok := f.parse(args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		fmt.Fprintln(env.stderr, "scanwarden receiver run: unexpected argument", pos[0])
		return exitUsage
	}
	if *listen == "" {
		fmt.Fprintln(env.stderr, "scanwarden receiver run: --listen IP[:PORT] is required (the share binds only that address)")
		return exitUsage
	}
	ip, port, err := parseListen(*listen)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver run:", err)
		return exitUsage
	}
	pw, err := readSecret(env, *passwordFile, "--password-file", "SCANWARDEN_RECEIVER_PASSWORD")
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver run:", err)
		return exitUsage
	}
	if *retry <= 0 || *quiet <= 0 || *retention < 0 {
		fmt.Fprintln(env.stderr, "scanwarden receiver run: --retry and --quiet must be positive, --retention 0 or more")
		return exitUsage
	}
	dir, st, err := f.open(ctx, env)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver run:", err)
		return exitUsage
	}
	defer st.Close()
	fwd := receiver.DefaultForward
	fwd.Retry, fwd.Retention = *retry, *retention
	fwd.MaxRetry = max(fwd.MaxRetry, *retry)
	watch := receiver.DefaultWatch
	watch.Quiet = *quiet
	cfg := receiver.Config{DataDir: receiverDir(dir), Listen: ip, Port: port, Share: *share,
		Accounts: []receiver.Account{{Name: *account, Password: pw}}, SMB1: *smb1, Allow: allow, KeepSamba: *keep,
		Watch: watch, Forward: fwd}
	log := slog.New(slog.NewTextHandler(env.stderr, nil))
	dests, remote, err := receiverPeers(ctx, env, st, dir, *f.keyFile)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver run:", err)
		return exitUsage
	}
	r, err := receiver.New(cfg, st.Scans(), dests, remote, log)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver run:", err)
		return exitUsage
	}
	if err := r.Open(ctx); err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver run:", err)
		return exitUsage
	}
	fmt.Fprintf(env.stderr, "receiver: share \\\\%s\\%s on port %d (smbd pid %d), inbox %s\n", ip, *share, port, r.Samba().Pid(), receiver.Inbox(cfg.DataDir))
	if *smb1 {
		fmt.Fprintln(env.stderr, "WARNING:", receiver.SMB1Warning)
	}
	<-ctx.Done()
	if err := r.Close(); err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver run: stop:", err)
	}
	return exitOK
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

func receiverList(ctx context.Context, env environ, args []string) int {
	f := newReceiverFlags(env, "list", "list [--data-dir D] [--json]")
	asJSON := f.fs.Bool("json", false, "print JSON")
	pos, code, ok := f.parse(args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		fmt.Fprintln(env.stderr, "scanwarden receiver list: unexpected argument", pos[0])
		return exitUsage
	}
	_, st, err := f.open(ctx, env)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver list:", err)
		return exitUsage
	}
	defer st.Close()
	rows, err := st.Scans().Scans(ctx, receiver.ScanQuery{})
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver list:", err)
		return exitUsage
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
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tDESTINATION\tFILE\tSIZE\tRECEIVED\tNOTE")
	for _, j := range out {
		dest := j.Destination
		if dest == "" {
			dest = receiver.Unsorted
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", j.ID, j.State, terminalSafe(dest), terminalSafe(j.File), j.Size,
			j.ReceivedAt.Local().Format("2006-01-02 15:04:05"), terminalSafe(j.Error))
	}
	tw.Flush()
	return exitOK
}

func receiverDeliver(ctx context.Context, env environ, args []string) int {
	f := newReceiverFlags(env, "deliver", "deliver [DESTINATION] [--data-dir D]")
	pos, code, ok := f.parse(args)
	if !ok {
		return code
	}
	if len(pos) > 1 {
		fmt.Fprintln(env.stderr, "scanwarden receiver deliver: at most one destination")
		return exitUsage
	}
	dest := ""
	if len(pos) == 1 {
		dest = pos[0]
	}
	dir, st, err := f.open(ctx, env)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver deliver:", err)
		return exitUsage
	}
	defer st.Close()
	dests, remote, err := receiverPeers(ctx, env, st, dir, *f.keyFile)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver deliver:", err)
		return exitUsage
	}
	n, err := receiver.DeliverNow(ctx, receiverDir(dir), st.Scans(), dests, remote, dest)
	fmt.Fprintf(env.stdout, "delivered %d scan(s)\n", n)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver deliver:", err)
		return exitFinding
	}
	return exitOK
}

func receiverForce(ctx context.Context, env environ, args []string) int {
	f := newReceiverFlags(env, "force", "force ID [--data-dir D]")
	pos, code, ok := f.parse(args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(env.stderr, "scanwarden receiver force: want one scan ID")
		return exitUsage
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver force: bad ID", pos[0])
		return exitUsage
	}
	dir, st, err := f.open(ctx, env)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver force:", err)
		return exitUsage
	}
	defer st.Close()
	sc, err := receiver.Force(ctx, receiverDir(dir), st.Scans(), id)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver force:", err)
		return exitFinding
	}
	fmt.Fprintf(env.stdout, "scan %d (%s) is held and will be delivered as it is\n", sc.ID, terminalSafe(sc.File))
	return exitOK
}

func receiverStatus(ctx context.Context, env environ, args []string) int {
	f := newReceiverFlags(env, "status", "status [--data-dir D] [--json]")
	asJSON := f.fs.Bool("json", false, "print JSON")
	pos, code, ok := f.parse(args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		fmt.Fprintln(env.stderr, "scanwarden receiver status: unexpected argument", pos[0])
		return exitUsage
	}
	dir, st, err := f.open(ctx, env)
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver status:", err)
		return exitUsage
	}
	defer st.Close()
	s, err := receiver.ReadStatus(ctx, receiverDir(dir), st.Scans())
	if err != nil {
		fmt.Fprintln(env.stderr, "scanwarden receiver status:", err)
		return exitUsage
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(s)
		if s.Fault != "" {
			return exitFinding
		}
		return exitOK
	}
	up := "down"
	if s.SmbdUp {
		up = fmt.Sprintf("up (pid %d)", s.SmbdPid)
	}
	smb1 := "off"
	if s.SMB1 {
		smb1 = "ON"
	}
	if s.Fault != "" {
		up += ", but the share refuses every MFP: " + s.Fault
	}
	fmt.Fprintf(env.stdout, "smbd:      %s, \\\\%s\\%s port %d\n", up, s.Listen, s.Share, s.Port)
	fmt.Fprintf(env.stdout, "SMB1:      %s\n", smb1)
	allow := "any address"
	if len(s.Allow) > 0 {
		allow = strings.Join(s.Allow, " ")
	}
	fmt.Fprintf(env.stdout, "allow:     %s\n", allow)
	fmt.Fprintf(env.stdout, "inbox:     %d file(s), %d bytes not yet taken in\n", s.Inbox, s.InboxBytes)
	fmt.Fprintf(env.stdout, "held:      %d scan(s), %d bytes waiting; %d incomplete, %d failed, %d delivered, %d refused (not a scan format: never delivered)\n",
		s.Counts[receiver.Held]+s.Counts[receiver.Failed]+s.Counts[receiver.Delivering], s.HeldBytes,
		s.Counts[receiver.Incomplete], s.Counts[receiver.Failed], s.Counts[receiver.Delivered], s.Counts[receiver.Refused])
	if s.OldestHeld != nil {
		fmt.Fprintf(env.stdout, "oldest:    %s (%s ago)\n", s.OldestHeld.Local().Format("2006-01-02 15:04:05"), time.Since(*s.OldestHeld).Round(time.Second))
	}
	if s.LastError != nil {
		fmt.Fprintf(env.stdout, "last delivery error: scan %d: %s\n", s.LastError.Scan, terminalSafe(s.LastError.Error))
	}
	for _, w := range s.Warnings {
		fmt.Fprintln(env.stdout, "WARNING:", w)
	}
	if s.Fault != "" {
		return exitFinding
	}
	return exitOK
}

// receiverPeers gives the receiver the registry's destinations (their
// passwords unsealed with the data dir's key) and smbcheck's dialer behind
// the store's failure ledger.
func receiverPeers(ctx context.Context, env environ, st *store.Store, dir, keyFile string) (receiver.Destinations, receiver.Remote, error) {
	if _, err := st.UnlockKey(ctx, store.KeyFile(keyFile, env.getenv, dir)); err != nil {
		return nil, nil, err
	}
	return st.Deliveries(), receiver.SMBRemote{Ledger: st.Ledger(), MaxFailures: smbcheck.DefaultMaxFailures}, nil
}

// receiverPrepare is the root side of the installed layout
// (scanwarden-smbd.service's ExecStartPre= and ExecReload=): it renders
// smb.conf from the root-owned config and the daemon's allowlist (data,
// validated), in root's own folder, and sets the MFP account.
func receiverPrepare(ctx context.Context, env environ, args []string) int {
	fs := flag.NewFlagSet("receiver prepare", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	configFile := fs.String("config", "", "the daemon's config (root's own): data_dir and [receiver] (required)")
	owner := fs.String("user", "scanwarden", "the daemon's Unix user: owner of the allowlist file, the share's force user, the group that may read smbd's log")
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "usage: scanwarden receiver prepare --config FILE [--user scanwarden]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(pos) != 0 || *configFile == "" {
		fmt.Fprintln(env.stderr, "scanwarden receiver prepare: want --config FILE and no argument")
		return exitUsage
	}
	fail := func(err error) int {
		fmt.Fprintln(env.stderr, "scanwarden receiver prepare:", err)
		return exitUsage
	}
	cfg, err := daemon.LoadConfig(*configFile)
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
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	res, err := receiver.PrepareShare(ctx, receiver.ShareSetup{
		Samba: receiver.SambaConfig{Dir: rc.SmbdDir, Inbox: receiver.Inbox(receiverDir(dir)), Listen: ip, Port: port, Share: rc.Share,
			Accounts: []receiver.Account{{Name: rc.Account, Password: rc.Password}}, SMB1: rc.SMB1},
		AllowFile: receiver.AllowFile(receiverDir(dir)),
		Owner:     *owner,
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
