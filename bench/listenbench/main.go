// Command listenbench measures scanwarden's device listeners under load, on
// loopback only, every loop bounded in count and time:
//
//   - idle: 10,000 TCP connections to the SMTP listener that say nothing,
//     each from its own loopback address inside an allowed network (the
//     worst case: the per-address cap does not bite), held by a child
//     process; the listener process's RSS and open descriptors are read
//     while they are held.
//   - traps: N distinct traps from the watched device's address, sent at a
//     fixed rate, stored through the real store (SQLite, batched writes);
//     the rate at which they are stored.
//
// It prints one JSON object per measurement. bench/listen.sh runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

func main() {
	mode := flag.String("mode", "all", "idle, traps, all (or client: the idle connections' holder)")
	conns := flag.Int("conns", 10000, "idle connections (at most 20,000)")
	traps := flag.Int("traps", 50000, "traps to send (at most 200,000)")
	rate := flag.Int("rate", 10000, "traps sent per second (at most 50,000)")
	addr := flag.String("addr", "", "client mode: the SMTP listener")
	hold := flag.Duration("hold", 5*time.Second, "client mode: how long to hold the connections")
	flag.Parse()
	if *conns < 1 || *conns > 20000 || *traps < 1 || *traps > 200000 || *rate < 1 || *rate > 50000 {
		fmt.Fprintln(os.Stderr, "listenbench: conns 1..20000, traps 1..200000, rate 1..50000")
		os.Exit(2)
	}
	raiseNoFile(*conns + 1024)
	var err error
	switch *mode {
	case "client":
		err = holdConns(*addr, *conns, *hold)
	case "idle":
		err = benchIdle(*conns)
	case "traps":
		err = benchTraps(*traps, *rate)
	case "all":
		if err = benchIdle(*conns); err == nil {
			err = benchTraps(*traps, *rate)
		}
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "listenbench:", err)
		os.Exit(1)
	}
}

// raiseNoFile lifts RLIMIT_NOFILE to n (within the hard limit, raised too
// when root).
func raiseNoFile(n int) {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) != nil || r.Cur >= uint64(n) {
		return
	}
	r.Cur = uint64(n)
	if r.Max < r.Cur {
		r.Max = r.Cur
	}
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
}

// procStatus reads a "VmRSS:"-style line of /proc/self/status, in KiB.
func procStatus(key string) int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, key+":") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return 0
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAvg is the first figure of /proc/loadavg: how busy the shared
// machine was.
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func openFDs() int {
	es, _ := os.ReadDir("/proc/self/fd")
	return len(es)
}

func emit(v map[string]any) { json.NewEncoder(os.Stdout).Encode(v) }

// benchIdle: the listener here, the idle connections in a child process.
func benchIdle(n int) error {
	cfg := snmp.DefaultMailListenerConfig("127.0.0.1:0")
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} // every source is allowed: worst case
	dir, err := os.MkdirTemp("", "listenbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.OpenDir(context.Background(), dir)
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := snmp.NewMailListener(cfg, snmp.DefaultRules(snmp.DefaultCodeBook()), snmp.NewRecorder(st.Events().SNMP(0), nil, nil, nil), slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	if err := m.Open(context.Background()); err != nil {
		return err
	}
	defer m.Close()
	baseRSS, baseFDs := procStatus("VmRSS"), openFDs()
	hold := 6 * time.Second
	child := exec.Command(os.Args[0], "-mode", "client", "-addr", m.Addr().String(), "-conns", strconv.Itoa(n), "-hold", hold.String())
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := child.Start(); err != nil {
		return err
	}
	defer child.Process.Kill()
	// The child says "held N" once every connection is up.
	buf := make([]byte, 64)
	k, _ := out.Read(buf)
	held := strings.TrimSpace(string(buf[:k]))
	time.Sleep(time.Second) // the server settles with them all open
	rss, fds, peak := procStatus("VmRSS"), openFDs(), procStatus("VmHWM")
	st2 := m.Stats()
	child.Wait()
	emit(map[string]any{"bench": "idle-smtp-connections", "connections": n, "client": held,
		"rss_mb": float64(rss) / 1024, "peak_rss_mb": float64(peak) / 1024, "base_rss_mb": float64(baseRSS) / 1024,
		"open_fds": fds, "base_fds": baseFDs, "sessions_taken": st2.Connections, "refused_busy": st2.Busy,
		"refused_not_allowed": st2.NotAllowed, "seconds": time.Since(start).Seconds(),
		"target": "rss < 64 MB, descriptors bounded (max_conns 32)"})
	return nil
}

// holdConns opens n connections to addr, each from its own loopback
// address, says "held N" and holds them for d.
func holdConns(addr string, n int, d time.Duration) error {
	deadline := time.Now().Add(60 * time.Second)
	var cs []net.Conn
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		src := net.IPv4(127, 1+byte(i>>16), byte(i>>8), byte(i))
		dl := net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: 2 * time.Second}
		c, err := dl.Dial("tcp", addr)
		if err != nil {
			continue // the server's backlog was full for a moment: counted as not held
		}
		cs = append(cs, c)
	}
	fmt.Printf("held %d\n", len(cs))
	time.Sleep(d)
	for _, c := range cs {
		c.Close()
	}
	return nil
}

// trapDatagrams are n distinct SNMPv2c traps, each a 1102 send failure
// in a job log row of its own (1000 rows, reused).
func trapDatagrams(n int) ([][]byte, error) {
	msgs := make([][]byte, n)
	for i := range msgs {
		p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "bench-community", PDUType: gosnmp.SNMPv2Trap, RequestID: uint32(i),
			Variables: []gosnmp.SnmpPDU{
				{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(i + 1)},
				{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.2.1.43.18.2.0.1"},
				{Name: ".1.3.6.1.2.1.43.18.1.1.8.1." + strconv.Itoa(i%1000+1), Type: gosnmp.OctetString, Value: []byte(`Send error 1102 \\fs01\scans\alice`)},
			}}
		var err error
		if msgs[i], err = p.MarshalMsg(); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// waitAccounted waits until every datagram l received is accounted for
// and nothing new arrived for half a second (at most 60 s).
func waitAccounted(l *snmp.TrapListener) {
	limit := time.Now().Add(60 * time.Second)
	var last int64 = -1
	for time.Now().Before(limit) {
		s := l.Stats()
		done := s.Events + s.Dropped + s.Malformed + s.Refused + s.NotAllowed
		if done >= s.Packets && s.Packets == last {
			return
		}
		last = s.Packets
		time.Sleep(500 * time.Millisecond)
	}
}

// benchTraps sends n distinct traps at rate from 127.0.0.1 (the watched
// device) to a trap listener writing to a real store, and reports how fast
// they were stored.
func benchTraps(n, rate int) error {
	dir, err := os.MkdirTemp("", "listenbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.OpenDir(context.Background(), filepath.Join(dir, "state"))
	if err != nil {
		return err
	}
	defer st.Close()
	sink := st.Events().SNMPLimited(0, store.SNMPLimits{MaxAge: 24 * time.Hour, MaxRows: 1 << 30, MaxBytes: 1 << 40})
	cfg := snmp.DefaultTrapListenerConfig("127.0.0.1:0", scanwarden.NewSecret("bench-community"))
	cfg.AllowFrom = func(a netip.Addr) bool { return a.IsLoopback() }
	l, err := snmp.NewTrapListener(cfg, snmp.DefaultRules(snmp.DefaultCodeBook()), snmp.NewRecorder(sink, nil, nil, nil), slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	if err := l.Open(context.Background()); err != nil {
		return err
	}
	defer l.Close()
	c, err := net.Dial("udp", l.Addr().String())
	if err != nil {
		return err
	}
	defer c.Close()
	// The datagrams are made first, so that the sender's own work does not
	// count against the listener's CPU time.
	msgs, err := trapDatagrams(n)
	if err != nil {
		return err
	}
	cpu0 := cpuTime()
	start := time.Now()
	for i := 0; i < n; i++ {
		if i%500 == 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		}
		c.Write(msgs[i])
	}
	sent := time.Since(start)
	waitAccounted(l)
	took, cpu := time.Since(start), cpuTime()-cpu0
	s := l.Stats()
	emit(map[string]any{"bench": "trap-throughput", "sent": n, "send_rate": float64(n) / sent.Seconds(),
		"received": s.Packets, "stored": s.Events, "new": s.NewEvents, "dropped_queue": s.Dropped,
		"lost_before_socket": int64(n) - s.Packets, "seconds": took.Seconds(), "stored_per_second": float64(s.Events) / took.Seconds(),
		"cpu_seconds": cpu.Seconds(), "stored_per_cpu_second": float64(s.Events) / cpu.Seconds(), "load_average": loadAvg(),
		"peak_rss_mb": float64(procStatus("VmHWM")) / 1024, "target": "stored >= 5,000 traps/s"})
	return nil
}
