package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/scanwarden/scanwarden"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
)

const snmpUsage = `usage:
  scanwarden snmp probe HOST[:PORT] [--community-file F | --v3-user U --v3-auth-file F --v3-priv-file F] [--json]
  scanwarden snmp walk HOST[:PORT] --out FILE.snmprec [credentials flags]
  scanwarden snmp watch (HOST[:PORT]... | --hosts FILE | --cidr CIDR [--port N]) [--interval 60s]
                        [--trap-listen ADDR:PORT [--trap-community-file F] [--trap-v3-user U --trap-v3-auth-file F
                        [--trap-v3-priv-file F]]] [--smtp-listen ADDR:PORT]
                        [credentials flags] [--rules FILE] [--data-dir DIR] [--json] [--cycles N]
  scanwarden snmp codes [--json]

probe shows inventory, status, alerts and recent send failures; exit 0 when
the device answered, 1 when it did not, 2 on bad arguments.
walk records the device's relevant subtrees in snmpsim's .snmprec format.
watch polls the devices every interval, takes their traps and job-log
e-mails, keeps every new send failure in the state store and prints it with
its explanation, until interrupted; exit 0 when stopped, 2 on bad arguments
or a listener that cannot bind ("scanwarden snmp watch -h" for its flags).
Secrets come from files or SCANWARDEN_SNMP_COMMUNITY, SCANWARDEN_SNMP_V3_AUTH,
SCANWARDEN_SNMP_V3_PRIV, SCANWARDEN_TRAP_COMMUNITY, SCANWARDEN_TRAP_V3_AUTH,
SCANWARDEN_TRAP_V3_PRIV.
`

// snmpFlags are the flags shared by probe and walk.
type snmpFlags struct {
	communityFile            string
	version                  string
	v3User, v3AuthFile       string
	v3PrivFile               string
	v3AuthProto, v3PrivProto string
	v3Context                string
	timeout                  time.Duration
	retries                  int
	rulesFile                string
}

func (f *snmpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.communityFile, "community-file", "", "file holding the v1/v2c community (first line; - for stdin); else "+communityEnv+", else public")
	fs.StringVar(&f.version, "version", "", "SNMP version: 1, 2c (default), 3 (implied by --v3-user)")
	fs.StringVar(&f.v3User, "v3-user", "", "SNMPv3 user (authPriv)")
	fs.StringVar(&f.v3AuthFile, "v3-auth-file", "", "file holding the v3 auth passphrase; else "+v3AuthEnv)
	fs.StringVar(&f.v3PrivFile, "v3-priv-file", "", "file holding the v3 privacy passphrase; else "+v3PrivEnv)
	fs.StringVar(&f.v3AuthProto, "v3-auth-proto", "SHA", "v3 auth protocol: SHA, SHA224, SHA256, SHA384, SHA512, MD5")
	fs.StringVar(&f.v3PrivProto, "v3-priv-proto", "AES", "v3 privacy protocol: AES, AES192, AES256, AES192C, AES256C, DES")
	fs.StringVar(&f.v3Context, "v3-context", "", "v3 context name")
	fs.DurationVar(&f.timeout, "timeout", snmp.DefaultTimeout, "per-request timeout")
	fs.IntVar(&f.retries, "retries", snmp.DefaultRetries, "retries per request")
	fs.StringVar(&f.rulesFile, "rules", "", `JSON file of extra matching rules ({"rules":[…]}), tried before the defaults`)
}

// Environment variables that may hold the SNMP secrets.
const (
	communityEnv = "SCANWARDEN_SNMP_COMMUNITY"
	v3AuthEnv    = "SCANWARDEN_SNMP_V3_AUTH"
	v3PrivEnv    = "SCANWARDEN_SNMP_V3_PRIV"
)

// target builds the Target; errors are usage errors.
func (f *snmpFlags) target(env environ, hostport string) (snmp.Target, error) {
	host, port, err := snmp.ParseHostPort(hostport)
	if err != nil {
		return snmp.Target{}, err
	}
	t, err := f.credentials(env)
	if err != nil {
		return snmp.Target{}, err
	}
	t.Host, t.Port = host, port
	return t, t.Validate()
}

// credentials builds a Target without host from the flags, reading each
// secret once: from its file, else (v1/v2c: the command line, with a
// warning) from the environment. Errors are usage errors.
func (f *snmpFlags) credentials(env environ) (snmp.Target, error) {
	t := snmp.Target{Timeout: f.timeout, Retries: f.retries, Version: snmp.Version(f.version)}
	if f.v3User != "" || t.Version == snmp.V3 {
		if f.communityFile != "" {
			return snmp.Target{}, errors.New("--community-file and --v3-user exclude each other")
		}
		if f.v3User == "" {
			return snmp.Target{}, errors.New("v3 needs --v3-user and --v3-auth-file (and --v3-priv-file for authPriv)")
		}
		auth, err := readSecret(env, f.v3AuthFile, "--v3-auth-file", v3AuthEnv)
		if err != nil {
			return snmp.Target{}, fmt.Errorf("v3 needs an auth passphrase: %w", err)
		}
		a := &snmp.V3Auth{User: f.v3User, AuthProto: f.v3AuthProto, AuthPass: auth, PrivProto: f.v3PrivProto, ContextName: f.v3Context}
		if f.v3PrivFile != "" || env.getenv(v3PrivEnv) != "" {
			if a.PrivPass, err = readSecret(env, f.v3PrivFile, "--v3-priv-file", v3PrivEnv); err != nil {
				return snmp.Target{}, err
			}
		}
		t.Version, t.V3 = snmp.V3, a
		return t, nil
	}
	switch {
	case f.communityFile != "":
		c, err := readSecretFile(env.stdin, f.communityFile, "--community-file")
		if err != nil {
			return snmp.Target{}, err
		}
		t.Community = c
	case env.getenv(communityEnv) != "":
		t.Community = scanwarden.NewSecret(env.getenv(communityEnv))
	default:
		t.Community = scanwarden.NewSecret("public")
	}
	return t, nil
}

func (f *snmpFlags) rules() (*snmp.Rules, error) {
	var extra []snmp.Rule
	if f.rulesFile != "" {
		b, err := os.ReadFile(f.rulesFile)
		if err != nil {
			return nil, fmt.Errorf("--rules: %w", err)
		}
		var doc struct {
			Rules []snmp.Rule `json:"rules"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("--rules %s: %w", f.rulesFile, err)
		}
		extra = doc.Rules
	}
	return snmp.NewRules(snmp.DefaultCodeBook(), extra)
}

func runSNMPProbe(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, snmpUsage)
	var f snmpFlags
	f.register(c.fs)
	asJSON := c.fs.Bool("json", false, "print the result as JSON")
	pos, code, ok := c.parse(args, 1, "want exactly one HOST[:PORT]")
	if !ok {
		return code
	}
	t, err := f.target(env, pos[0])
	if err != nil {
		return c.fail(err)
	}
	rules, err := f.rules()
	if err != nil {
		return c.fail(err)
	}
	res, err := snmp.Probe(ctx, t, rules, snmp.ProbeOptions{})
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		if code := c.printJSON(res); code != exitOK {
			return code
		}
	} else {
		printProbe(env.stdout, res)
	}
	if !res.Answered {
		return exitFinding
	}
	return exitOK
}

// printProbe renders the result for a terminal; device strings are
// quoted (%q) so that nothing a device says can drive the terminal.
func printProbe(w io.Writer, r snmp.ProbeResult) {
	if !r.Answered {
		fmt.Fprintf(w, "%s: no answer: %s\n", r.Address, r.Error)
		return
	}
	fmt.Fprintf(w, "%s  kyocera=%v  model=%q  serial=%q  firmware=%q\n", r.Address, r.Kyocera, r.Model, r.Serial, r.Firmware)
	fmt.Fprintf(w, "  sys_name=%q  location=%q  mac=%s\n", r.SysName, r.SysLocation, r.MAC)
	if r.Error != "" {
		fmt.Fprintf(w, "  status: could not be read: %s\n", r.Error)
		return
	}
	fmt.Fprintf(w, "  status: %s %v\n", r.Status, r.Errors)
	for _, l := range r.Console {
		fmt.Fprintf(w, "  panel: %q\n", l)
	}
	for _, a := range r.Alerts {
		fmt.Fprintf(w, "  alert [%s] %s %s %q\n", a.Table, a.Severity, a.Code, a.Text)
	}
	if len(r.SendFailures) == 0 {
		fmt.Fprintln(w, "  send failures: none seen")
	}
	for _, s := range r.SendFailures {
		fmt.Fprintf(w, "  SEND FAILURE %s (%s) %q", s.Code, s.Source, s.Text)
		if s.Destination != "" {
			fmt.Fprintf(w, " to %q", s.Destination)
		}
		fmt.Fprintln(w)
		if s.Meaning != "" {
			fmt.Fprintf(w, "    %s\n    likely: %s\n    first check: %s (certainty %s)\n", s.Meaning, strings.Join(s.Causes, ", "), s.FirstCheck, s.Certainty)
		}
	}
}

func runSNMPWalk(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, snmpUsage)
	var f snmpFlags
	f.register(c.fs)
	out := c.fs.String("out", "", "write the .snmprec file here (required)")
	maxTime := c.fs.Duration("max-time", 5*time.Minute, "stop the walk after this long")
	pos, code, ok := c.parse(args, 1, "want exactly one HOST[:PORT]")
	if !ok {
		return code
	}
	if *out == "" {
		return c.fail(errors.New("--out FILE.snmprec is required"))
	}
	t, err := f.target(env, pos[0])
	if err != nil {
		return c.fail(err)
	}
	tmp := *out + ".tmp"
	file, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return c.fail(err)
	}
	st, werr := snmp.Walk(ctx, t, file, snmp.WalkOptions{MaxTime: *maxTime})
	cerr := file.Close()
	if werr == nil && st.Vars == 0 {
		werr = errors.New("the device returned no variables")
	}
	if werr != nil {
		os.Remove(tmp)
		return c.finding(werr)
	}
	if cerr == nil {
		cerr = os.Rename(tmp, *out)
	}
	if cerr != nil {
		os.Remove(tmp)
		return c.fail(cerr)
	}
	slog.New(slog.NewTextHandler(env.stderr, nil)).Info("walk done", "file", *out, "vars", st.Vars, "pdus", st.PDUs, "truncated", st.Truncated)
	return exitOK
}

func runSNMPCodes(_ context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, snmpUsage)
	asJSON := c.fs.Bool("json", false, "print the code book as JSON")
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	entries := snmp.DefaultCodeBook().Entries()
	if *asJSON {
		return c.printJSON(entries)
	}
	for _, e := range entries {
		fmt.Fprintf(env.stdout, "%s  [%s]  %s\n      causes: %s\n      check: %s\n      source: %s\n",
			e.Code, e.Certainty, e.Meaning, strings.Join(e.Causes, ", "), e.FirstCheck, e.Source)
	}
	return exitOK
}
