package doctor

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

// snmpCheck: each registered device answers (read from the database without
// changing it). Devices come from the registry; nothing to do without any.
// Their credentials are sealed with the key that key loaded.
type snmpCheck struct {
	*doc
	key *keyCheck
}

func (c snmpCheck) run(ctx context.Context) {
	cfg := c.cfg
	devs, ok := c.devices(ctx, c.key.loaded)
	if !ok {
		return
	}
	var jobs []snmpJob
	for _, dev := range devs {
		if dev.Address == "" {
			continue
		}
		t, err := dev.SNMPTarget(cfg.SNMP.Community)
		if err != nil {
			c.add("snmp."+dev.Name, Fail, "correct the device's address in the registry", "address %q: %v", dev.Address, err)
			continue
		}
		jobs = append(jobs, snmpJob{dev.Name, t})
	}
	if len(jobs) == 0 {
		c.add("snmp", Skip, "", "no device with an address in the registry")
		return
	}
	if len(jobs) > c.opt.MaxDevices {
		c.add("snmp", Skip, "", "%d devices: the first %d are asked", len(jobs), c.opt.MaxDevices)
		jobs = jobs[:c.opt.MaxDevices]
	}
	c.rep.Checks = append(c.rep.Checks, c.probeAll(ctx, jobs)...)
}

// devices reads the registered devices, their SNMP credentials
// unsealed, from the database opened read-only; ok is false (the reason
// added as the "snmp" check) when they cannot be read.
func (c snmpCheck) devices(ctx context.Context, keyPath string) (devs []registry.Device, ok bool) {
	db := filepath.Join(absDataDir(c.cfg), store.DefaultFile)
	if _, err := lstatData(absDataDir(c.cfg), store.DefaultFile); err != nil {
		c.add("snmp", Skip, "", "no database yet: no registered device to ask")
		return nil, false
	}
	if keyPath == "" {
		c.add("snmp", Skip, "fix the key first", "the devices' SNMP credentials are sealed and the key did not load")
		return nil, false
	}
	st, err := store.OpenReadOnly(ctx, db)
	if err != nil {
		c.add("snmp", Skip, "run doctor as root", "cannot read the registry: %v", err)
		return nil, false
	}
	defer st.Close()
	if _, err := st.UnlockKey(ctx, keyPath); err != nil {
		c.add("snmp", Skip, "", "cannot open the devices' credentials: %v", err)
		return nil, false
	}
	if devs, err = st.Devices().Devices(ctx); err != nil {
		c.add("snmp", Skip, "", "cannot read the registry: %v", err)
		return nil, false
	}
	return devs, true
}

// snmpJob is one device doctor asks.
type snmpJob struct {
	name string
	t    snmp.Target
}

// probeAll asks the devices, 8 at a time, each within the timeout:
// one check each, in the order of jobs.
func (c snmpCheck) probeAll(ctx context.Context, jobs []snmpJob) []Check {
	results := make([]Check, len(jobs))
	sem := make(chan struct{}, 8)
	done := make(chan struct{})
	for i, j := range jobs {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem; done <- struct{}{} }()
			results[i] = c.probe(ctx, j)
		}()
	}
	for range jobs {
		<-done
	}
	return results
}

// probe asks one device for its identity and status.
func (c snmpCheck) probe(ctx context.Context, j snmpJob) Check {
	pctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	res, err := snmp.Probe(pctx, j.t, snmp.DefaultRules(snmp.DefaultCodeBook()), snmp.ProbeOptions{})
	id := "snmp." + j.name
	switch {
	case err != nil:
		return Check{id, Fail, fmt.Sprintf("%s: %v", j.t.Addr(), err), "correct the device's SNMP settings in the registry"}
	case !res.Answered:
		return Check{id, Fail, fmt.Sprintf("%s did not answer SNMP %s: %s", j.t.Addr(), j.t.Version, res.Error),
			"on the MFP (Command Center RX → Network → Protocol) enable SNMP and match the community or v3 user; let UDP 161 through"}
	}
	return Check{id, OK, fmt.Sprintf("%s answered SNMP %s (%s %s)", j.t.Addr(), j.t.Version, res.Model, res.Serial), ""}
}

// portLabel says what a port is for.
func portLabel(port int) string {
	switch port {
	case 445:
		return "SMB, the fallback share"
	case 139:
		return "SMB over NetBIOS, the fallback share for old MFPs"
	case 162:
		return "SNMP traps"
	}
	return "listener"
}
