// Command scanwarden diagnoses and guards Kyocera scan-to-folder (SMB)
// destinations. Each subcommand is a thin shell over a package function.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0 // the diagnosis is "ok" / the peer answered
	exitFinding = 1 // the diagnosis found a problem / the peer did not answer
	exitUsage   = 2 // could not run: bad arguments or setup
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `scanwarden — find out why a Kyocera MFP cannot scan to its SMB folder

usage:
  scanwarden serve [--config FILE]                                  run the appliance: scheduled checks, SNMP watch, incidents, notifications, web
  scanwarden status [--json]                                        one sentence: do the destinations accept scans; held scans; oldest incident
  scanwarden notify test [--config FILE] [--channel webhook|mail]   send a test notification on serve's channels
  scanwarden check //HOST[:PORT]/SHARE[/PATH] --user USER [flags]   replay a scan destination's logon, layer by layer
  scanwarden check --destination NAME [flags]                       replay a stored destination; its report is kept
  scanwarden import addressbook FILE --device NAME [flags]          import a Kyocera address-book export's SMB destinations
  scanwarden destination add|list|show|remove|bridge [flags]        the stored scan destinations; bridge: through the fallback share
  scanwarden device add|list|show|remove [flags]                    the stored devices (MFPs) and their SMB profile
  scanwarden export addressbook --device NAME --fallback-host H ... an address book pointing the device at the fallback share
  scanwarden secrets rotate                                         re-encrypt the stored secrets under a new key
  scanwarden ad user NAME | ad host NAME [flags]                    read an account or a computer from Active Directory
  scanwarden snmp probe HOST[:PORT] | snmp walk HOST [flags]        ask an MFP for inventory, status and send failures
  scanwarden snmp watch HOST... | --hosts FILE | --cidr CIDR [flags] poll MFPs, take their traps and e-mails, store send failures
  scanwarden snmp codes                                             the Kyocera send-error code book
  scanwarden admin set-password | admin token create|list|revoke   the web admin's password and API tokens
  scanwarden admin setup-link                                       print the one-time link that sets the web admin's password
  scanwarden receiver run|list|deliver|force|status|prepare [flags] the fallback scan share: hold scans, deliver them verified
  scanwarden doctor [--config FILE] [--json]                        check this installation: config, data, key, Samba, ports, AD, SNMP
  scanwarden version                                                the version of this binary
  scanwarden help COMMAND                                           flags of one command
  scanwarden help --man | --man-config                              the manual pages scanwarden(8) and scanwarden.toml(5), as roff

Run "scanwarden COMMAND -h" for a command's flags.
`

// run is main without the process: tests call it with their own streams.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	if cmd == "help" && len(rest) == 1 && (rest[0] == "--man" || rest[0] == "--man-config") {
		return runManPage(ctx, environ{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}, rest[0])
	}
	if cmd == "help" && len(rest) > 0 {
		cmd, rest = rest[0], []string{"-h"}
	}
	env := environ{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	switch cmd {
	case "serve":
		return runServe(ctx, env, rest)
	case "status":
		return runStatus(ctx, env, rest)
	case "notify":
		return runNotify(ctx, env, rest)
	case "check":
		return runCheck(ctx, env, rest)
	case "ad":
		return runAD(ctx, env, rest)
	case "import":
		return runImport(ctx, env, rest)
	case "destination":
		return runDestination(ctx, env, rest)
	case "device":
		return runDevice(ctx, env, rest)
	case "export":
		return runExport(ctx, env, rest)
	case "secrets":
		return runSecrets(ctx, env, rest)
	case "snmp":
		return runSNMP(ctx, env, rest)
	case "admin":
		return runAdmin(ctx, env, rest)
	case "receiver":
		return runReceiver(ctx, env, rest)
	case "doctor":
		return runDoctor(ctx, env, rest)
	case "version", "--version":
		return runVersion(env, rest)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "scanwarden: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}

// environ is what a subcommand may touch of the process.
type environ struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}
