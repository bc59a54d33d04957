package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/scanwarden/scanwarden/store"
)

// subcommand is one command ("check", "destination add", "receiver run"):
// its flags, the data flags among them when it takes them, and how it words
// errors. Every command is built on it.
type subcommand struct {
	name string
	env  environ
	fs   *flag.FlagSet
	data dataFlags
}

// newCommand makes the flag set of "scanwarden NAME" with the data flags
// named (none, or withDataDir, withStateDir, withKeyFile); -h prints usage
// and the flags on stderr.
func newCommand(env environ, name, usage string, data ...dataFlag) *subcommand {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, usage)
		fs.PrintDefaults()
	}
	c := &subcommand{name: name, env: env, fs: fs}
	c.data.register(fs, data...)
	return c
}

// newSubcommand is newCommand for a registry command: --data-dir and
// --key-file.
func newSubcommand(env environ, name, usage string) *subcommand {
	return newCommand(env, name, usage, withDataDir, withKeyFile)
}

// parse parses args, flags before or after the positional arguments, and
// wants n of those (any number when n < 0; want says what is missing);
// then it reads --config when the command takes it (dataFlags.readConfig).
// When ok is false the command ends with code: -h, or a usage error
// already printed.
func (c *subcommand) parse(args []string, n int, want string) (pos []string, code int, ok bool) {
	pos, err := parseInterspersed(c.fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, exitOK, false
	case err != nil:
		return nil, exitUsage, false
	case n >= 0 && len(pos) != n:
		return nil, c.fail(errors.New(want)), false
	}
	if err := c.data.readConfig(); err != nil {
		return nil, c.failSafe(err), false
	}
	return pos, 0, true
}

// given reports whether the flag name was on the command line.
func (c *subcommand) given(name string) bool {
	set := false
	c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// fail prints err as the command's and is the exit code of a command that
// could not run.
func (c *subcommand) fail(err error) int {
	fmt.Fprintf(c.env.stderr, "scanwarden %s: %v\n", c.name, err)
	return exitUsage
}

// failSafe is fail for an error that may carry what a peer or a typed name
// said: its control characters are shown as escapes (humanf).
func (c *subcommand) failSafe(err error) int {
	humanf(c.env.stderr, "scanwarden %s: %s\n", c.name, err.Error())
	return exitUsage
}

// finding prints err as the command's and is the exit code of a command
// that ran and found a problem.
func (c *subcommand) finding(err error) int {
	fmt.Fprintf(c.env.stderr, "scanwarden %s: %v\n", c.name, err)
	return exitFinding
}

// missing is the answer to a name the registry does not hold (exit 1).
func (c *subcommand) missing(kind, name string) int {
	fmt.Fprintf(c.env.stderr, "scanwarden %s: no %s %q\n", c.name, kind, name)
	return exitFinding
}

// open opens the data dir's store with its secrets unlocked.
func (c *subcommand) open(ctx context.Context) (*store.Store, error) {
	return c.data.open(ctx, c.env, true)
}

// withStore opens the data dir's store (its key too when unlock), runs fn
// on it and closes it: a command's whole use of the store.
func (c *subcommand) withStore(ctx context.Context, unlock bool, fn func(st *store.Store) int) int {
	st, err := c.data.open(ctx, c.env, unlock)
	if err != nil {
		return c.fail(err)
	}
	defer st.Close()
	return fn(st)
}

// readStore is withStore for a command that only reads: the store is
// opened read-only (dataFlags.openRead).
func (c *subcommand) readStore(ctx context.Context, unlock bool, fn func(st *store.Store) int) int {
	st, err := c.data.openRead(ctx, c.env, unlock)
	if err != nil {
		return c.fail(err)
	}
	defer st.Close()
	return fn(st)
}

// printJSON prints v, indented, on stdout.
func (c *subcommand) printJSON(v any) int {
	enc := json.NewEncoder(c.env.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return c.fail(err)
	}
	return exitOK
}

// command is one entry of the CLI's table (commands): a command that
// runs, or a group of verbs ("destination", "admin token") that dispatch
// picks from.
type command struct {
	name  string
	alias string     // another name it answers to ("--version")
	help  []helpLine // its lines in the help (top-level commands)
	run   runFunc    // a command
	usage string     // a group's: printed for -h, no verb or an unknown one
	verbs []command  // a group's commands
}

// runFunc runs a command; name is its path ("destination add").
type runFunc func(ctx context.Context, env environ, name string, args []string) int

// helpLine is one line of the help: a command's form and what it does.
type helpLine struct{ form, what string }

// dispatch runs "scanwarden PATH VERB ARGS" by g's verb VERB. No verb, or
// one g does not have, prints g's usage on stderr (exit 2), after naming
// the unknown one; -h, --help and help print it on stdout.
func (g command) dispatch(ctx context.Context, env environ, path string, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, g.usage)
		return exitUsage
	}
	for _, c := range g.verbs {
		if args[0] != c.name && (c.alias == "" || args[0] != c.alias) {
			continue
		}
		name := strings.TrimPrefix(path+" "+c.name, " ")
		if c.run == nil {
			return c.dispatch(ctx, env, name, args[1:])
		}
		return c.run(ctx, env, name, args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(env.stdout, g.usage)
		return exitOK
	}
	if path == "" {
		fmt.Fprintf(env.stderr, "scanwarden: unknown command %q\n\n%s", args[0], g.usage)
	} else {
		fmt.Fprintf(env.stderr, "scanwarden %s: unknown subcommand %q\n\n%s", path, args[0], g.usage)
	}
	return exitUsage
}

// helpText is the help: the commands' lines, then help's own, each form
// in a column of its own.
func helpText(cmds []command, own []helpLine) string {
	var b strings.Builder
	b.WriteString("scanwarden — find out why a Kyocera MFP cannot scan to its SMB folder\n\nusage:\n")
	var lines []helpLine
	for _, c := range cmds {
		lines = append(lines, c.help...)
	}
	for _, l := range append(lines, own...) {
		fmt.Fprintf(&b, "  scanwarden %-54s %s\n", l.form, l.what)
	}
	b.WriteString("\nRun \"scanwarden COMMAND -h\" for a command's flags.\n")
	return b.String()
}

// commandPaths are the paths of every command under cmds, in their order,
// each prefixed by path.
func commandPaths(path []string, cmds []command) [][]string {
	var out [][]string
	for _, c := range cmds {
		p := append(append([]string(nil), path...), c.name)
		if c.run == nil {
			out = append(out, commandPaths(p, c.verbs)...)
		} else {
			out = append(out, p)
		}
	}
	return out
}

// registryCommand adapts a registry verb (destination add, device list) to
// a runFunc: a newSubcommand with the group's usage, and the data flags
// more (withConfig).
func registryCommand(usage string, run func(context.Context, *subcommand, []string) int, more ...dataFlag) runFunc {
	return func(ctx context.Context, env environ, name string, args []string) int {
		return run(ctx, newCommand(env, name, usage, append([]dataFlag{withDataDir, withKeyFile}, more...)...), args)
	}
}
