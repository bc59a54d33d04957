package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

// openReceiver runs the fallback share when [receiver] enabled is set. It
// is not rebuilt on reload (smbd is kept across daemon restarts anyway),
// but its allowlist follows the registry (syncReceiverAllow); a receiver
// that cannot start is the "receiver" fault.
func (m *Main) openReceiver(ctx context.Context, cfg Config) {
	rc := cfg.Receiver
	if !rc.Enabled {
		return
	}
	dir, err := filepath.Abs(filepath.Join(cfg.DataDir, "receiver"))
	if err != nil {
		m.faults.set("receiver", err.Error())
		return
	}
	ip, port, err := receiver.ParseListen(rc.Listen)
	if err != nil { // validated with the config: a fault all the same
		m.faults.set("receiver", "receiver.listen: "+err.Error())
		return
	}
	watch := receiver.DefaultWatch
	watch.Quiet = rc.Quiet.D()
	fwd := receiver.DefaultForward
	fwd.Retry, fwd.MaxRetry, fwd.Retention = rc.Retry.D(), rc.MaxRetry.D(), rc.Retention.D()
	var configured []netip.Prefix
	for _, a := range rc.Allow {
		p, err := receiver.ParseAllowEntry(a)
		if err != nil { // validated with the config: a fault all the same
			m.faults.set("receiver", "receiver.allow "+a+": "+err.Error())
			return
		}
		configured = append(configured, p)
	}
	allow, allowWarning, unresolved, err := m.receiverAllow(ctx, configured)
	if err != nil {
		// The store was just opened: should it fail here, start with what
		// was configured (or the box's networks) and let the sync correct it.
		m.log.Warn("receiver", "err", err)
		allow, allowWarning = configured, ""
		if len(allow) == 0 {
			allow, allowWarning = m.localAllow("the registered MFPs could not be read (until they are)")
		}
	}
	maxFail := cfg.Checks.MaxFailures
	smbdDir := ""
	if rc.ExternalSMBD {
		smbdDir = rc.SmbdDir
	}
	r, err := receiver.New(receiver.Config{DataDir: dir, SmbdDir: smbdDir, Listen: ip, Port: port, Share: rc.Share,
		Accounts: []receiver.Account{{Name: rc.Account, Password: rc.Password}}, SMB1: rc.SMB1, Allow: allow, AllowWarning: allowWarning,
		ExternalSamba: rc.ExternalSMBD, KeepSamba: true, Watch: watch, Forward: fwd},
		observedCatalogue{m.st.Scans(), m.delivery}, m.st.Deliveries(), receiver.SMBRemote{Ledger: m.st.Ledger(), MaxFailures: maxFail, Window: cfg.Checks.FailureWindow.D(), Timeout: cfg.Checks.Timeout.D()},
		m.log)
	if err == nil {
		err = r.Open(ctx)
	}
	if err != nil {
		m.faults.set("receiver", err.Error())
		m.log.Error("receiver not running", "err", err)
		return
	}
	m.recv, m.recvDir = r, dir
	m.recvAllowCfg, m.recvAllowKey = configured, fmt.Sprint(allow, allowWarning)
	m.logReceiverAllow(allow, allowWarning, unresolved)
	for _, w := range receiverWarnings(ctx, r) {
		m.log.Warn("receiver", "warning", w)
	}
}

func receiverWarnings(ctx context.Context, r *receiver.Receiver) []string {
	st, err := r.Status(ctx)
	if err != nil {
		return nil
	}
	return st.Warnings
}

// receiverBackend implements web.Receiver.
type receiverBackend struct{ m *Main }

var _ web.Receiver = receiverBackend{}

func (b receiverBackend) Status(ctx context.Context) (web.ReceiverStatus, error) {
	st, err := b.m.recv.Status(ctx)
	if err != nil {
		return web.ReceiverStatus{Enabled: true, Fault: err.Error()}, nil
	}
	out := web.ReceiverStatus{Enabled: true, Counts: map[string]int{}, Allow: st.Allow, Warnings: st.Warnings}
	for k, v := range st.Counts {
		out.Counts[string(k)] = v
	}
	if !st.SmbdUp {
		out.Fault = "smbd is not running"
	}
	if st.Fault != "" && out.Fault == "" {
		out.Fault = st.Fault
	}
	if st.LastError != nil && out.Fault == "" {
		out.Fault = fmt.Sprintf("last delivery failed (scan %d): %s", st.LastError.Scan, st.LastError.Error)
	}
	return out, nil
}

// webScan is a catalogue row as the web shows it (the running receiver's
// backend and webReceiver, when none runs, both).
func webScan(s receiver.Scan) web.Scan {
	return web.Scan{ID: s.ID, Destination: s.Destination, Name: s.File, Size: s.Size, SHA256: s.SHA256, State: string(s.State),
		ReceivedAt: s.ReceivedAt, DeliveredAt: s.DeliveredAt, Attempts: s.Attempts, Error: s.Error}
}

func (b receiverBackend) Scans(ctx context.Context, state string, limit int) ([]web.Scan, error) {
	q := receiver.ScanQuery{Limit: limit, Newest: true}
	if state != "" {
		q.States = []receiver.State{receiver.State(state)}
	}
	ss, err := b.m.st.Scans().Scans(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]web.Scan, 0, len(ss))
	for _, s := range ss {
		out = append(out, webScan(s))
	}
	return out, nil
}

func (b receiverBackend) scan(ctx context.Context, id int64) (receiver.Scan, error) {
	s, err := b.m.st.Scans().Scan(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return s, fmt.Errorf("scan %d: %w", id, web.ErrNotFound)
		}
		return s, err
	}
	return s, nil
}

func (b receiverBackend) Scan(ctx context.Context, id int64) (web.Scan, error) {
	s, err := b.scan(ctx, id)
	if err != nil {
		return web.Scan{}, err
	}
	return webScan(s), nil
}

// Open reads a scan's local copy: the held one, else the file still in the
// inbox. Paths come from the catalogue, never from a request.
func (b receiverBackend) Open(ctx context.Context, id int64) (io.ReadCloser, error) {
	s, err := b.scan(ctx, id)
	if err != nil {
		return nil, err
	}
	var path string
	switch {
	case s.HeldPath != "":
		path = filepath.Join(b.m.recvDir, s.HeldPath)
	case s.InboxPath != "":
		path = s.InboxPath
		if !filepath.IsAbs(path) {
			path = filepath.Join(b.m.recvDir, path)
		}
	default:
		return nil, fmt.Errorf("scan %d has no local copy: %w", id, web.ErrNotFound)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("scan %d: local copy gone: %w", id, web.ErrNotFound)
	}
	return f, err
}

// Deliver delivers exactly the scan id now (the held-scans page's per-scan
// button), not every scan held for its destination.
func (b receiverBackend) Deliver(ctx context.Context, id int64) error {
	s, err := b.scan(ctx, id)
	if err != nil {
		return err
	}
	if s.Destination == "" {
		return errors.New("this scan arrived in the unsorted folder: it has no destination to deliver to")
	}
	return b.m.recv.DeliverScan(ctx, id)
}

func (b receiverBackend) Force(ctx context.Context, id int64) error {
	_, err := b.m.recv.Force(ctx, id)
	return err
}

// receiverCollector exposes the receiver's queue.
type receiverCollector struct{ m *Main }

var receiverScansDesc = prometheus.NewDesc("scanwarden_receiver_scans", "Scans on the fallback share by state (held = waiting for delivery).", []string{"state"}, nil)
var receiverUpDesc = prometheus.NewDesc("scanwarden_receiver_smbd_up", "1 when the fallback share's smbd runs.", nil, nil)

func (c *receiverCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- receiverScansDesc
	ch <- receiverUpDesc
}

func (c *receiverCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.m.recv
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5e9)
	defer cancel()
	st, err := r.Status(ctx)
	if err != nil {
		return
	}
	for state, n := range st.Counts {
		ch <- prometheus.MustNewConstMetric(receiverScansDesc, prometheus.GaugeValue, float64(n), string(state))
	}
	up := 0.0
	if st.SmbdUp {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(receiverUpDesc, prometheus.GaugeValue, up)
}

// observedCatalogue is the store's catalogue with the receiver's delivery
// outcomes reported to the monitor (the incident's timeline).
type observedCatalogue struct {
	receiver.Catalogue
	delivered func(s receiver.Scan, ok bool)
}

func (c observedCatalogue) UpdateScan(ctx context.Context, s receiver.Scan, from receiver.State) (bool, error) {
	ok, err := c.Catalogue.UpdateScan(ctx, s, from)
	if ok && err == nil && from == receiver.Delivering && s.Destination != "" {
		switch s.State {
		case receiver.Delivered:
			c.delivered(s, true)
		case receiver.Failed, receiver.Refused:
			c.delivered(s, false)
		}
	}
	return ok, err
}

// AddScan reports a scan refused as it arrived (not a scan format) as a
// failed delivery: it shows on the destination's incident.
func (c observedCatalogue) AddScan(ctx context.Context, s receiver.Scan) (int64, error) {
	id, err := c.Catalogue.AddScan(ctx, s)
	if err == nil && s.State == receiver.Refused && s.Destination != "" {
		c.delivered(s, false)
	}
	return id, err
}

// delivery hands a delivery outcome to the monitor.
func (m *Main) delivery(s receiver.Scan, ok bool) {
	mon := m.Monitor()
	if mon == nil {
		return
	}
	text := s.File
	if !ok && s.Error != "" {
		text += ": " + s.Error
	}
	mon.Delivery(context.Background(), s.Destination, ok, text)
}
