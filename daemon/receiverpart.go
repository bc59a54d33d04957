package daemon

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/resolve"
)

// receiverPart runs the fallback share when [receiver] enabled is set. It
// is not rebuilt on reload (smbd is kept across daemon restarts anyway),
// but how its deliveries log on follows the config ([checks]' budget, [ad]:
// Reconfigure) and its allowlist follows the registry: every receiverAllowEvery on a
// goroutine of its own, and at once after an import (syncAllow). The rule
// is samba.AllowFor; this part resolves the devices' names and keeps
// what the share was last given.
type receiverPart struct {
	env
	r   *receiver.Receiver
	dir string // the receiver's data dir (scans held, inbox)
	// localNets reads the box's networks (nil: samba.LocalNetworks).
	localNets  func() samba.LocalNets
	configured []netip.Prefix // [receiver] allow
	// remote is how the forwarder logs on (Forwarding), replaced at a
	// reload.
	remote liveRemote

	// profileChanged is called when a device's SMB client, as learned on
	// the share, changed (Main: the monitor re-reads the registry).
	profileChanged func()

	// names resolves the devices' names and keeps their last good
	// addresses: a name that does not resolve now keeps them.
	names *resolve.Cache

	mu    sync.Mutex     // one allowlist sync (or write of it) at a time
	key   string         // what the share was last given
	allow []netip.Prefix // the list last written; under mu

	// hand follows the list to root when smbd runs in its own unit
	// (external_smbd); nil otherwise.
	hand *samba.Handover
	// handTimes is how long root is given (nil Waits:
	// samba.DefaultHandoverTimes; a test's shorter ones).
	handTimes samba.HandoverTimes

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// receiverAllowEvery is how often the share's allowlist is brought in step
// with the registry (besides at once after an import).
const receiverAllowEvery = 30 * time.Second

// Open starts the share and its allowlist loop under ctx (the run
// context). The error is the "receiver" fault's.
func (p *receiverPart) Open(ctx context.Context, cfg config.Config, delivered func(receiver.Scan, bool)) error {
	rc := cfg.Receiver
	dir, err := filepath.Abs(filepath.Join(cfg.DataDir, "receiver"))
	if err != nil {
		return err
	}
	ip, port, err := samba.ParseListen(rc.Listen)
	if err != nil { // validated with the config: a fault all the same
		return fmt.Errorf("receiver.listen: %w", err)
	}
	watch := receiver.DefaultWatch
	watch.Quiet = rc.Quiet.D()
	fwd := receiver.DefaultForward
	fwd.Retry, fwd.MaxRetry, fwd.Retention = rc.Retry.D(), rc.MaxRetry.D(), rc.Retention.D()
	for _, a := range rc.Allow {
		pfx, err := samba.ParseAllowEntry(a)
		if err != nil { // validated with the config: a fault all the same
			return fmt.Errorf("receiver.allow %s: %w", a, err)
		}
		p.configured = append(p.configured, pfx)
	}
	allow, err := p.allowlist(ctx)
	if err != nil {
		// The store was just opened: should it fail here, start with what
		// was configured (or the box's networks) and let the sync correct it.
		p.log.Warn("receiver", "err", err)
		allow = samba.Allowlist{Allow: p.configured}
		if len(allow.Allow) == 0 {
			allow = samba.LocalAllow("the registered MFPs could not be read (until they are)", p.local())
		}
	}
	smbdDir := ""
	if rc.ExternalSMBD {
		smbdDir = rc.SmbdDir
	}
	p.Reconfigure(cfg)
	r, err := receiver.New(receiver.Config{DataDir: dir, SmbdDir: smbdDir, Listen: ip, Port: port, Share: rc.Share,
		Accounts: []samba.Account{{Name: rc.Account, Password: rc.Password}}, SMB1: rc.SMB1, Allow: allow.Allow, AllowWarning: allow.Warning,
		ExternalSamba: rc.ExternalSMBD, KeepSamba: true, Watch: watch, Forward: fwd},
		observedCatalogue{p.st.Scans(), delivered}, p.st.Destinations().Deliveries(), &p.remote, p.log)
	if err == nil {
		r.Observe(deviceLearner{p, p.profileChanged})
		err = r.Open(ctx)
	}
	if err != nil {
		return err
	}
	p.r, p.dir, p.key, p.allow = r, dir, fmt.Sprint(allow.Allow, allow.Warning), allow.Allow
	p.logAllow(allow)
	if st, err := r.Status(ctx); err == nil {
		for _, w := range st.Warnings {
			p.log.Warn("receiver", "warning", w)
		}
	}
	ctx, p.stop = context.WithCancel(ctx)
	if rc.ExternalSMBD {
		t := p.handTimes
		if t.Waits == nil {
			t = samba.DefaultHandoverTimes
		}
		p.hand = samba.NewHandover(samba.AllowFile(dir), rc.SmbdDir, t, p.rewriteAllow, p.handedOver, p.log.With("component", "allowlist"))
		p.hand.Follow(allow.Allow) // written by the receiver's Open, or in place already
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.hand.Run(ctx)
		}()
	}
	p.wg.Add(1)
	go p.allowLoop(ctx)
	return nil
}

// allowAppliedPart is the fault of a list root has not applied.
const allowAppliedPart = "receiver.allow.applied"

// handedOver turns where root stands with the list into the fault (set
// while root lags, cleared once it applied the list) and a log line for
// each change: the fault raised, root's refusal reason changed, cleared.
func (p *receiverPart) handedOver(r samba.HandoverReport) {
	switch {
	case r.Applied:
		p.faults.clear(allowAppliedPart)
		p.log.Info("root applied the fallback share's allowlist", "writes", r.Writes, "took", r.Took.Round(time.Millisecond))
	case r.Again && r.Lag.RootRefused == "":
		p.faults.set(allowAppliedPart, r.Fault())
		p.log.Warn("root no longer names a reason for not applying the fallback share's allowlist", "writes", r.Writes, "fault", r.Fault())
	case r.Again:
		p.faults.set(allowAppliedPart, r.Fault())
		p.log.Warn("root gives another reason for not applying the fallback share's allowlist", "refused", r.Lag.RootRefused, "writes", r.Writes, "fault", r.Fault())
	default:
		p.faults.set(allowAppliedPart, r.Fault())
		p.log.Error("fallback share allowlist not applied by root", "writes", r.Writes, "fault", r.Fault())
	}
}

// rewriteAllow writes the list last given to the share again (the
// Handover: root missed it), under the lock of the allowlist syncs, so
// that it never puts back a list older than theirs.
func (p *receiverPart) rewriteAllow() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return samba.RewriteAllowFile(samba.AllowFile(p.dir), p.allow)
}

// Close stops the allowlist loop and the receiver (smbd keeps running).
func (p *receiverPart) Close() error {
	p.stop()
	p.wg.Wait()
	return p.r.Close()
}

// Reconfigure makes the deliveries that start from now on log on as cfg
// says (Forwarding): a reload's [checks] budget and [ad], without
// restarting smbd or cutting a delivery in flight. An [ad] that cannot be
// used is the checks' "ad" fault; deliveries then go without it.
func (p *receiverPart) Reconfigure(cfg config.Config) {
	r, _ := Forwarding(cfg, p.st.Ledger())
	r.Logger = p.log.With("component", "forward")
	if p.resolver != nil {
		r.Resolver = hostResolver{p.resolver}
	}
	p.remote.Set(r)
}

// Kick lets the receiver deliver what it holds for destination now.
func (p *receiverPart) Kick(destination string) { p.r.Kick(destination) }

// Relayout makes the share's folders from the registry now (a destination
// added from the CLI, then `systemctl reload`, or imported on the web).
func (p *receiverPart) Relayout() { p.r.Relayout() }

func (p *receiverPart) local() samba.LocalNets {
	if p.localNets != nil {
		return p.localNets()
	}
	return samba.LocalNetworks()
}

// allowlist is samba.AllowFor over the registered devices (names
// resolved) and [receiver] allow. The error is "devices not read": the
// caller keeps the list it has (not "no device").
func (p *receiverPart) allowlist(ctx context.Context) (samba.Allowlist, error) {
	devs, err := p.st.Devices().Devices(ctx)
	if err != nil {
		return samba.Allowlist{}, fmt.Errorf("fallback share allowlist: devices not read: %w", err)
	}
	return samba.AllowFor(p.resolveDevices(ctx, devs), p.configured, p.local()), nil
}

// allowLoop runs syncAllow every receiverAllowEvery, on its own goroutine:
// a sync can take seconds of DNS and testparm.
func (p *receiverPart) allowLoop(ctx context.Context) {
	defer p.wg.Done()
	t := time.NewTicker(receiverAllowEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.syncAllow(ctx)
		}
	}
}

// syncAllow brings the share's allowlist in step with the registry: a
// change rewrites smb.conf, testparm validates it and smbd reloads it.
func (p *receiverPart) syncAllow(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	allow, err := p.allowlist(ctx)
	if err != nil {
		p.log.Warn("fallback share allowlist kept", "err", err)
		return
	}
	key := fmt.Sprint(allow.Allow, allow.Warning)
	if key == p.key {
		return
	}
	if err := p.r.SetAllow(ctx, allow.Allow, allow.Warning); err != nil {
		p.faults.set("receiver.allow", "the fallback share's allowlist was not updated (the previous one stays): "+err.Error())
		p.log.Error("fallback share allowlist not updated", "err", err)
		return
	}
	p.faults.clear("receiver.allow")
	p.key, p.allow = key, allow.Allow
	if p.hand != nil {
		p.hand.Follow(allow.Allow)
	}
	p.logAllow(allow)
}

func (p *receiverPart) logAllow(a samba.Allowlist) {
	if len(a.Unresolved) > 0 {
		p.log.Warn("fallback share: device addresses that do not resolve are not admitted", "devices", strings.Join(a.Unresolved, ","))
	}
	if a.Warning != "" {
		p.log.Warn("fallback share open to the local networks", "allow", fmt.Sprint(a.Allow), "warning", a.Warning)
		return
	}
	p.log.Info("fallback share allowlist", "allow", fmt.Sprint(a.Allow))
}

// resolveDevices gives the addresses of the devices that have one: names
// are looked up at once (resolve.Cache: 8 at a time, 2 s each; 5 s in all:
// an import waits for it); a name that does not resolve now keeps the
// addresses it last resolved to (a DNS hiccup does not lock an MFP out).
func (p *receiverPart) resolveDevices(ctx context.Context, devs []registry.Device) []samba.DeviceAddrs {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var hosts []string
	for _, d := range devs {
		if d.Address != "" {
			hosts = append(hosts, registry.Address(d.Address).Host())
		}
	}
	res := p.names.Resolve(ctx, hosts)
	out := make([]samba.DeviceAddrs, 0, len(hosts))
	for _, d := range devs {
		if d.Address != "" {
			out = append(out, samba.DeviceAddrs{Name: d.Name, Addrs: res[registry.Address(d.Address).Host()].Addrs})
		}
	}
	return out
}
