package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/store"
)

// scanJSON is one scan in `receiver list --json`: a contract.
type scanJSON struct {
	ID          int64      `json:"id"`
	Destination string     `json:"destination"`
	File        string     `json:"file"`
	Size        int64      `json:"size"`
	SHA256      string     `json:"sha256"`
	State       string     `json:"state"`
	ReceivedAt  time.Time  `json:"received_at"`
	DeliveredAt *time.Time `json:"delivered_at"`
	Error       string     `json:"error"`
}

func receiverList(ctx context.Context, env environ, name string, args []string) int {
	c := newReceiverCommand(env, name)
	asJSON := c.fs.Bool("json", false, "print JSON")
	if pos, code, ok := c.parse(args, -1, ""); !ok {
		return code
	} else if len(pos) != 0 {
		return c.fail(fmt.Errorf("unexpected argument %s", pos[0]))
	}
	return c.readStore(ctx, false, func(st *store.Store) int {
		rows, err := st.Scans().Scans(ctx, receiver.ScanQuery{})
		if err != nil {
			return c.fail(err)
		}
		out := make([]scanJSON, 0, len(rows))
		for _, r := range rows {
			j := scanJSON{ID: r.ID, Destination: r.Destination, File: r.File, Size: r.Size, SHA256: r.SHA256,
				State: string(r.State), ReceivedAt: r.ReceivedAt, Error: r.Error}
			if !r.DeliveredAt.IsZero() {
				t := r.DeliveredAt
				j.DeliveredAt = &t
			}
			out = append(out, j)
		}
		if *asJSON {
			return c.printJSON(out)
		}
		printScans(env.stdout, out)
		return exitOK
	})
}

func printScans(w io.Writer, scans []scanJSON) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tDESTINATION\tFILE\tSIZE\tRECEIVED\tNOTE")
	for _, j := range scans {
		dest := j.Destination
		if dest == "" {
			dest = receiver.Unsorted
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", j.ID, j.State, terminalSafe(dest), terminalSafe(j.File), j.Size,
			j.ReceivedAt.Local().Format("2006-01-02 15:04:05"), terminalSafe(j.Error))
	}
	tw.Flush()
}

func receiverDeliver(ctx context.Context, env environ, name string, args []string) int {
	c := newReceiverCommand(env, name)
	configFile := c.fs.String("config", "", forwardConfigUsage)
	pos, code, ok := c.parse(args, -1, "")
	if !ok {
		return code
	}
	if len(pos) > 1 {
		return c.fail(errors.New("at most one destination"))
	}
	dest := ""
	if len(pos) == 1 {
		dest = pos[0]
	}
	daemonCfg, err := c.daemonConfig(*configFile)
	if err != nil {
		return c.fail(err)
	}
	dir, err := c.data.dir(env)
	if err != nil {
		return c.fail(err)
	}
	return c.withStore(ctx, true, func(st *store.Store) int {
		n, err := receiver.DeliverNow(ctx, receiverDir(dir), st.Scans(), st.Destinations().Deliveries(), c.forwardRemote(ctx, daemonCfg, st), dest)
		fmt.Fprintf(env.stdout, "delivered %d scan(s)\n", n)
		if err != nil {
			return c.finding(err)
		}
		return exitOK
	})
}

func receiverForce(ctx context.Context, env environ, name string, args []string) int {
	c := newReceiverCommand(env, name)
	pos, code, ok := c.parse(args, 1, "want one scan ID")
	if !ok {
		return code
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return c.fail(fmt.Errorf("bad ID %s", pos[0]))
	}
	dir, err := c.data.dir(env)
	if err != nil {
		return c.fail(err)
	}
	return c.withStore(ctx, false, func(st *store.Store) int {
		sc, err := receiver.Force(ctx, receiverDir(dir), st.Scans(), id)
		if err != nil {
			return c.finding(err)
		}
		fmt.Fprintf(env.stdout, "scan %d (%s) is held and will be delivered as it is\n", sc.ID, terminalSafe(sc.File))
		return exitOK
	})
}
