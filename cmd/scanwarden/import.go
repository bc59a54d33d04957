package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
)

const importUsage = `usage: scanwarden import addressbook FILE --device NAME [--data-dir DIR] [--config FILE] [--dry-run] [--json]

Imports the SMB destinations of a Kyocera address-book export (Command Center
RX → Address Book → Export, or KYOCERA Net Viewer; XML, root element
DeviceAddressBook_v*) as the device NAME's destinations, passwords included
(sealed at rest). Contacts without an SMB destination are skipped and
counted; one-touch keys and groups are ignored. Each contact gets a unique
name from its display name; importing the same device's export again updates
those in place and removes (and lists) the contacts that are gone. All or
nothing: a malformed file changes nothing, and the error names the line and
the contact. --dry-run shows what would change. --config is the config
serve runs on (default the installed one): its data_dir (unless --data-dir
is given) and allow_link_local, whether a destination may name a link-local
address.

Exit status: 0 imported, 2 not imported (bad file or arguments).

flags:
`

func importAddressbook(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, importUsage, withDataDir, withKeyFile, withConfig)
	device := c.fs.String("device", "", "the device (MFP) the address book comes from; added when new")
	dryRun := c.fs.Bool("dry-run", false, "show what would change, change nothing")
	asJSON := c.fs.Bool("json", false, "print the result as JSON")
	pos, code, ok := c.parse(args, 1, "want one FILE and --device NAME")
	if !ok {
		return code
	}
	if *device == "" {
		return c.fail(errors.New("want one FILE and --device NAME"))
	}
	if err := registry.ValidName(*device); err != nil {
		return c.fail(fmt.Errorf("--device: %w", err))
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return c.fail(err)
	}
	book, err := registry.ReadAddressBook(f)
	f.Close()
	if err != nil {
		return c.fail(fmt.Errorf("%s: %w (nothing imported)", pos[0], err))
	}
	st, err := c.open(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer st.Close()
	st.AllowLinkLocal(linkLocalAllowed(&c.data))
	res, err := st.Destinations().ImportAddressBook(ctx, *device, book, *dryRun)
	if err != nil {
		return c.fail(fmt.Errorf("%w (nothing imported)", err))
	}
	if *asJSON {
		return c.printJSON(importJSON(res))
	}
	printImport(env.stdout, res)
	return exitOK
}

// importJSON is import's --json answer.
func importJSON(res store.ImportResult) any {
	out := struct {
		Device       string            `json:"device"`
		Destinations []destinationJSON `json:"destinations"`
		Skipped      int               `json:"skipped"`
		Removed      []destinationJSON `json:"removed"`
	}{Device: res.Device, Destinations: []destinationJSON{}, Skipped: res.Skipped, Removed: []destinationJSON{}}
	for _, d := range res.Put {
		out.Destinations = append(out.Destinations, destJSON(d))
	}
	for _, d := range res.Removed {
		out.Removed = append(out.Removed, destJSON(d))
	}
	return out
}

// printImport says what the import changed (or would).
func printImport(w io.Writer, res store.ImportResult) {
	verb := "imported"
	if res.DryRun {
		verb = "would import"
	}
	added := 0
	for _, n := range res.New {
		if n {
			added++
		}
	}
	humanf(w, "%s %d SMB destinations for device %s (%d new, %d updated), %d contacts without SMB skipped, %d removed\n",
		verb, len(res.Put), res.Device, added, len(res.Put)-added, res.Skipped, len(res.Removed))
	for i, d := range res.Put {
		mark := " "
		if res.New[i] {
			mark = "+"
		}
		humanf(w, "  %s %-24s %-40s user %s  (contact %s \"%s\")\n", mark, d.Name, destString(d.Target(nil)), userLabel(d.User), d.AddressBookID, d.DisplayName)
		if d.PasswordUnreadable != "" {
			humanf(w, "      %s (%s): imported without a password\n", registry.PasswordUnreadableMark, d.PasswordUnreadable)
		}
	}
	for _, d := range res.Removed {
		humanf(w, "  - %-24s %-40s (contact %s \"%s\" is no longer in the address book)\n", d.Name, destString(d.Target(nil)), d.AddressBookID, d.DisplayName)
	}
	if res.DryRun {
		fmt.Fprintln(w, "dry run: nothing changed")
	}
}
