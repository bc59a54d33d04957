// Command servebench fills a data dir with N devices (SNMP on
// 127.0.0.1:BASE+i, community kyocera-idle: bench/serve.sh's snmpsimd) and
// M destinations, for measuring `scanwarden serve` at idle.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
)

func main() {
	dir := flag.String("data", "", "data dir to fill")
	devices := flag.Int("devices", 100, "devices")
	dests := flag.Int("destinations", 300, "destinations (spread over the devices)")
	base := flag.Int("snmp-base", 30000, "first device's SNMP port on 127.0.0.1")
	smbPort := flag.Int("smb-port", 1, "the destinations' SMB port on 127.0.0.1 (nothing listens: a refused check)")
	flag.Parse()
	if *dir == "" || *devices < 1 || *dests < 0 {
		fmt.Fprintln(os.Stderr, "usage: servebench -data DIR [-devices N] [-destinations M]")
		os.Exit(2)
	}
	ctx := context.Background()
	st, err := store.OpenDir(ctx, *dir)
	if err == nil {
		_, err = st.UnlockKey(ctx, filepath.Join(*dir, "secret.key"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer st.Close()
	for i := 0; i < *devices; i++ {
		d := registry.Device{Name: fmt.Sprintf("MFP%03d", i), Address: fmt.Sprintf("127.0.0.1:%d", *base+i),
			SNMP: registry.SNMP{Version: "2c", Community: scanwarden.NewSecret("kyocera-idle")}}
		if err := st.Devices().PutDevice(ctx, d); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	for i := 0; i < *dests; i++ {
		d := registry.Destination{Name: fmt.Sprintf("dest%03d", i), Host: "127.0.0.1", Port: *smbPort, Share: "scans",
			Path: fmt.Sprintf("user%03d", i), User: `OFFICE\scan`, Password: scanwarden.NewSecret("bench-password"),
			Device: fmt.Sprintf("MFP%03d", i%*devices), Source: registry.SourceAdded}
		if err := st.Destinations().PutDestination(ctx, d); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Printf("%d devices, %d destinations in %s\n", *devices, *dests, *dir)
}
