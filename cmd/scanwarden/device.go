package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
)

const deviceUsage = `usage:
  scanwarden device add NAME [--address HOST[:PORT]] [--community-file FILE | --v3-user U --v3-auth-file F --v3-priv-file F]
                        [--sys-name NAME] [--workstation NAME] [--serial S] [--model M]
                        [--device-max-dialect D] [--device-min-dialect D] [--device-no-encryption]
                        [--device-no-signing] [--device-ntlmv1] [--device-smb1-only] [--device-no-kerberos]
                        [--device-file-type T] [--device-clear FIELD,…|all]
  scanwarden device list [--json]
  scanwarden device show NAME [--json]
  scanwarden device remove NAME [--with-destinations]
  (each takes --data-dir DIR, --key-file FILE and --config FILE)

The registry's devices (MFPs). add stores one (for one already stored, it
changes what is given and keeps the rest — except that stored SNMP
credentials stay with their address: a new --address needs them given
again): its SNMP address
and credentials (sealed at rest; from files, never the command line), and the
NetBIOS name it sends (--sys-name, as "snmp probe" reads it; --workstation
overrides it) — its destinations are replayed with that name. remove refuses
a device that still has destinations unless --with-destinations.

Each device has an SMB profile — its highest and lowest dialect, signing,
encryption, NTLM level, Kerberos and the file type it scans to — and every
check of its destinations replays as that client. A value comes from the
device itself (seen: its logons and scans on the fallback share), from the
admin (the --device-* flags of add; it wins over what was seen until
--device-clear names it), or is its model family's default; show prints
each with where it came from.

--config is the config serve runs on (default the installed one): its
data_dir, unless --data-dir is given.

flags:
`

func deviceAdd(ctx context.Context, c *subcommand, args []string) int {
	address := c.fs.String("address", "", "HOST[:PORT] the device answers SNMP on")
	snmpFlags := registerDeviceSNMPFlags(c.fs)
	sysName := c.fs.String("sys-name", "", "the device's sysName: the NetBIOS name it sends as NTLM workstation")
	workstation := c.fs.String("workstation", "", "replay its destinations with this NetBIOS name instead of its sysName")
	serial := c.fs.String("serial", "", "serial number")
	model := c.fs.String("model", "", "model")
	profile := registerProfileFlags(c.fs)
	clearList := c.fs.String("device-clear", "", "comma-separated profile fields whose admin setting is dropped (max_dialect, min_dialect, signing, encryption, ntlm, kerberos, file_type; all)")
	pos, code, ok := c.parse(args, 1, "want one NAME")
	if !ok {
		return code
	}
	set, clear, err := profileChange(profile, c.given, *clearList)
	if err != nil {
		return c.fail(err)
	}
	d := registry.Device{Name: pos[0], Address: *address, SysName: *sysName, Workstation: *workstation,
		Serial: *serial, Model: *model}
	if d.SNMP, err = snmpFlags.read(c.env.stdin); err != nil {
		return c.fail(err)
	}
	if err := d.Validate(); err != nil {
		return c.fail(err)
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		return storeDevice(ctx, c, st, d, snmpFlags.given(), set, clear)
	})
}

// deviceSNMPFlags are device add's SNMP version and the files its
// credentials are read from (never the command line).
type deviceSNMPFlags struct {
	version, communityFile         string
	v3User, v3AuthFile, v3PrivFile string
	v3AuthProto, v3PrivProto       string
}

func registerDeviceSNMPFlags(fs *flag.FlagSet) *deviceSNMPFlags {
	f := &deviceSNMPFlags{}
	fs.StringVar(&f.version, "snmp-version", "", "SNMP version: 1, 2c or 3 (3 implied by --v3-user)")
	fs.StringVar(&f.communityFile, "community-file", "", "file holding the v1/v2c community (first line; - for stdin)")
	fs.StringVar(&f.v3User, "v3-user", "", "SNMPv3 user (authPriv)")
	fs.StringVar(&f.v3AuthFile, "v3-auth-file", "", "file holding the v3 auth passphrase")
	fs.StringVar(&f.v3PrivFile, "v3-priv-file", "", "file holding the v3 privacy passphrase")
	fs.StringVar(&f.v3AuthProto, "v3-auth-proto", "SHA", "v3 auth protocol")
	fs.StringVar(&f.v3PrivProto, "v3-priv-proto", "AES", "v3 privacy protocol")
	return f
}

// given reports whether credentials were given: they replace the stored
// ones.
func (f *deviceSNMPFlags) given() bool { return f.communityFile != "" || f.v3User != "" }

// read returns the SNMP settings the flags give, with the secrets read
// from their files.
func (f *deviceSNMPFlags) read(stdin io.Reader) (registry.SNMP, error) {
	s := registry.SNMP{Version: f.version}
	var err error
	if f.communityFile != "" {
		if s.Community, err = readSecretFile(stdin, f.communityFile, "--community-file"); err != nil {
			return registry.SNMP{}, err
		}
	}
	if f.v3User == "" {
		return s, nil
	}
	if f.communityFile != "" {
		return registry.SNMP{}, errors.New("--community-file and --v3-user exclude each other")
	}
	s.Version, s.V3User, s.V3AuthProto, s.V3PrivProto = "3", f.v3User, f.v3AuthProto, f.v3PrivProto
	for _, x := range []struct {
		file, flag string
		dst        *scanwarden.Secret
	}{{f.v3AuthFile, "--v3-auth-file", &s.V3Auth}, {f.v3PrivFile, "--v3-priv-file", &s.V3Priv}} {
		if x.file == "" {
			return registry.SNMP{}, fmt.Errorf("--v3-user needs %s", x.flag)
		}
		if *x.dst, err = readSecretFile(stdin, x.file, x.flag); err != nil {
			return registry.SNMP{}, err
		}
	}
	return s, nil
}

// profileChange reads device add's profile flags: the admin's settings
// and the fields whose setting is dropped, which may not overlap.
func profileChange(profile *profileFlags, given func(string) bool, clearList string) (map[registry.ProfileField]string, []registry.ProfileField, error) {
	set, err := profile.settings(given)
	if err != nil {
		return nil, nil, err
	}
	clear, err := profileClear(clearList)
	if err != nil {
		return nil, nil, fmt.Errorf("--device-clear: %w", err)
	}
	for _, f := range clear {
		if _, ok := set[f]; ok {
			return nil, nil, fmt.Errorf("--device-clear %s and a flag setting it exclude each other", f)
		}
	}
	return set, clear, nil
}

// storeDevice stores d. Adding a device again changes what is given: what
// SNMP learnt and the stored credentials stay unless replaced (credsGiven),
// and its profile as it will be is checked before anything is stored.
func storeDevice(ctx context.Context, c *subcommand, st *store.Store, d registry.Device, credsGiven bool,
	set map[registry.ProfileField]string, clear []registry.ProfileField) int {
	old, err := st.Devices().Device(ctx, d.Name)
	found := err == nil
	if !found && !errors.Is(err, store.ErrNotFound) {
		return c.fail(err)
	}
	for _, f := range clear {
		delete(old.Profile.Admin, f)
	}
	if err := old.ClientWith(set).Validate(); err != nil {
		return c.fail(fmt.Errorf("device %s: %w", d.Name, err))
	}
	if found {
		if d, err = d.Over(old, credsGiven); err != nil {
			// The stored credentials belong to the address they were
			// given for: never sent to another one.
			return c.fail(fmt.Errorf("device %s: its SNMP credentials were stored for address %s and are never sent to another: give them again with --address %s (--community-file, or --v3-user with --v3-auth-file and --v3-priv-file)",
				d.Name, old.Address, d.Address))
		}
	}
	if err := st.Devices().PutDevice(ctx, d); err != nil {
		return c.fail(err)
	}
	if len(set) > 0 || len(clear) > 0 {
		// The store refuses a combination its checks could not replay.
		if err := st.Devices().SetDeviceProfile(ctx, d.Name, set, clear); err != nil {
			return c.fail(err)
		}
	}
	humanf(c.env.stdout, "stored device %s\n", d.Name)
	return exitOK
}

func deviceList(ctx context.Context, c *subcommand, args []string) int {
	asJSON := c.fs.Bool("json", false, "print as JSON")
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	return c.readStore(ctx, true, func(st *store.Store) int {
		devs, err := st.Devices().Devices(ctx)
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
			// SMBProfile is its client as its checks replay it.
			SMBProfile registry.ProfileJSON `json:"smb_profile"`
		}
		out := []deviceJSON{}
		for _, d := range devs {
			ds, err := st.Destinations().Destinations(ctx, d.Name)
			if err != nil {
				return c.fail(err)
			}
			out = append(out, deviceJSON{Name: d.Name, Address: d.Address, SNMPVersion: d.SNMP.Version,
				SNMPCreds: !d.SNMP.Community.IsZero() || !d.SNMP.V3Auth.IsZero(), Serial: d.Serial, Model: d.Model,
				SysName: d.SysName, Workstation: d.WorkstationName(), Destinations: len(ds), SMBProfile: d.ProfileJSON()})
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
			humanf(c.env.stdout, "%-20s %-22s workstation %-16s %d destinations\n", d.Name, d.Address, orDash(d.Workstation), d.Destinations)
		}
		return exitOK
	})
}

// deviceShow prints one device with its SMB profile.
func deviceShow(ctx context.Context, c *subcommand, args []string) int {
	asJSON := c.fs.Bool("json", false, "print as JSON")
	pos, code, ok := c.parse(args, 1, "want one NAME")
	if !ok {
		return code
	}
	return c.readStore(ctx, true, func(st *store.Store) int {
		d, err := st.Devices().Device(ctx, pos[0])
		if errors.Is(err, store.ErrNotFound) {
			return c.missing("device", pos[0])
		}
		if err != nil {
			return c.fail(err)
		}
		ds, err := st.Destinations().Destinations(ctx, d.Name)
		if err != nil {
			return c.fail(err)
		}
		if *asJSON {
			return c.printJSON(struct {
				Name         string               `json:"name"`
				Address      string               `json:"address"`
				Model        string               `json:"model"`
				Serial       string               `json:"serial"`
				SysName      string               `json:"sys_name"`
				Workstation  string               `json:"workstation"`
				Destinations int                  `json:"destinations"`
				SMBProfile   registry.ProfileJSON `json:"smb_profile"`
			}{d.Name, d.Address, d.Model, d.Serial, d.SysName, d.WorkstationName(), len(ds), d.ProfileJSON()})
		}
		humanf(c.env.stdout, "%s  address %s  model %s  %d destinations\n", d.Name, orDash(d.Address), orDash(d.Model), len(ds))
		fmt.Fprintln(c.env.stdout, "SMB profile (every check of its destinations replays as this client):")
		printProfile(c.env.stdout, d)
		return exitOK
	})
}

// profileClear reads --device-clear: profile field names, or all.
func profileClear(s string) ([]registry.ProfileField, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if strings.TrimSpace(s) == "all" {
		return registry.ProfileFields, nil
	}
	var out []registry.ProfileField
	for _, part := range strings.Split(s, ",") {
		f, err := registry.ParseProfileField(part)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func deviceRemove(ctx context.Context, c *subcommand, args []string) int {
	with := c.fs.Bool("with-destinations", false, "remove its destinations too")
	pos, code, ok := c.parse(args, 1, "want one NAME")
	if !ok {
		return code
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		err := st.Devices().RemoveDevice(ctx, pos[0], *with)
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
