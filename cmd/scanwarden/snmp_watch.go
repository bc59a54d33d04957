package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

const snmpWatchUsage = `usage: scanwarden snmp watch (HOST[:PORT]... | --hosts FILE | --cidr CIDR [--port N]) [flags]

Watches Kyocera MFPs for send failures until interrupted or --cycles N poll
cycles have run: polls the devices every --interval (a --cidr is swept first,
bounded to 1,024 addresses at 50 a second, and its Kyocera devices watched),
and with --trap-listen / --smtp-listen also takes their SNMP traps and job-log
e-mails. Every new send failure is kept in the state store and printed with
its code book explanation; after each poll cycle a summary goes to stderr.
With --json, stdout carries one JSON object a line, "type" start, event,
cycle or stop.

Secrets come from files or the environment: --community-file or
SCANWARDEN_SNMP_COMMUNITY (default public), --v3-auth-file/--v3-priv-file or
SCANWARDEN_SNMP_V3_AUTH/_PRIV, --trap-community-file or
SCANWARDEN_TRAP_COMMUNITY, --trap-v3-auth-file/--trap-v3-priv-file or
SCANWARDEN_TRAP_V3_AUTH/_PRIV. --trap-listen needs a community, an SNMPv3
user (--trap-v3-user: authNoPriv, or authPriv with a priv passphrase; never
noAuth), or both; v3 traps no configured user authenticates are refused.

The listeners take traps and mail only from the watched devices' addresses
and the --allow networks (a mail relay); other senders are refused. Mail
from an --allow network that names no known device, and traps from an
--allow address that is no watched device, are stored as unverified and
not printed.

Exit status: 0 stopped cleanly, 1 nothing to watch (no Kyocera answered the
sweep), 2 bad arguments, the state store or a listener could not be opened.

flags:
`

// Bounds of a watch.
const (
	maxWatchHosts    = 65536                // HOST entries from arguments and --hosts
	maxSweepAddrs    = snmp.DefaultSweepMax // addresses of every --cidr together
	trapCommunityEnv = "SCANWARDEN_TRAP_COMMUNITY"
	trapV3AuthEnv    = "SCANWARDEN_TRAP_V3_AUTH"
	trapV3PrivEnv    = "SCANWARDEN_TRAP_V3_PRIV"
)

// watchArgs is a checked watch command line.
type watchArgs struct {
	targets  []snmp.Target // from HOST arguments and --hosts
	prefixes []netip.Prefix
	tmpl     snmp.Target // credentials, for the sweep
	port     uint16      // SNMP port of swept addresses
	interval time.Duration
	cycles   int
	trapAddr string
	trapComm []scanwarden.Secret
	trapUser *snmp.V3Auth   // SNMPv3 user traps may come from, nil: none
	allow    []netip.Prefix // senders the listeners take besides the devices
	smtpAddr string
	rules    *snmp.Rules
	data     dataFlags // the state store's
	json     bool
}

// errShown is a usage error the flag package has already printed.
type errShown struct{ error }

func runSNMPWatch(ctx context.Context, env environ, name string, args []string) int {
	a, err := parseWatchArgs(env, name, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		if !errors.As(err, new(errShown)) {
			fmt.Fprintf(env.stderr, "scanwarden snmp watch: %v\n", err)
		}
		return exitUsage
	}
	return watch(ctx, env, a)
}

// watchFlags are snmp watch's flags as given.
type watchFlags struct {
	c                            *subcommand
	snmp                         snmpFlags
	hostsFile                    string
	cidrs, trapCommFiles, allows []string
	port                         uint
	trapV3User, trapV3AuthFile   string
	trapV3PrivFile               string
	trapV3AuthProto              string
	trapV3PrivProto              string
}

func (f *watchFlags) register(a *watchArgs) {
	fs := f.c.fs
	f.snmp.register(fs)
	fs.StringVar(&f.hostsFile, "hosts", "", "file of devices, one HOST[:PORT] a line (# comments)")
	fs.Func("cidr", "sweep this network for Kyocera devices (repeatable; at most 1,024 addresses in all)", func(s string) error {
		f.cidrs = append(f.cidrs, s)
		return nil
	})
	fs.UintVar(&f.port, "port", snmp.DefaultPort, "SNMP port of the --cidr addresses")
	fs.DurationVar(&a.interval, "interval", time.Minute, "time between poll cycles (at least 1s)")
	fs.IntVar(&a.cycles, "cycles", 0, "stop after this many poll cycles (0: run until interrupted)")
	fs.StringVar(&a.trapAddr, "trap-listen", "", "take SNMP traps on this UDP ADDR:PORT (e.g. :162, 127.0.0.1:0)")
	fs.Func("trap-community-file", "file holding a community traps must carry (first line; repeatable); else "+trapCommunityEnv, func(s string) error {
		f.trapCommFiles = append(f.trapCommFiles, s)
		return nil
	})
	fs.StringVar(&f.trapV3User, "trap-v3-user", "", "SNMPv3 user whose traps are taken (authNoPriv, or authPriv with --trap-v3-priv-file)")
	fs.StringVar(&f.trapV3AuthFile, "trap-v3-auth-file", "", "file holding the trap v3 user's auth passphrase; else "+trapV3AuthEnv)
	fs.StringVar(&f.trapV3PrivFile, "trap-v3-priv-file", "", "file holding the trap v3 user's privacy passphrase (authPriv); else "+trapV3PrivEnv)
	fs.StringVar(&f.trapV3AuthProto, "trap-v3-auth-proto", "SHA", "trap v3 auth protocol: SHA, SHA224, SHA256, SHA384, SHA512, MD5")
	fs.StringVar(&f.trapV3PrivProto, "trap-v3-priv-proto", "AES", "trap v3 privacy protocol: AES, AES192, AES256, AES192C, AES256C, DES")
	fs.Func("allow", "network (CIDR) whose traps and mail are taken besides the watched devices', e.g. a mail relay (repeatable)", func(s string) error {
		f.allows = append(f.allows, s)
		return nil
	})
	fs.StringVar(&a.smtpAddr, "smtp-listen", "", "take the devices' job-log e-mails over SMTP on this TCP ADDR:PORT (e.g. :2525)")
	fs.BoolVar(&a.json, "json", false, "print one JSON object a line on stdout")
}

func parseWatchArgs(env environ, name string, args []string) (watchArgs, error) {
	f := watchFlags{c: newCommand(env, name, snmpWatchUsage, withDataDir, withStateDir)}
	var a watchArgs
	f.register(&a)
	pos, err := parseInterspersed(f.c.fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return watchArgs{}, err
		}
		return watchArgs{}, errShown{err}
	}
	steps := []func(*watchArgs) error{f.checkPoll, f.checkListeners}
	for _, step := range steps {
		if err := step(&a); err != nil {
			return a, err
		}
	}
	hosts, err := f.hosts(pos)
	if err != nil {
		return a, err
	}
	for _, step := range []func(*watchArgs) error{f.sweep, func(a *watchArgs) error { return f.checkCombos(a, hosts) }, f.allowed,
		func(a *watchArgs) error { return f.targets(a, hosts) }, f.traps} {
		if err := step(&a); err != nil {
			return a, err
		}
	}
	if a.rules, err = f.snmp.rules(); err != nil {
		return a, err
	}
	a.data = f.c.data
	_, err = a.data.dir(env)
	return a, err
}

// checkPoll checks --interval, --cycles and --port.
func (f *watchFlags) checkPoll(a *watchArgs) error {
	if err := (snmp.PollerConfig{Interval: a.interval}).Validate(); err != nil || a.interval == 0 {
		return fmt.Errorf("--interval %s: at least 1s", a.interval)
	}
	if a.cycles < 0 {
		return fmt.Errorf("--cycles %d: 0 (until interrupted) or more", a.cycles)
	}
	if f.port < 1 || f.port > 65535 {
		return fmt.Errorf("--port %d: 1..65535", f.port)
	}
	a.port = uint16(f.port)
	if f.c.given("port") && len(f.cidrs) == 0 {
		return errors.New("--port is the SNMP port of --cidr addresses; give a device's port as HOST:PORT")
	}
	return nil
}

// checkListeners checks --trap-listen and --smtp-listen: ADDR:PORT.
func (f *watchFlags) checkListeners(a *watchArgs) error {
	for _, l := range []struct{ flag, addr string }{{"--trap-listen", a.trapAddr}, {"--smtp-listen", a.smtpAddr}} {
		if l.addr == "" {
			continue
		}
		if _, p, err := net.SplitHostPort(l.addr); err != nil {
			return fmt.Errorf("%s %q: want ADDR:PORT: %w", l.flag, l.addr, err)
		} else if n, err := strconv.ParseUint(p, 10, 16); err != nil || (n == 0 && p != "0") {
			return fmt.Errorf("%s %q: port must be 0..65535", l.flag, l.addr)
		}
	}
	return nil
}

// hosts are the HOST arguments and --hosts' lines.
func (f *watchFlags) hosts(pos []string) ([]string, error) {
	hosts := pos
	if f.hostsFile != "" {
		more, err := readHostsFile(f.hostsFile)
		if err != nil {
			return nil, err
		}
		hosts = append(hosts, more...)
	}
	if len(hosts) > maxWatchHosts {
		return nil, fmt.Errorf("%d devices: at most %d", len(hosts), maxWatchHosts)
	}
	return hosts, nil
}

// sweep reads --cidr: at most maxSweepAddrs addresses in all.
func (f *watchFlags) sweep(a *watchArgs) error {
	left := maxSweepAddrs
	for _, c := range f.cidrs {
		p, err := samba.ParseAllowEntry(c)
		if err != nil {
			return fmt.Errorf("--cidr %q: %w", c, err)
		}
		as, err := snmp.ExpandPrefix(p, left)
		if err != nil {
			return fmt.Errorf("--cidr: %w (all --cidr together may hold %d)", err, maxSweepAddrs)
		}
		left -= len(as)
		a.prefixes = append(a.prefixes, p)
	}
	return nil
}

// checkCombos refuses what cannot be watched and flags given without the
// listener they belong to.
func (f *watchFlags) checkCombos(a *watchArgs, hosts []string) error {
	switch {
	case len(hosts) == 0 && len(a.prefixes) == 0 && a.trapAddr == "" && a.smtpAddr == "":
		return errors.New("nothing to watch: give HOST[:PORT]..., --hosts FILE or --cidr CIDR (or a listener: --trap-listen, --smtp-listen)")
	case len(f.trapCommFiles) > 0 && a.trapAddr == "":
		return errors.New("--trap-community-file needs --trap-listen")
	case (f.trapV3User != "" || f.trapV3AuthFile != "" || f.trapV3PrivFile != "") && a.trapAddr == "":
		return errors.New("--trap-v3-user needs --trap-listen")
	case (f.trapV3AuthFile != "" || f.trapV3PrivFile != "") && f.trapV3User == "":
		return errors.New("--trap-v3-auth-file and --trap-v3-priv-file need --trap-v3-user")
	case len(f.allows) > 0 && a.trapAddr == "" && a.smtpAddr == "":
		return errors.New("--allow needs --trap-listen or --smtp-listen")
	}
	return nil
}

// allowed reads --allow: networks.
func (f *watchFlags) allowed(a *watchArgs) error {
	for _, c := range f.allows {
		p, err := samba.ParseAllowEntry(c)
		if err != nil {
			return fmt.Errorf("--allow %s: %w", c, err)
		}
		a.allow = append(a.allow, p)
	}
	return nil
}

// targets are the devices to poll with the credentials, and the sweep's
// template.
func (f *watchFlags) targets(a *watchArgs, hosts []string) error {
	var err error
	if a.tmpl, err = f.snmp.credentials(f.c.env); err != nil {
		return err
	}
	for _, h := range hosts {
		host, p, err := snmp.ParseHostPort(h)
		if err != nil {
			return err
		}
		t := a.tmpl
		t.Host, t.Port = host, p
		if err := t.Validate(); err != nil {
			return err
		}
		a.targets = append(a.targets, t)
	}
	if len(a.prefixes) > 0 {
		t := a.tmpl
		t.Host, t.Port = a.prefixes[0].Addr().String(), a.port
		return t.Validate()
	}
	return nil
}

// traps reads what traps must carry: communities and the v3 user.
func (f *watchFlags) traps(a *watchArgs) error {
	env := f.c.env
	for _, file := range f.trapCommFiles {
		c, err := readSecretFile(env.stdin, file, "--trap-community-file")
		if err != nil {
			return err
		}
		a.trapComm = append(a.trapComm, c)
	}
	if len(f.trapCommFiles) == 0 && a.trapAddr != "" && env.getenv(trapCommunityEnv) != "" {
		a.trapComm = []scanwarden.Secret{scanwarden.NewSecret(env.getenv(trapCommunityEnv))}
	}
	if f.trapV3User != "" {
		u, err := f.trapUser()
		if err != nil {
			return err
		}
		a.trapUser = u
	}
	if a.trapAddr != "" && len(a.trapComm) == 0 && a.trapUser == nil {
		return errors.New("--trap-listen needs the community traps must carry: --trap-community-file FILE or " + trapCommunityEnv +
			" (or an SNMPv3 user: --trap-v3-user with --trap-v3-auth-file)")
	}
	return nil
}

// trapUser is the SNMPv3 user traps may come from.
func (f *watchFlags) trapUser() (*snmp.V3Auth, error) {
	env := f.c.env
	u := &snmp.V3Auth{User: f.trapV3User, AuthProto: f.trapV3AuthProto, PrivProto: f.trapV3PrivProto}
	var err error
	if u.AuthPass, err = readSecret(env, f.trapV3AuthFile, "--trap-v3-auth-file", trapV3AuthEnv); err != nil {
		return nil, fmt.Errorf("--trap-v3-user needs an auth passphrase (noAuth traps are not taken): %w", err)
	}
	if f.trapV3PrivFile != "" || env.getenv(trapV3PrivEnv) != "" {
		if u.PrivPass, err = readSecret(env, f.trapV3PrivFile, "--trap-v3-priv-file", trapV3PrivEnv); err != nil {
			return nil, err
		}
	}
	if err := u.Validate(); err != nil {
		return nil, fmt.Errorf("--trap-v3-user: %w", err)
	}
	return u, nil
}

// readHostsFile reads HOST[:PORT] entries, one a line; blank lines and
// what follows a # are skipped. Errors name the file and line.
func readHostsFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--hosts: %w", err)
	}
	defer f.Close()
	var hosts []string
	sc := bufio.NewScanner(io.LimitReader(f, 16<<20))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return nil, fmt.Errorf("--hosts %s:%d: one HOST[:PORT] a line", path, n)
		}
		if _, _, err := snmp.ParseHostPort(line); err != nil {
			return nil, fmt.Errorf("--hosts %s:%d: %w", path, n, err)
		}
		if hosts = append(hosts, line); len(hosts) > maxWatchHosts {
			return nil, fmt.Errorf("--hosts %s: more than %d devices", path, maxWatchHosts)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--hosts %s: %w", path, err)
	}
	return hosts, nil
}

// runWatch opens the store and the watcher, prints what it finds until ctx
// ends or the watcher is done, and closes both. Errors opening are "could
// not run" and name what failed (the flag and the address for a listener).
func watch(ctx context.Context, env environ, a watchArgs) int {
	fail := func(err error) int {
		if ctx.Err() != nil {
			// Interrupted while opening: a clean stop.
			newWatchOutput(env.stdout, env.stderr, a.json, a.rules.Book()).stop(0, 0, "interrupted")
			return exitOK
		}
		fmt.Fprintf(env.stderr, "scanwarden snmp watch: %v\n", err)
		return exitUsage
	}
	out := newWatchOutput(env.stdout, env.stderr, a.json, a.rules.Book())
	var h slog.Handler = slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
	if a.json {
		h = slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
	}
	st, err := a.data.open(ctx, env, false)
	if err != nil {
		return fail(fmt.Errorf("state store: %w", err))
	}
	defer st.Close()
	stored := st.Events().SNMP(store.DefaultDedupWindow)
	ws := newWatchStore(stored, out)
	drops, err := st.Events().SNMPEventDrops(ctx)
	if err != nil {
		return fail(err)
	}
	cfg := a.config(st, ws, slog.New(h))
	cfg.OnStart = func(s snmp.WatchStart) {
		out.start(watchStart{Type: "start", Devices: s.Devices, NotKyocera: s.NotKyocera, Interval: snmp.Duration(a.interval),
			Cycles: a.cycles, TrapListen: s.TrapListen, TrapCommunities: s.TrapCommunities, TrapV3Users: s.TrapV3Users, SMTPListen: s.SMTPListen, State: st.Path(), Pruned: drops})
	}
	cfg.OnCycle = func(c snmp.WatchCycle) {
		out.cycle(watchCycle{Type: "cycle", Cycle: c.Cycle, CycleStats: c.CycleStats, Traps: c.Traps, Mail: c.Mail,
			Pruned: stored.Dropped()})
	}
	w, err := snmp.NewWatcher(cfg)
	if err != nil {
		return fail(err)
	}
	if err := w.Open(ctx); err != nil {
		var le *snmp.ListenError
		if errors.As(err, &le) {
			flagName := map[string]string{"traps": "--trap-listen", "mail": "--smtp-listen"}[le.Listener]
			err = fmt.Errorf("%s %s: %w%s", flagName, le.Addr, le.Err, bindHint(le.Err))
		}
		return fail(err)
	}
	select {
	case <-ctx.Done():
	case <-w.Done():
	}
	w.Close()
	stats := w.Stats()
	switch err := w.Err(); {
	case errors.Is(err, snmp.ErrNothingToWatch):
		fmt.Fprintf(env.stderr, "scanwarden snmp watch: %v\n", err)
		return exitFinding
	case err == nil:
		out.stop(stats.Cycles, stats.NewEvents, "cycles done")
	case ctx.Err() != nil:
		out.stop(stats.Cycles, stats.NewEvents, "interrupted")
	default:
		return fail(err)
	}
	return exitOK
}

// config is the watcher's configuration from the command line, keeping
// what it finds in ws (over st) and printing each fresh event.
func (a watchArgs) config(st *store.Store, ws *watchStore, log *slog.Logger) snmp.WatcherConfig {
	cfg := snmp.DefaultWatcherConfig()
	cfg.Targets, cfg.Networks, cfg.SweepTarget = a.targets, a.prefixes, a.tmpl
	cfg.Sweep.Port, cfg.Sweep.Max = a.port, maxSweepAddrs
	cfg.Poller.Interval, cfg.Cycles = a.interval, a.cycles
	cfg.Rules, cfg.Store, cfg.OnEvent, cfg.Log = a.rules, ws, ws.event, log
	cfg.Listen(snmp.Listeners{TrapAddr: a.trapAddr, Communities: a.trapComm, User: a.trapUser,
		SMTPAddr: a.smtpAddr, Allow: a.allow, Replay: st.Replay()})
	return cfg
}

// bindHint tells the operator what to do about a refused privileged port.
func bindHint(err error) string {
	if errors.Is(err, os.ErrPermission) {
		return " (ports below 1024 need root or CAP_NET_BIND_SERVICE; or use a high port and forward to it)"
	}
	return ""
}
