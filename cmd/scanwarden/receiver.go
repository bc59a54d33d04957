package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/installed"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
)

const receiverUsage = `usage:
  scanwarden receiver run [--data-dir D] [--config FILE] --listen IP[:PORT] [--share scans] [--account mfp --password-file F] [--smb1] [--allow NET]… [--retry 30s]
  scanwarden receiver list [--data-dir D] [--json]
  scanwarden receiver deliver [DESTINATION] [--data-dir D] [--config FILE]
  scanwarden receiver force ID [--data-dir D]
  scanwarden receiver status [--data-dir D] [--config FILE | --password-file F] [--json]
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
"run" and "deliver" log on to the destinations as serve's forwarder does,
with the daemon's config (--config, default
` + installed.ConfigFile + ` when it exists; an explicit
one's data_dir too unless --data-dir is given): its [checks] max_failures,
failure_window and timeout, and its [ad] (Kerberos realm and KDC; the
account a user name names, so that deliveries and checks spend one
failed-logon budget per account), with the settings saved on the web page
laid over it; without a config, the defaults and no [ad].
"list" prints every scan, "deliver" tries now, "force" lets an incomplete
scan be delivered as it is, "status" says how the share is: it logs on to
the share as the MFP account (password from --password-file,
$SCANWARDEN_RECEIVER_PASSWORD, or [receiver] password_file of --config,
default ` + installed.ConfigFile + ` when readable) and names why smbd refuses
the MFPs, with the fix (the package to install, the folder, the passdb, the
unit to start); without a password it shows the running receiver's last
such probe. "prepare" (as
root, scanwarden-smbd.service runs it) renders smbd's config from the config
file and the allowlist the unprivileged daemon hands over as data (addresses,
and networks inside [receiver] allow or this box's own; anything else is
refused and the last good list stays),
in [receiver] smbd_dir, and puts the MFP account into that smbd's passdb.

Exit status: 0 ok, 1 "deliver" could not deliver everything or "status" found
the share refusing the MFPs, 2 bad arguments or setup.
`

// newReceiverCommand is a receiver command: --data-dir and --key-file.
func newReceiverCommand(env environ, name string) *subcommand {
	return newCommand(env, name, receiverUsage, withDataDir, withKeyFile)
}

// receiverDir is the receiver's part of the data dir.
func receiverDir(dataDir string) string { return filepath.Join(dataDir, "receiver") }

// parseListen reads --listen IP[:PORT] by samba.ParseListen.
func parseListen(s string) (netip.Addr, int, error) {
	ip, port, err := samba.ParseListen(s)
	if err != nil {
		return ip, port, fmt.Errorf("--listen %q: %w", s, err)
	}
	return ip, port, nil
}

// forwardConfigUsage is --config's help for "run" and "deliver".
const forwardConfigUsage = "the daemon's config: [checks] failure budget and [ad], as serve's deliveries log on (default " +
	installed.ConfigFile + " when it exists; its data_dir too when given)"

// daemonConfig is the daemon's config for "run" and "deliver" (see
// daemonConfigFile); nil without one. An installed config this user cannot
// read is said on stderr: deliveries then go without its [ad].
func (c *subcommand) daemonConfig(file string) (*config.Config, error) {
	cfg, note, err := daemonConfigFile(file, &c.data)
	if note != "" {
		fmt.Fprintf(c.env.stderr, "scanwarden %s: %s; deliveries go without its [checks] and [ad]\n", c.name, note)
	}
	return cfg, err
}

// forwardRemote is how "run" and "deliver" log on to the destinations: as
// serve's forwarder does (daemon.Forwarding over cfg with the settings
// saved on the web page laid over it), behind the store's failure ledger
// (its key unlocked); the defaults without a config. What cannot be used
// is said on stderr, and the deliveries go without it.
func (c *subcommand) forwardRemote(ctx context.Context, cfg *config.Config, st *store.Store) receiver.Remote {
	conf := config.Defaults()
	if cfg != nil {
		var skipped []string
		var err error
		conf, skipped, err = withStoredSettings(ctx, *cfg, st)
		if err != nil {
			conf = *cfg
			fmt.Fprintf(c.env.stderr, "scanwarden %s: the settings saved on the web page are not used: %v\n", c.name, err)
		}
		for _, s := range skipped {
			fmt.Fprintf(c.env.stderr, "scanwarden %s: a setting saved on the web page is not used: %s\n", c.name, s)
		}
	}
	r, err := daemon.Forwarding(conf, st.Ledger())
	if err != nil {
		fmt.Fprintf(c.env.stderr, "scanwarden %s: %v\n", c.name, err)
	}
	r.Logger = slog.New(slog.NewTextHandler(c.env.stderr, nil))
	return r
}

// withStoredSettings is cfg with the settings saved on the web page laid
// over it (st's key unlocked), as serve runs with them. It only reads:
// serve's overlay also pins and states faults. skipped names the stored
// values not used.
func withStoredSettings(ctx context.Context, cfg config.Config, st *store.Store) (out config.Config, skipped []string, err error) {
	saved, err := st.Settings().StoredSettings(ctx)
	if err != nil {
		return cfg, nil, err
	}
	return config.Overlay(cfg, saved, func(sealed []byte, section, key string) ([]byte, error) {
		return st.Key().Open(sealed, store.SettingLabel(section, key))
	})
}

// daemonConfigFile reads the daemon's config for a receiver command: file
// (--config: an error when it cannot be read; its data_dir is used unless
// --data-dir is given), else the installed config when it exists (a note
// saying why when this user cannot read it). nil when there is none.
func daemonConfigFile(file string, data *dataFlags) (cfg *config.Config, note string, err error) {
	explicit := file != ""
	if !explicit {
		if _, err := os.Stat(installed.ConfigFile); err != nil {
			return nil, "", nil
		}
		file = installed.ConfigFile
	}
	c, err := config.Load(file)
	switch {
	case err != nil && explicit:
		return nil, "", err
	case err != nil:
		return nil, fmt.Sprintf("%s cannot be read here (%v): run as root or as the daemon's user", file, err), nil
	}
	if explicit && data.dataDir == "" {
		data.dataDir = c.DataDir
	}
	return &c, "", nil
}

// linkLocalAllowed is the daemon's config's allow_link_local
// (dataFlags.daemonConfig): whether a destination written here may name a
// link-local address.
func linkLocalAllowed(data *dataFlags) bool {
	return data.daemonConfig().AllowLinkLocal
}
