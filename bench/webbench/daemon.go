package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

// runDaemon fills a fresh data dir (devices, destinations with a report
// each, events, scans), runs the whole daemon on it and prints its URL and
// a session cookie: the figures then include the store's queries.
func runDaemon(dir string, nDev, nDest, nEv, nScan int) {
	ctx := context.Background()
	data := filepath.Join(dir, "data")
	st, err := store.OpenDir(ctx, data)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := st.UnlockKey(ctx, filepath.Join(data, "secret.key")); err != nil {
		log.Fatal(err)
	}
	now := time.Now()
	t0 := time.Now()
	sink := st.Events().SNMP(0)
	for i := 0; i < nDev; i++ {
		addr := fmt.Sprintf("127.0.%d.%d:161", i/250, i%250+1)
		must(st.Devices().PutDevice(ctx, registry.Device{Name: fmt.Sprintf("mfp%03d", i), Address: addr, SysName: fmt.Sprintf("MFP%03d", i)}))
		must(sink.RecordDevice(ctx, snmp.Inventory{Address: addr, Kyocera: true, Model: "TASKalfa 3253ci", Serial: fmt.Sprintf("W4X0A%05d", i),
			SysName: fmt.Sprintf("MFP%03d", i), SeenAt: now}))
	}
	for i := 0; i < nDest; i++ {
		name := fmt.Sprintf("dest-%03d", i)
		must(st.Destinations().PutDestination(ctx, registry.Destination{Name: name, Host: "127.0.0.1", Port: 9, Share: "scans", Path: fmt.Sprintf("u%d", i),
			User: fmt.Sprintf(`EXAMPLE\u%d`, i), Password: scanwarden.NewSecret("pw"), Device: fmt.Sprintf("mfp%03d", i%nDev),
			DisplayName: fmt.Sprintf("User %d", i), Source: registry.SourceImported}))
		for k := 4; k >= 0; k-- { // a short history, the newest now (no check is due for a day)
			rep := report(i, now)
			rep.Started = now.Add(-time.Duration(k) * 15 * time.Minute)
			must(st.Reports().AddReport(ctx, name, rep))
		}
	}
	batch := make([]snmp.Event, 0, 1000)
	for i := 0; i < nEv; i++ {
		batch = append(batch, snmp.Event{Device: fmt.Sprintf("127.0.%d.%d:161", (i%nDev)/250, (i%nDev)%250+1), Time: now.Add(-time.Duration(nEv-i) * time.Second),
			Code: "1102", Text: "Send error 1102", Destination: `\\127.0.0.1\scans`, Source: snmp.SourceJob, Key: fmt.Sprintf("job:%d", i)})
		if len(batch) == cap(batch) || i == nEv-1 {
			if _, err := sink.RecordEvents(ctx, batch); err != nil {
				log.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	states := []receiver.State{receiver.Delivered, receiver.Delivered, receiver.Delivered, receiver.Held, receiver.Incomplete}
	for i := 0; i < nScan; i++ {
		_, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: fmt.Sprintf("dest-%03d", i%nDest), Folder: "f", File: fmt.Sprintf("doc%05d.pdf", i),
			Size: 200 << 10, SHA256: "00", State: states[i%len(states)], ReceivedAt: now.Add(-time.Duration(i) * time.Minute),
			HeldPath: fmt.Sprintf("held/x/%d.pdf", i)})
		must(err)
	}
	_, err = web.SetPassword(ctx, st.Auth(), "benchmark password", false)
	must(err)
	st.Close()
	fmt.Fprintf(os.Stderr, "webbench: data filled in %s\n", time.Since(t0).Round(time.Second))

	conf := filepath.Join(dir, "serve.toml")
	os.WriteFile(conf, []byte(fmt.Sprintf("data_dir = %q\nlisten = \"127.0.0.1:0\"\nlog_level = \"error\"\n[checks]\ninterval = \"24h\"\njitter = \"1h\"\n", data)), 0o600)
	cfg, err := config.Load(conf)
	if err != nil {
		log.Fatal(err)
	}
	m := &daemon.Main{Config: &cfg, Stderr: os.Stderr}
	if err := m.Open(ctx); err != nil {
		log.Fatal(err)
	}
	base := "http://" + m.Addr().String()
	serveLoggedIn(base)
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
