// Package doctor checks an installation of scanwarden: the config, the data
// dir, the sealing key, Samba, the ports, and — when configured — Active
// Directory (with the clock against the DC) and the SNMP devices. Each check
// is a result with a fix; nothing is changed on the box.
package doctor

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/installed"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/store"
)

// Status of one check.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip" // not configured, or cannot be judged from here
)

// Check is one line of the doctor's answer.
type Check struct {
	ID     string `json:"id"` // config, data_dir, key, samba, receiver, receiver.allow.applied, receiver.share, port.445, daemon, ad, ad.clock, snmp.DEVICE
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Report is every check and the overall result: the worst status.
type Report struct {
	Config string  `json:"config"` // the file read ("" for defaults)
	Checks []Check `json:"checks"`
	Result Status  `json:"result"`
}

// Options say what to check and how; zero values take the installed box's
// defaults.
type Options struct {
	// ConfigFile is the daemon's config; "" looks for DefaultConfig and
	// runs on the defaults without it.
	ConfigFile string
	// KeyFile overrides where the sealing key is looked for.
	KeyFile string
	// ServiceUser runs the daemon (default "scanwarden" when that user
	// exists, else the current user).
	ServiceUser string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Now is this machine's clock (default time.Now).
	Now func() time.Time
	// Timeout bounds each network check (default 5 s).
	Timeout time.Duration
	// Smbd is the smbd program (default: /usr/sbin/smbd, else in PATH).
	Smbd string
	// ProcRoot is /proc (tests of the port owner use the real one).
	ProcRoot string
	// MaxDevices caps the SNMP devices probed (default 32).
	MaxDevices int
	// SMBUnit is the fallback share's unit file (default the package's).
	SMBUnit string
}

// DefaultConfig is the installed box's config file.
const DefaultConfig = installed.ConfigFile

// Thresholds of the clock check: Kerberos refuses a skew above 5 minutes;
// logon hours and lockout windows are judged on the DC's clock.
const (
	SkewWarn = time.Minute
	SkewFail = 5 * time.Minute
)

func (o *Options) defaults() {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	if o.SMBUnit == "" {
		o.SMBUnit = "/usr/lib/systemd/system/scanwarden-smbd.service"
	}
	if o.MaxDevices <= 0 {
		o.MaxDevices = 32
	}
	if o.ServiceUser == "" {
		if _, err := user.Lookup("scanwarden"); err == nil {
			o.ServiceUser = "scanwarden"
		} else if u, err := user.Current(); err == nil {
			o.ServiceUser = u.Username
		}
	}
}

// Run performs every check. It never changes anything.
func Run(ctx context.Context, opt Options) Report {
	opt.defaults()
	d := &doc{opt: opt}
	d.cfg = d.config()
	d.rep.Config = d.configFile
	key := &keyCheck{doc: d}
	for _, c := range []check{versionCheck{d}, dataDirCheck{d}, filesCheck{d}, key, sambaCheck{d}, receiverCheck{d},
		portsCheck{d}, webCheck{d}, adCheck{d}, snmpCheck{d, key}} {
		c.run(ctx)
	}
	d.rep.Result = OK
	for _, c := range d.rep.Checks {
		if rank(c.Status) > rank(d.rep.Result) {
			d.rep.Result = c.Status
		}
	}
	return d.rep
}

// check is one job of the doctor's: it reads what it needs from the doc
// and adds its results to the report, in the order Run gives.
type check interface {
	run(ctx context.Context)
}

// versionCheck says which scanwarden this is and warns when it was built
// with a Go that has advisories its code reaches.
type versionCheck struct{ *doc }

func (d versionCheck) run(context.Context) {
	b := scanwarden.BuildInfo()
	if b.Warning != "" {
		d.add("version", Warn, "rebuild with "+scanwarden.SafeGo+" or newer (GOTOOLCHAIN=auto fetches the one go.mod names)", "%s: %s", b, b.Warning)
		return
	}
	d.add("version", OK, "", "%s", b)
}

func rank(s Status) int {
	switch s {
	case Fail:
		return 2
	case Warn:
		return 1
	}
	return 0
}

// doc is what every check reads (the options, the config as serve loads
// it) and the report they add to.
type doc struct {
	opt        Options
	cfg        config.Config
	rep        Report
	configFile string
	configOK   bool
}

func (d *doc) add(id string, s Status, fix, format string, args ...any) {
	d.rep.Checks = append(d.rep.Checks, Check{ID: id, Status: s, Detail: fmt.Sprintf(format, args...), Fix: fix})
}

// config loads the daemon's config exactly as `serve` does.
func (d *doc) config() config.Config {
	file := d.opt.ConfigFile
	if file == "" {
		if _, err := os.Stat(DefaultConfig); err == nil {
			file = DefaultConfig
		}
	}
	d.configFile = file
	cfg, err := config.Load(file)
	if err != nil {
		cfg = config.Defaults()
	}
	if dir, derr := store.DataDir(cfg.DataDir, d.opt.Getenv, store.Local); derr == nil {
		cfg.DataDir = dir
	}
	switch {
	case err != nil && os.Geteuid() != 0 && strings.Contains(err.Error(), "permission denied"):
		d.add("config", Fail, "run doctor as root (sudo scanwarden doctor): the config names files only root and the daemon's user may read",
			"%v", err)
		return cfg
	case err != nil:
		d.add("config", Fail, fmt.Sprintf("edit %s where it says, then `scanwarden serve --config %s --check-config`", file, file),
			"%v", err)
		return cfg
	case file == "":
		d.add("config", Warn, "write "+DefaultConfig+" (the Debian package ships one) or pass --config FILE",
			"no config file: every key at its default (data in %s, web on %s)", cfg.DataDir, cfg.Listen)
	default:
		d.add("config", OK, "", "%s is valid (data_dir %s, listen %s)", file, cfg.DataDir, cfg.Listen)
	}
	d.configOK = true
	return cfg
}

// serviceIDs is the uid and gid the daemon runs as (-1 when unknown).
func (d *doc) serviceIDs() (int, int) {
	u, err := user.Lookup(d.opt.ServiceUser)
	if err != nil {
		return -1, -1
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

func absDataDir(cfg config.Config) string {
	p, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return cfg.DataDir
	}
	return p
}
