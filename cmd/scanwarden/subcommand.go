package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

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
// wants n of those (any number when n < 0; want says what is missing).
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

// verb checks that a command of one verb ("import addressbook", "secrets
// rotate") was given it: -h prints usage on stdout; anything else, on
// stderr, is a usage error. ok: go on with args[1:].
func verb(env environ, args []string, want, usage string) (code int, ok bool) {
	if len(args) > 0 && args[0] == want {
		return 0, true
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(env.stdout, usage)
		return exitOK, false
	}
	fmt.Fprint(env.stderr, usage)
	return exitUsage, false
}

// subcommands are a command's verbs: each makes its own subcommand.
type subcommands map[string]func(ctx context.Context, env environ, name string, args []string) int

// runSubcommands runs "scanwarden CMD SUB ARGS" by subs[SUB]: no SUB, or
// one CMD does not have, prints usage (exit 2); help prints it on stdout.
func runSubcommands(ctx context.Context, env environ, args []string, cmd, usage string, subs subcommands) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, usage)
		return exitUsage
	}
	if run, ok := subs[args[0]]; ok {
		return run(ctx, env, cmd+" "+args[0], args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(env.stdout, usage)
		return exitOK
	}
	fmt.Fprintf(env.stderr, "scanwarden %s: unknown subcommand %q\n\n%s", cmd, args[0], usage)
	return exitUsage
}

// registryCommand adapts a registry verb (destination add, device list) to
// runSubcommands: a newSubcommand with the group's usage.
func registryCommand(usage string, run func(context.Context, *subcommand, []string) int) func(context.Context, environ, string, []string) int {
	return func(ctx context.Context, env environ, name string, args []string) int {
		return run(ctx, newSubcommand(env, name, usage), args)
	}
}
