package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

// destinationBridge bridges a destination (or, --off, ends its bridge):
// stored, audited; serve re-reads the registry within its refresh and
// checks it at once as the bridge.
func destinationBridge(ctx context.Context, c *subcommand, args []string) int {
	off := c.fs.Bool("off", false, "end the bridge: the MFP scans to the real folder again, checked as the MFP")
	pos, code, ok := c.parse(args, 1, "want one NAME")
	if !ok {
		return code
	}
	name := pos[0]
	return c.withStore(ctx, true, func(st *store.Store) int {
		d, err := st.Destinations().Destination(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return c.missing("destination", name)
		}
		if err != nil {
			return c.fail(err)
		}
		changed, err := st.Destinations().SetBridged(ctx, d.Name, !*off)
		if err != nil {
			return c.fail(err)
		}
		w := c.env.stdout
		if *off {
			if changed {
				auditCLI(ctx, st, "destination.unbridge", d.Name)
			}
			humanf(w, "%s: not bridged — its checks replay the MFP's client again, and its MFP must scan to the real folder: re-import the MFP's original address book (or switch that contact back on its panel)\n", d.Name)
			return exitOK
		}
		if changed {
			auditCLI(ctx, st, "destination.bridge", d.Name)
		}
		humanf(w, "%s: bridged — its MFP scans to the fallback share's folder %q and scanwarden delivers to %s with its own client, verified; its health is the bridge's own\n",
			d.Name, d.Folder(), d.URL())
		if d.Device != "" {
			humanf(w, "point the MFP there: scanwarden export addressbook --device %s --bridged --from ORIGINAL.xml --fallback-host HOST --fallback-user USER --fallback-password-file FILE, then import it in Command Center RX\n", d.Device)
		}
		if last, err := latestReport(ctx, st, d.Name); err == nil && last != nil {
			if own := daemon.OwnVerdict(last.Report); own != nil && own.Cause != scanwarden.CauseOK {
				humanf(w, "note: scanwarden's own client failed there too at the last check (%s): the bridge will not deliver until that is fixed\n", own.Cause)
			}
		}
		fmt.Fprintln(w, "serve picks it up within 30 s (at once after systemctl reload scanwarden) and checks it as the bridge")
		return exitOK
	})
}

// printBridge prints what a report says about the bridge: its offer,
// or a bridged destination's own health.
func printBridge(w io.Writer, b *smbcheck.Bridge) {
	switch {
	case b == nil:
	case b.Offered:
		humanf(w, "bridge: %s\n", b.Message)
		if b.Command != "" {
			humanf(w, "  bridge it: %s\n", b.Command)
		}
	case b.Active:
		humanf(w, "bridge: %s\n", b.Message)
	case b.Message != "":
		humanf(w, "bridge: %s\n", b.Message)
	}
}

// lastShareCheck is the fallback share's last probe as the receiver beside
// this data dir recorded it (nil: none runs there, or the dir is unknown).
func lastShareCheck(c *subcommand) *samba.ShareHealth {
	dir, err := c.data.dir(c.env)
	if err != nil {
		return nil
	}
	return receiver.LastShareCheck(receiverDir(dir))
}

// withBridge adds d's bridge (when bridged) to its JSON: since when, and
// its own health.
func withBridge(ctx context.Context, st *store.Store, j *destinationJSON, d registry.Destination, share *samba.ShareHealth, stuck time.Duration) error {
	if !d.Bridged() {
		return nil
	}
	at := d.BridgedAt.UTC()
	h, err := daemon.BridgeHealth(ctx, st, d, share, stuck, time.Now())
	if err != nil {
		return err
	}
	j.BridgedAt, j.Bridge = &at, &h
	return nil
}

// bridgeStuckAfter is the daemon's config's [receiver] bridge_stuck_after
// (dataFlags.daemonConfig), as serve judges the bridges with it.
func bridgeStuckAfter(data *dataFlags) time.Duration {
	return data.daemonConfig().Receiver.BridgeStuckAfter.D()
}
