package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
)

const deviceUsage = `usage:
  scanwarden device add NAME [--address HOST[:PORT]] [--community-file FILE | --v3-user U --v3-auth-file F --v3-priv-file F]
                        [--sys-name NAME] [--workstation NAME] [--serial S] [--model M]
  scanwarden device list [--json]
  scanwarden device remove NAME [--with-destinations]
  (each takes --data-dir DIR and --key-file FILE)

The registry's devices (MFPs). add stores one (for one already stored, it
changes what is given and keeps the rest): its SNMP address
and credentials (sealed at rest; from files, never the command line), and the
NetBIOS name it sends (--sys-name, as "snmp probe" reads it; --workstation
overrides it) — its destinations are replayed with that name. remove refuses
a device that still has destinations unless --with-destinations.

flags:
`

func runDevice(ctx context.Context, env environ, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, deviceUsage)
		return exitUsage
	}
	sub, rest := args[0], args[1:]
	fs := flag.NewFlagSet("device "+sub, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, deviceUsage)
		fs.PrintDefaults()
	}
	df := registerDataFlags(fs)
	fail := func(err error) int {
		fmt.Fprintf(env.stderr, "scanwarden device %s: %v\n", sub, err)
		return exitUsage
	}
	switch sub {
	case "add":
		address := fs.String("address", "", "HOST[:PORT] the device answers SNMP on")
		version := fs.String("snmp-version", "", "SNMP version: 1, 2c or 3 (3 implied by --v3-user)")
		communityFile := fs.String("community-file", "", "file holding the v1/v2c community (first line; - for stdin)")
		v3User := fs.String("v3-user", "", "SNMPv3 user (authPriv)")
		v3AuthFile := fs.String("v3-auth-file", "", "file holding the v3 auth passphrase")
		v3PrivFile := fs.String("v3-priv-file", "", "file holding the v3 privacy passphrase")
		v3AuthProto := fs.String("v3-auth-proto", "SHA", "v3 auth protocol")
		v3PrivProto := fs.String("v3-priv-proto", "AES", "v3 privacy protocol")
		sysName := fs.String("sys-name", "", "the device's sysName: the NetBIOS name it sends as NTLM workstation")
		workstation := fs.String("workstation", "", "replay its destinations with this NetBIOS name instead of its sysName")
		serial := fs.String("serial", "", "serial number")
		model := fs.String("model", "", "model")
		pos, err := parseInterspersed(fs, rest)
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		if err != nil {
			return exitUsage
		}
		if len(pos) != 1 {
			return fail(errors.New("want one NAME"))
		}
		d := registry.Device{Name: pos[0], Address: *address, SysName: *sysName, Workstation: *workstation,
			Serial: *serial, Model: *model, SNMP: registry.SNMP{Version: *version}}
		if *communityFile != "" {
			if d.SNMP.Community, err = readSecretFile(env.stdin, *communityFile, "--community-file"); err != nil {
				return fail(err)
			}
		}
		if *v3User != "" {
			if *communityFile != "" {
				return fail(errors.New("--community-file and --v3-user exclude each other"))
			}
			d.SNMP.Version, d.SNMP.V3User, d.SNMP.V3AuthProto, d.SNMP.V3PrivProto = "3", *v3User, *v3AuthProto, *v3PrivProto
			for _, f := range []struct {
				file, flag string
				dst        *scanwarden.Secret
			}{{*v3AuthFile, "--v3-auth-file", &d.SNMP.V3Auth}, {*v3PrivFile, "--v3-priv-file", &d.SNMP.V3Priv}} {
				if f.file == "" {
					return fail(fmt.Errorf("--v3-user needs %s", f.flag))
				}
				if *f.dst, err = readSecretFile(env.stdin, f.file, f.flag); err != nil {
					return fail(err)
				}
			}
		}
		if err := d.Validate(); err != nil {
			return fail(err)
		}
		st, err := df.open(ctx, env)
		if err != nil {
			return fail(err)
		}
		defer st.Close()
		// Adding a device again changes what is given: what SNMP learnt
		// and the stored credentials stay unless replaced.
		if old, err := st.Device(ctx, d.Name); err == nil {
			for _, f := range []struct {
				dst *string
				old string
			}{
				{&d.Address, old.Address}, {&d.SysName, old.SysName}, {&d.Workstation, old.Workstation},
				{&d.Serial, old.Serial}, {&d.Model, old.Model},
			} {
				if *f.dst == "" {
					*f.dst = f.old
				}
			}
			if *communityFile == "" && *v3User == "" {
				v := d.SNMP.Version
				d.SNMP = old.SNMP
				if v != "" {
					d.SNMP.Version = v
				}
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return fail(err)
		}
		if err := st.PutDevice(ctx, d); err != nil {
			return fail(err)
		}
		humanf(env.stdout, "stored device %s\n", d.Name)
		return exitOK

	case "list":
		asJSON := fs.Bool("json", false, "print as JSON")
		pos, err := parseInterspersed(fs, rest)
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		if err != nil {
			return exitUsage
		}
		if len(pos) != 0 {
			return fail(errors.New("takes no arguments"))
		}
		st, err := df.open(ctx, env)
		if err != nil {
			return fail(err)
		}
		defer st.Close()
		devs, err := st.Devices(ctx)
		if err != nil {
			return fail(err)
		}
		type deviceJSON struct {
			Name         string `json:"name"`
			Address      string `json:"address"`
			SNMPVersion  string `json:"snmp_version"`
			SNMPCreds    bool   `json:"snmp_credentials"`
			Serial       string `json:"serial"`
			Model        string `json:"model"`
			SysName      string `json:"sys_name"`
			Workstation  string `json:"workstation"`
			Destinations int    `json:"destinations"`
		}
		out := []deviceJSON{}
		for _, d := range devs {
			ds, err := st.Destinations(ctx, d.Name)
			if err != nil {
				return fail(err)
			}
			out = append(out, deviceJSON{Name: d.Name, Address: d.Address, SNMPVersion: d.SNMP.Version,
				SNMPCreds: !d.SNMP.Community.IsZero() || !d.SNMP.V3Auth.IsZero(), Serial: d.Serial, Model: d.Model,
				SysName: d.SysName, Workstation: d.WorkstationName(), Destinations: len(ds)})
		}
		if *asJSON {
			return writeJSON(env, "device list", struct {
				Devices []deviceJSON `json:"devices"`
			}{out})
		}
		if len(out) == 0 {
			fmt.Fprintln(env.stdout, "no devices (scanwarden device add, or import addressbook --device)")
		}
		for _, d := range out {
			ws := d.Workstation
			if ws == "" {
				ws = "-"
			}
			humanf(env.stdout, "%-20s %-22s workstation %-16s %d destinations\n", d.Name, d.Address, ws, d.Destinations)
		}
		return exitOK

	case "remove":
		with := fs.Bool("with-destinations", false, "remove its destinations too")
		pos, err := parseInterspersed(fs, rest)
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		if err != nil {
			return exitUsage
		}
		if len(pos) != 1 {
			return fail(errors.New("want one NAME"))
		}
		st, err := df.open(ctx, env)
		if err != nil {
			return fail(err)
		}
		defer st.Close()
		err = st.RemoveDevice(ctx, pos[0], *with)
		var inUse *store.DeviceInUseError
		switch {
		case errors.Is(err, store.ErrNotFound):
			fmt.Fprintf(env.stderr, "scanwarden device remove: no device %q\n", pos[0])
			return exitFinding
		case errors.As(err, &inUse):
			fmt.Fprintf(env.stderr, "scanwarden device remove: %v (--with-destinations)\n", err)
			return exitFinding
		case err != nil:
			return fail(err)
		}
		humanf(env.stdout, "removed device %s\n", pos[0])
		return exitOK

	case "-h", "--help", "help":
		fmt.Fprint(env.stdout, deviceUsage)
		return exitOK
	}
	fmt.Fprintf(env.stderr, "scanwarden device: unknown subcommand %q\n\n%s", sub, deviceUsage)
	return exitUsage
}
