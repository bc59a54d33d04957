// Command rxbench measures the receiver against the reference tools, in the
// lab (bench/receiver.sh runs it):
//
//	rxbench forward SIZE_MIB   deliver one held scan of SIZE MiB to the lab
//	                           DC's share through the forwarder (write, rename,
//	                           read back, verify) and `smbclient put` the same
//	                           file, alternating (and, as a reference with
//	                           the forwarder's bytes on the wire, `get` it
//	                           back to /dev/null); peak RSS of the
//	                           forwarding process
//	                           (RXBENCH_ROUNDS rounds, default 3; each
//	                           round's CPU seconds of the forwarder, the
//	                           lab DC's smbd and the whole machine, and the
//	                           load average; RXBENCH_CPUPROFILE=P writes the
//	                           delivery's CPU profile to P.<round>;
//	                           RXBENCH_ORDER=smbclient-first puts first in
//	                           each round)
//	rxbench ingest N           N PDFs put by smbclient (one logon each) into a
//	                           running receiver; close → catalogued latency
//	                           (close-write seen by inotify → the file leaves
//	                           the inbox, which happens only after the commit)
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/scanwarden/scanwarden/receiver"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: rxbench forward SIZE_MIB | ingest N | deliver-child DIR DEST")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "forward":
		err = forward(os.Args[2])
	case "ingest":
		err = ingest(os.Args[2])
	case "deliver-child":
		err = deliverChild(os.Args[2])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rxbench:", err)
		os.Exit(1)
	}
}

func env(k string) string {
	v := os.Getenv(k)
	if v == "" {
		fmt.Fprintf(os.Stderr, "rxbench: %s unset: run inside the lab (testlab/lab exec bench/receiver.sh)\n", k)
		os.Exit(2)
	}
	return v
}

type dests []receiver.Destination

func (d dests) Destinations(context.Context) ([]receiver.Destination, error) { return d, nil }
