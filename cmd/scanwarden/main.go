// Command scanwarden diagnoses and guards Kyocera scan-to-folder (SMB)
// destinations. Each subcommand is a thin shell over a package function.
package main

import (
	"context"
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

// commands is the CLI, in the order the help and the manual page list it:
// each command's lines in the help (its forms and what it does), and what
// runs it — a command, or a group of verbs with the usage the group prints.
// The help (usage), the manual's sections (manCommands) and the dispatch
// (run) are all read from it.
var commands = []command{
	{name: "serve", run: runServe, help: []helpLine{
		{"serve [--config FILE]", "run the appliance: scheduled checks, SNMP watch, incidents, notifications, web"}}},
	{name: "status", run: runStatus, help: []helpLine{
		{"status [--config FILE] [--json]", "one sentence: do the destinations accept scans; held scans; oldest incident"}}},
	{name: "notify", usage: notifyUsage, verbs: []command{{name: "test", run: notifyTest}}, help: []helpLine{
		{"notify test [--config FILE] [--channel webhook|mail]", "send a test notification on serve's channels"}}},
	{name: "check", run: runCheck, help: []helpLine{
		{"check //HOST[:PORT]/SHARE[/PATH] --user USER [flags]", "replay a scan destination's logon, layer by layer"},
		{"check --destination NAME [flags]", "replay a stored destination; its report is kept"}}},
	{name: "import", usage: importUsage, verbs: []command{{name: "addressbook", run: importAddressbook}}, help: []helpLine{
		{"import addressbook FILE --device NAME [flags]", "import a Kyocera address-book export's SMB destinations"}}},
	{name: "destination", usage: destinationUsage, verbs: []command{
		{name: "add", run: registryCommand(destinationUsage, destinationAdd, withConfig)},
		{name: "list", run: registryCommand(destinationUsage, destinationList, withConfig)},
		{name: "show", run: registryCommand(destinationUsage, destinationShow, withConfig)},
		{name: "remove", run: registryCommand(destinationUsage, destinationRemove, withConfig)},
		{name: "bridge", run: registryCommand(destinationUsage, destinationBridge, withConfig)},
	}, help: []helpLine{{"destination add|list|show|remove|bridge [flags]", "the stored scan destinations; bridge: through the fallback share"}}},
	{name: "device", usage: deviceUsage, verbs: []command{
		{name: "add", run: registryCommand(deviceUsage, deviceAdd, withConfig)},
		{name: "list", run: registryCommand(deviceUsage, deviceList, withConfig)},
		{name: "show", run: registryCommand(deviceUsage, deviceShow, withConfig)},
		{name: "remove", run: registryCommand(deviceUsage, deviceRemove, withConfig)},
	}, help: []helpLine{{"device add|list|show|remove [flags]", "the stored devices (MFPs) and their SMB profile"}}},
	{name: "export", usage: exportUsage, verbs: []command{{name: "addressbook", run: exportAddressbook}}, help: []helpLine{
		{"export addressbook --device NAME --fallback-host H ...", "an address book pointing the device at the fallback share"}}},
	{name: "secrets", usage: secretsUsage, verbs: []command{{name: "rotate", run: secretsRotate}}, help: []helpLine{
		{"secrets rotate", "re-encrypt the stored secrets under a new key"}}},
	{name: "ad", usage: adUsage, verbs: []command{{name: "user", run: adUser}, {name: "host", run: adHost}}, help: []helpLine{
		{"ad user NAME | ad host NAME [flags]", "read an account or a computer from Active Directory"}}},
	{name: "snmp", usage: snmpUsage, verbs: []command{
		{name: "probe", run: runSNMPProbe}, {name: "walk", run: runSNMPWalk}, {name: "watch", run: runSNMPWatch},
		{name: "codes", run: runSNMPCodes},
	}, help: []helpLine{
		{"snmp probe HOST[:PORT] | snmp walk HOST [flags]", "ask an MFP for inventory, status and send failures"},
		{"snmp watch HOST... | --hosts FILE | --cidr CIDR [flags]", "poll MFPs, take their traps and e-mails, store send failures"},
		{"snmp codes", "the Kyocera send-error code book"}}},
	{name: "admin", usage: adminUsage, verbs: []command{
		{name: "set-password", run: adminSetPassword}, {name: "setup-link", run: adminSetupLink},
		{name: "token", usage: adminUsage, verbs: []command{
			{name: "create", run: adminTokenCreate}, {name: "list", run: adminTokenList}, {name: "revoke", run: adminTokenRevoke},
		}},
	}, help: []helpLine{
		{"admin set-password | admin token create|list|revoke", "the web admin's password and API tokens"},
		{"admin setup-link", "print the one-time link that sets the web admin's password"}}},
	{name: "receiver", usage: receiverUsage, verbs: []command{
		{name: "run", run: receiverRun}, {name: "list", run: receiverList}, {name: "deliver", run: receiverDeliver},
		{name: "force", run: receiverForce}, {name: "status", run: receiverStatus}, {name: "prepare", run: receiverPrepare},
	}, help: []helpLine{
		{"receiver run|list|deliver|force|status|prepare [flags]", "the fallback scan share: hold scans, deliver them verified"}}},
	{name: "doctor", run: runDoctor, help: []helpLine{
		{"doctor [--config FILE] [--json]", "check this installation: config, data, key, Samba, ports, AD, SNMP"}}},
	{name: "version", alias: "--version", run: runVersion, help: []helpLine{{"version", "the version of this binary"}}},
}

// helpLines are help's own lines in the help, after the commands'.
var helpLines = []helpLine{
	{"help COMMAND", "flags of one command"},
	{"help --man | --man-config", "the manual pages scanwarden(8) and scanwarden.toml(5), as roff"},
}

// usage is the help: every command's lines (commands), then help's.
var usage = helpText(commands, helpLines)

// manCommands are every command path, in the order the manual page lists
// them (help is the page itself). Each one's text and flags come from the
// command itself ("-h"), so the page cannot drift from the flags;
// TestManPages checks that every flag the source registers is on the page.
var manCommands = commandPaths(nil, commands)

// run is main without the process: tests call it with their own streams.
// "help COMMAND…" is "COMMAND -h"; "help --man" and "help --man-config"
// print the manual pages.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runIn(ctx, environ{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}, args)
}

// runIn is run in env (a test's environment variables).
func runIn(ctx context.Context, env environ, args []string) int {
	if len(args) > 1 && args[0] == "help" {
		if len(args) == 2 && (args[1] == "--man" || args[1] == "--man-config") {
			return runManPage(ctx, env, args[1])
		}
		args = []string{args[1], "-h"}
	}
	return command{usage: usage, verbs: commands}.dispatch(ctx, env, "", args)
}

// environ is what a subcommand may touch of the process.
type environ struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}
