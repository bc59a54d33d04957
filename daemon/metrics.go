package daemon

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

// metrics is the daemon's Prometheus registry. Label values are names the
// admin chose (destination, device) and causes from the fixed vocabulary:
// no device-provided text becomes a label.
type metrics struct {
	reg *prometheus.Registry

	destOK    *prometheus.GaugeVec
	destCause *prometheus.GaugeVec
	lastCheck *prometheus.GaugeVec
	checks    *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	notify    *prometheus.CounterVec

	pollDevices  prometheus.Gauge
	pollAnswered prometheus.Gauge
	pollSilent   prometheus.Gauge
	pollSeconds  prometheus.Gauge
	pollCycles   prometheus.Counter
	pollEvents   prometheus.Counter

	mu     sync.Mutex
	causes map[string]string // destination → its cause label now
}

func newMetrics(st *store.Store, faults *faults, mon func() *monitor.Monitor, deviceUp func(ctx context.Context) map[string]bool) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), causes: map[string]string{}}
	m.destOK = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "scanwarden_destination_ok",
		Help: "1 when the destination's last check found it working, 0 when it found a problem."}, []string{"destination", "device"})
	m.destCause = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "scanwarden_destination_cause",
		Help: "1 for the cause of the destination's last check (from the fixed cause vocabulary)."}, []string{"destination", "cause", "kyocera_code"})
	m.lastCheck = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "scanwarden_destination_last_check_timestamp_seconds",
		Help: "When the destination was last checked."}, []string{"destination"})
	m.checks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "scanwarden_checks_total",
		Help: "Checks run, by why they ran and what they found."}, []string{"reason", "cause"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "scanwarden_check_duration_seconds",
		Help: "How long a check took.", Buckets: []float64{.05, .1, .25, .5, 1, 2, 5, 10, 20, 40}}, []string{"reason"})
	m.notify = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "scanwarden_notifications_total",
		Help: "Notifications sent or tried, by channel, event and result (ok, failed)."}, []string{"channel", "event", "result"})
	m.pollDevices = prometheus.NewGauge(prometheus.GaugeOpts{Name: "scanwarden_snmp_poll_devices", Help: "Devices polled in the last cycle."})
	m.pollAnswered = prometheus.NewGauge(prometheus.GaugeOpts{Name: "scanwarden_snmp_poll_answered", Help: "Devices that answered in the last cycle."})
	m.pollSilent = prometheus.NewGauge(prometheus.GaugeOpts{Name: "scanwarden_snmp_poll_silent", Help: "Devices that did not answer in the last cycle."})
	m.pollSeconds = prometheus.NewGauge(prometheus.GaugeOpts{Name: "scanwarden_snmp_poll_duration_seconds", Help: "How long the last poll cycle took."})
	m.pollCycles = prometheus.NewCounter(prometheus.CounterOpts{Name: "scanwarden_snmp_poll_cycles_total", Help: "Poll cycles run."})
	m.pollEvents = prometheus.NewCounter(prometheus.CounterOpts{Name: "scanwarden_snmp_send_failures_total", Help: "New (de-duplicated) send failures found by polling."})

	openIncidents := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "scanwarden_incidents_open", Help: "Open incidents."}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		incs, err := st.Incidents().Incidents(ctx, store.IncidentFilter{State: incident.StateOpen, Limit: 100_000})
		if err != nil {
			return -1
		}
		return float64(len(incs))
	})
	m.reg.MustRegister(m.destOK, m.destCause, m.lastCheck, m.checks, m.duration, m.notify, m.pollDevices, m.pollAnswered,
		m.pollSilent, m.pollSeconds, m.pollCycles, m.pollEvents, openIncidents,
		&faultCollector{f: faults}, &warningCollector{st: st}, &groupCollector{incs: st.Incidents()}, &monitorCollector{mon: mon}, &deviceCollector{up: deviceUp},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves /metrics (web mounts it behind its bearer-token auth).
func (m *metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// observe records a finished check.
func (m *metrics) observe(d monitor.Destination, rep smbcheck.Report, took time.Duration, reason string) {
	cause := string(rep.Verdict.Cause)
	m.setVerdict(d.Name, d.Device, rep.Verdict, rep.Started.Add(took))
	m.checks.WithLabelValues(reason, cause).Inc()
	m.duration.WithLabelValues(reason).Observe(took.Seconds())
}

func (m *metrics) setVerdict(dest, device string, v smbcheck.Verdict, at time.Time) {
	ok := 0.0
	if v.Cause == scanwarden.CauseOK {
		ok = 1
	}
	m.destOK.WithLabelValues(dest, device).Set(ok)
	m.mu.Lock()
	if old, had := m.causes[dest]; had {
		c, code, _ := strings.Cut(old, "\x00")
		m.destCause.DeleteLabelValues(dest, c, code)
	}
	m.causes[dest] = string(v.Cause) + "\x00" + v.KyoceraCode
	m.mu.Unlock()
	m.destCause.WithLabelValues(dest, string(v.Cause), v.KyoceraCode).Set(1)
	if !at.IsZero() {
		m.lastCheck.WithLabelValues(dest).Set(float64(at.Unix()))
	}
}

func (m *metrics) cycle(c snmp.WatchCycle) {
	m.pollDevices.Set(float64(c.Polled))
	m.pollAnswered.Set(float64(c.Answered))
	m.pollSilent.Set(float64(c.Silent))
	m.pollSeconds.Set(c.Duration.Seconds())
	m.pollCycles.Inc()
	m.pollEvents.Add(float64(c.NewEvents))
}

type faultCollector struct{ f *faults }

var faultDesc = prometheus.NewDesc("scanwarden_fault", "1 for each part of the daemon that is not working (see the log and the status page).", []string{"part"}, nil)

func (c *faultCollector) Describe(ch chan<- *prometheus.Desc) { ch <- faultDesc }
func (c *faultCollector) Collect(ch chan<- prometheus.Metric) {
	for _, f := range c.f.list() {
		ch <- prometheus.MustNewConstMetric(faultDesc, prometheus.GaugeValue, 1, f.Part)
	}
}

// warningCollector reads the destinations' warnings at each scrape.
type warningCollector struct{ st *store.Store }

var warningDesc = prometheus.NewDesc("scanwarden_destination_warning",
	"1 for each warning of a destination whose checks may still pass: what will fail days ahead "+
		"(kind: previous-password, password-expires-soon, account-expires-soon, disk-filling, lockout-pressure; subject: the account — with the MFP for previous-password — or volume).",
	[]string{"destination", "device", "kind", "subject"}, nil)

func (c *warningCollector) Describe(ch chan<- *prometheus.Desc) { ch <- warningDesc }
func (c *warningCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := c.st.Warnings().Warnings(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(warningDesc, err)
		return
	}
	for _, r := range rows {
		ch <- prometheus.MustNewConstMetric(warningDesc, prometheus.GaugeValue, 1, r.Destination, r.Device, string(r.Kind), r.Subject)
	}
}

// groupCollector reads the open incident groups at each scrape.
type groupCollector struct{ incs *store.Incidents }

var groupDesc = prometheus.NewDesc("scanwarden_incident_group_destinations",
	"Destinations in each open incident group: one cause on one server or account "+
		"(kind: server or account; subject: the server or DOMAIN\\account; phrase: \"does not resolve\", \"refuses\", \"is locked out\", …).",
	[]string{"kind", "subject", "cause", "phrase"}, nil)

func (c *groupCollector) Describe(ch chan<- *prometheus.Desc) { ch <- groupDesc }
func (c *groupCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gs, err := c.incs.OpenIncidentGroups(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(groupDesc, err)
		return
	}
	for _, g := range gs {
		ch <- prometheus.MustNewConstMetric(groupDesc, prometheus.GaugeValue, float64(len(g.Members)), string(g.Kind), g.Subject, string(g.Cause), g.Phrase)
	}
}

type monitorCollector struct{ mon func() *monitor.Monitor }

var (
	checksRunningDesc = prometheus.NewDesc("scanwarden_checks_running", "Checks running now.", nil, nil)
	checksPendingDesc = prometheus.NewDesc("scanwarden_checks_pending", "Checks waiting for a slot (max_concurrent, one per file server).", nil, nil)
	destinationsDesc  = prometheus.NewDesc("scanwarden_destinations", "Destinations scheduled.", nil, nil)
	unmatchedDesc     = prometheus.NewDesc("scanwarden_send_failures_unmatched_total", "Device send failures that matched no registered destination.", nil, nil)
)

func (c *monitorCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- checksRunningDesc
	ch <- checksPendingDesc
	ch <- destinationsDesc
	ch <- unmatchedDesc
}

func (c *monitorCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.mon()
	if m == nil {
		return
	}
	s := m.Stats()
	ch <- prometheus.MustNewConstMetric(checksRunningDesc, prometheus.GaugeValue, float64(s.Running))
	ch <- prometheus.MustNewConstMetric(checksPendingDesc, prometheus.GaugeValue, float64(s.Pending))
	ch <- prometheus.MustNewConstMetric(destinationsDesc, prometheus.GaugeValue, float64(s.Destinations))
	ch <- prometheus.MustNewConstMetric(unmatchedDesc, prometheus.CounterValue, float64(s.Unmatched))
}

type deviceCollector struct {
	up func(ctx context.Context) map[string]bool
}

var deviceUpDesc = prometheus.NewDesc("scanwarden_device_up", "1 when the device answered SNMP within the last two poll intervals.", []string{"device"}, nil)

func (c *deviceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- deviceUpDesc }
func (c *deviceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for name, up := range c.up(ctx) {
		v := 0.0
		if up {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(deviceUpDesc, prometheus.GaugeValue, v, name)
	}
}

// devicesUp says, per registered device with an address, whether it
// answered SNMP within two poll intervals (metrics).
func devicesUp(ctx context.Context, st *store.Store, interval time.Duration) map[string]bool {
	devs, err := st.Devices().Devices(ctx)
	if err != nil {
		return nil
	}
	inv, err := st.Events().SNMPDevices(ctx)
	if err != nil {
		return nil
	}
	seen := map[string]time.Time{}
	for _, i := range inv {
		seen[registry.Address(i.Address).SNMPAddr()] = i.SeenAt
	}
	out := map[string]bool{}
	for _, d := range devs {
		if d.Address == "" {
			continue
		}
		out[d.Name] = registry.Reachable(seen[d.SNMPAddr()], interval)
	}
	return out
}

// seed loads each destination's last verdict from st.
func (mt *metrics) seed(ctx context.Context, st *store.Store) {
	ds, err := st.Destinations().Destinations(ctx, "")
	if err != nil {
		return
	}
	for _, d := range ds {
		r, ok, err := st.Reports().LatestReport(ctx, d.Name)
		if err != nil || !ok {
			continue
		}
		mt.setVerdict(d.Name, d.Device, r.Report.Verdict, r.At)
	}
}
