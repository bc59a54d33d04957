package daemon

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/web"
)

// receiverBackend implements web.Receiver over the running receiver: the
// catalogue read as webReceiver does, delivering and forcing by it.
type receiverBackend struct {
	webReceiver
	r *receiver.Receiver
}

var _ web.Receiver = receiverBackend{}

// backend is the web's view of the running receiver.
func (p *receiverPart) backend() receiverBackend {
	return receiverBackend{webReceiver{p.st, p.dir}, p.r}
}

func (b receiverBackend) Status(ctx context.Context) (receiver.StatusView, error) {
	st, err := b.r.Status(ctx)
	if err != nil {
		return receiver.StatusView{Enabled: true, Fault: err.Error()}, nil
	}
	return st.View(), nil
}

// Deliver delivers exactly the scan id now (the held-scans page's per-scan
// button), not every scan held for its destination.
func (b receiverBackend) Deliver(ctx context.Context, id int64) error {
	s, err := b.st.Scans().Scan(ctx, id)
	if err != nil {
		return notFound(err)
	}
	if s.Destination == "" {
		return errors.New("this scan arrived in the unsorted folder: it has no destination to deliver to")
	}
	return b.r.DeliverScan(ctx, id)
}

func (b receiverBackend) Force(ctx context.Context, id int64) error {
	_, err := b.r.Force(ctx, id)
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
	if c.m.recv == nil {
		return
	}
	r := c.m.recv.r
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
