package daemon

import (
	"context"
	"time"

	"github.com/scanwarden/scanwarden/ad"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/internal/localname"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/warning"
)

// checksPart is the checking side a reload rebuilds: the directory (AD),
// the notifier and the monitor scheduling the registry's destinations.
type checksPart struct {
	env
	onCheck func(monitor.Destination, smbcheck.Report, time.Duration, string)
	onFault func(part string, err error)
	// share is the fallback share's last probe, for bridged destinations'
	// health (nil func or answer: no share runs)
	share func() *samba.ShareHealth

	dir      *ad.Directory // nil: no [ad], or it could not be used
	notifier *incidentNotifier
	mon      *monitor.Monitor // nil: it could not start (the "monitor" fault)
	// check runs a check with the monitor's options (the lockout budget,
	// the directory) outside its schedule: the page's Test before saving.
	check checker
}

// Open builds the parts from cfg and starts the monitor under ctx (the run
// context); each one that fails is a fault.
func (c *checksPart) Open(ctx context.Context, cfg config.Config) {
	for _, part := range []string{"ad", "notify.webhook", "notify.mail", "monitor"} {
		c.faults.clear(part)
	}
	opts := smbcheck.Options{MaxFailures: cfg.Checks.MaxFailures, Window: cfg.Checks.FailureWindow.D(), Ledger: c.st.Ledger(),
		StepTimeout: cfg.Checks.Timeout.D(), NoWrite: cfg.Checks.NoWrite, Logger: c.log.With("component", "check"),
		LocalNames: localname.Local{WINS: cfg.Checks.WINSServers()},
		// Shared by the scheduled checks and the admin's (Check now, the
		// page's Test): a server's lowest dialect is asked once per TTL,
		// not at every scheduled check; an admin's check asks afresh
		// (monitor.Destination.AskedAt) and refreshes it.
		LowestDialects: smbcheck.NewLowestDialects(smbcheck.LowestDialectTTL)}
	c.openDirectory(cfg.AD, &opts)
	c.notifier = newIncidentNotifier(c.env, cfg)
	c.check = checker{opts: opts, readers: eventlogReaders(cfg.Eventlog), st: c.st, share: c.share,
		stuck: cfg.Receiver.BridgeStuckAfter.D()}
	incs := c.st.Incidents()
	mon, err := monitor.New(monitor.Config{Interval: cfg.Checks.Interval.D(), Jitter: cfg.Checks.Jitter.D(),
		MaxConcurrent: cfg.Checks.MaxConcurrent, CloseAfter: cfg.Incidents.CloseAfter.D(), EventGap: cfg.Checks.EventGap.D(),
		OnCheck: c.onCheck, OnFault: c.onFault, Log: c.log, Sweeps: eventSweeps{c.st.Events()},
		Warnings: &warning.Tracker{Thresholds: cfg.Warnings.Thresholds(), Store: c.st.Warnings(), Notifies: true}, WarningNotifier: c.notifier,
		Groups: incs, GroupNotifier: c.notifier, GroupSettle: groupSettle(cfg.Checks)},
		newFleet(c.st), c.check, reports{c.st}, incs, c.notifier)
	if err == nil {
		err = mon.Open(ctx)
	}
	if err != nil {
		c.faults.set("monitor", err.Error())
		c.log.Error("monitor not running", "err", err)
		return
	}
	c.mon = mon
}

// groupSettle is how long at most a group's opening notice waits for the
// checks still queued or running: the checks' jitter and two step
// timeouts, at most two minutes.
func groupSettle(c config.Checks) time.Duration {
	return min(c.Jitter.D()+2*c.Timeout.D(), 2*time.Minute)
}

// openDirectory opens [ad] and lets the checks use it (account, domain,
// KDC); one that cannot be used is the "ad" fault.
func (c *checksPart) openDirectory(a config.AD, opts *smbcheck.Options) {
	if a.URL == "" {
		return
	}
	d, err := openAD(a)
	if err != nil {
		c.faults.set("ad", err.Error())
		c.log.Error("Active Directory not used", "err", err)
		return
	}
	c.dir = d
	d.Into(opts)
}

// openAD is [ad]'s directory (a.URL set), as the checks and the
// forwarder (Forwarding) use it.
func openAD(a config.AD) (*ad.Directory, error) {
	return ad.New(ad.Config{URL: a.URL, BindUser: a.BindUser, Password: a.Password, CAFile: a.CA,
		AllowPlain: a.InsecurePlain, Timeout: a.Timeout.D(), Margin: a.Margin})
}

// Close lets running checks drain (then cancels them) and closes the
// directory.
func (c *checksPart) Close(drain time.Duration) {
	if c.mon != nil {
		c.mon.Shutdown(drain)
	}
	if c.dir != nil {
		c.dir.Close()
	}
}
