package main

import (
	"context"
	"errors"
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
changes what is given and keeps the rest — except that stored SNMP
credentials stay with their address: a new --address needs them given
again): its SNMP address
and credentials (sealed at rest; from files, never the command line), and the
NetBIOS name it sends (--sys-name, as "snmp probe" reads it; --workstation
overrides it) — its destinations are replayed with that name. remove refuses
a device that still has destinations unless --with-destinations.

flags:
`

func runDevice(ctx context.Context, env environ, args []string) int {
	return runSubcommands(ctx, env, args, "device", deviceUsage, subcommands{
		"add":    registryCommand(deviceUsage, deviceAdd),
		"list":   registryCommand(deviceUsage, deviceList),
		"remove": registryCommand(deviceUsage, deviceRemove),
	})
}

func deviceAdd(ctx context.Context, c *subcommand, args []string) int {
	address := c.fs.String("address", "", "HOST[:PORT] the device answers SNMP on")
	version := c.fs.String("snmp-version", "", "SNMP version: 1, 2c or 3 (3 implied by --v3-user)")
	communityFile := c.fs.String("community-file", "", "file holding the v1/v2c community (first line; - for stdin)")
	v3User := c.fs.String("v3-user", "", "SNMPv3 user (authPriv)")
	v3AuthFile := c.fs.String("v3-auth-file", "", "file holding the v3 auth passphrase")
	v3PrivFile := c.fs.String("v3-priv-file", "", "file holding the v3 privacy passphrase")
	v3AuthProto := c.fs.String("v3-auth-proto", "SHA", "v3 auth protocol")
	v3PrivProto := c.fs.String("v3-priv-proto", "AES", "v3 privacy protocol")
	sysName := c.fs.String("sys-name", "", "the device's sysName: the NetBIOS name it sends as NTLM workstation")
	workstation := c.fs.String("workstation", "", "replay its destinations with this NetBIOS name instead of its sysName")
	serial := c.fs.String("serial", "", "serial number")
	model := c.fs.String("model", "", "model")
	pos, code, ok := c.parse(args, 1, "want one NAME")
	if !ok {
		return code
	}
	d := registry.Device{Name: pos[0], Address: *address, SysName: *sysName, Workstation: *workstation,
		Serial: *serial, Model: *model, SNMP: registry.SNMP{Version: *version}}
	var err error
	if *communityFile != "" {
		if d.SNMP.Community, err = readSecretFile(c.env.stdin, *communityFile, "--community-file"); err != nil {
			return c.fail(err)
		}
	}
	if *v3User != "" {
		if *communityFile != "" {
			return c.fail(errors.New("--community-file and --v3-user exclude each other"))
		}
		d.SNMP.Version, d.SNMP.V3User, d.SNMP.V3AuthProto, d.SNMP.V3PrivProto = "3", *v3User, *v3AuthProto, *v3PrivProto
		for _, f := range []struct {
			file, flag string
			dst        *scanwarden.Secret
		}{{*v3AuthFile, "--v3-auth-file", &d.SNMP.V3Auth}, {*v3PrivFile, "--v3-priv-file", &d.SNMP.V3Priv}} {
			if f.file == "" {
				return c.fail(fmt.Errorf("--v3-user needs %s", f.flag))
			}
			if *f.dst, err = readSecretFile(c.env.stdin, f.file, f.flag); err != nil {
				return c.fail(err)
			}
		}
	}
	if err := d.Validate(); err != nil {
		return c.fail(err)
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		// Adding a device again changes what is given: what SNMP learnt
		// and the stored credentials stay unless replaced.
		if old, err := st.Device(ctx, d.Name); err == nil {
			given := *communityFile != "" || *v3User != ""
			if d, err = d.Over(old, given); err != nil {
				// The stored credentials belong to the address they were
				// given for: never sent to another one.
				return c.fail(fmt.Errorf("device %s: its SNMP credentials were stored for address %s and are never sent to another: give them again with --address %s (--community-file, or --v3-user with --v3-auth-file and --v3-priv-file)",
					d.Name, old.Address, d.Address))
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return c.fail(err)
		}
		if err := st.PutDevice(ctx, d); err != nil {
			return c.fail(err)
		}
		humanf(c.env.stdout, "stored device %s\n", d.Name)
		return exitOK
	})
}

func deviceList(ctx context.Context, c *subcommand, args []string) int {
	asJSON := c.fs.Bool("json", false, "print as JSON")
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	return c.readStore(ctx, true, func(st *store.Store) int {
		devs, err := st.Devices(ctx)
		if err != nil {
			return c.fail(err)
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
				return c.fail(err)
			}
			out = append(out, deviceJSON{Name: d.Name, Address: d.Address, SNMPVersion: d.SNMP.Version,
				SNMPCreds: !d.SNMP.Community.IsZero() || !d.SNMP.V3Auth.IsZero(), Serial: d.Serial, Model: d.Model,
				SysName: d.SysName, Workstation: d.WorkstationName(), Destinations: len(ds)})
		}
		if *asJSON {
			return c.printJSON(struct {
				Devices []deviceJSON `json:"devices"`
			}{out})
		}
		if len(out) == 0 {
			fmt.Fprintln(c.env.stdout, "no devices (scanwarden device add, or import addressbook --device)")
		}
		for _, d := range out {
			ws := d.Workstation
			if ws == "" {
				ws = "-"
			}
			humanf(c.env.stdout, "%-20s %-22s workstation %-16s %d destinations\n", d.Name, d.Address, ws, d.Destinations)
		}
		return exitOK
	})
}

func deviceRemove(ctx context.Context, c *subcommand, args []string) int {
	with := c.fs.Bool("with-destinations", false, "remove its destinations too")
	pos, code, ok := c.parse(args, 1, "want one NAME")
	if !ok {
		return code
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		err := st.RemoveDevice(ctx, pos[0], *with)
		var inUse *store.DeviceInUseError
		switch {
		case errors.Is(err, store.ErrNotFound):
			return c.missing("device", pos[0])
		case errors.As(err, &inUse):
			fmt.Fprintf(c.env.stderr, "scanwarden %s: %v (--with-destinations)\n", c.name, err)
			return exitFinding
		case err != nil:
			return c.fail(err)
		}
		humanf(c.env.stdout, "removed device %s\n", pos[0])
		return exitOK
	})
}
