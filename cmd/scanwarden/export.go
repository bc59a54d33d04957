package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
)

const exportUsage = `usage: scanwarden export addressbook --device NAME --fallback-host HOST [--fallback-port N]
                                    [--fallback-share scans] --fallback-user USER --fallback-password-file FILE
                                    [--bridged] [--from ORIGINAL.xml] [--out FILE] [--data-dir DIR]

Writes an address book in the Kyocera export format in which every SMB
destination of the device points at its folder on scanwarden's fallback
share (\\HOST\SHARE\<folder>, the folder "destination list --json" shows),
logging on as the fallback user, password encrypted the Kyocera way.
Switching the MFP to the fallback is one import in Command Center RX;
switching back is re-importing its original export. The format was built
from exports, not tested on a device.

With --from (the device's own export, as imported; recommended) the copy
keeps everything else of it — e-mail, FTP and fax fields, contacts without
SMB, one-touch keys, groups — and changes only the SMB fields. Without it,
the book holds the device's SMB destinations alone. With --bridged only the
device's bridged destinations (destination bridge NAME) point at the
fallback share; with --from the others stay as they were, without it the
book holds the bridged ones alone. The file holds the fallback password
in a form anyone can decode: it is written with mode 0600.

flags:
`

func exportAddressbook(ctx context.Context, env environ, name string, args []string) int {
	c := newSubcommand(env, name, exportUsage)
	device := c.fs.String("device", "", "the device whose destinations are exported")
	host := c.fs.String("fallback-host", "", "the fallback share's host, as the MFP should reach it")
	port := c.fs.Int("fallback-port", 445, "the fallback share's port")
	share := c.fs.String("fallback-share", samba.DefaultShare, "the fallback share")
	user := c.fs.String("fallback-user", "", "the login user name the MFP uses on the fallback share")
	pwFile := c.fs.String("fallback-password-file", "", "file holding that user's password (first line; - for stdin)")
	out := c.fs.String("out", "", "write the address book here (default: standard output)")
	from := c.fs.String("from", "", "the device's own export (as imported): keep all of it but the SMB fields")
	bridged := c.fs.Bool("bridged", false, "only the bridged destinations point at the fallback share (with --from the others stay as they were)")
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	switch {
	case *device == "" || *host == "" || *user == "" || *pwFile == "":
		return c.fail(errors.New("give --device, --fallback-host, --fallback-user and --fallback-password-file"))
	case *port < 1 || *port > 65535:
		return c.fail(fmt.Errorf("--fallback-port %d: out of range", *port))
	}
	pw, err := readSecretFile(env.stdin, *pwFile, "--fallback-password-file")
	if err != nil {
		return c.fail(err)
	}
	fb := registry.Fallback{Host: *host, Port: *port, Share: *share, User: *user, Password: pw}
	probe := registry.Destination{Name: "x", Host: fb.Host, Share: fb.Share, User: fb.User, Source: registry.SourceAdded}
	if err := probe.Validate(); err != nil {
		return c.fail(fmt.Errorf("fallback: %w", err))
	}
	dests, err := exportDestinations(ctx, c, *device)
	if err != nil {
		return c.fail(err)
	}
	if *bridged && !slices.ContainsFunc(dests, registry.Destination.Bridged) {
		return c.fail(fmt.Errorf("device %s has no bridged destination (scanwarden destination bridge NAME)", *device))
	}
	n, err := writeExport(env, *out, func(w io.Writer) (int, error) { return fallbackBook(w, dests, fb, *from, *bridged) })
	if err != nil {
		return c.fail(err)
	}
	if *out != "" {
		fmt.Fprintf(env.stderr, "wrote %d contacts of device %s to %s (each to \\\\%s\\%s\\<folder>)\n", n, *device, *out, *host, *share)
	}
	return exitOK
}

// exportDestinations are the stored device's destinations.
func exportDestinations(ctx context.Context, c *subcommand, device string) ([]registry.Destination, error) {
	st, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if _, err := st.Devices().Device(ctx, device); errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no device %q (scanwarden device list)", device)
	} else if err != nil {
		return nil, err
	}
	return st.Destinations().Destinations(ctx, device)
}

// fallbackBook writes the address book pointing dests (bridgedOnly: the
// bridged ones) at the fallback: from the device's own export when from is
// given (the others as they were), else their contacts alone. n: the
// contacts pointed there.
func fallbackBook(w io.Writer, dests []registry.Destination, fb registry.Fallback, from string, bridgedOnly bool) (n int, err error) {
	if from == "" {
		if bridgedOnly {
			dests = slices.DeleteFunc(slices.Clone(dests), func(d registry.Destination) bool { return !d.Bridged() })
		}
		contacts := registry.FallbackContacts(dests, fb)
		return len(contacts), registry.WriteAddressBook(w, contacts)
	}
	byID := map[string]string{}
	for _, d := range dests {
		if d.Source == registry.SourceImported && d.AddressBookID != "" {
			byID[d.AddressBookID] = d.Folder()
			if bridgedOnly && !d.Bridged() {
				byID[d.AddressBookID] = "" // known, kept as it is
			}
		}
	}
	f, err := os.Open(from)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err = registry.RewriteForFallback(f, w, func(id string) (string, bool) { v, ok := byID[id]; return v, ok }, fb)
	if err != nil {
		return n, fmt.Errorf("%s: %w", from, err)
	}
	return n, nil
}

// writeExport runs write on stdout (out ""), or on a temporary file
// renamed to out once complete.
func writeExport(env environ, out string, write func(io.Writer) (int, error)) (int, error) {
	if out == "" {
		return write(env.stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".addressbook-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	n, err := write(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	return n, err
}
