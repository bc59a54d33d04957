package smbcheck

import (
	"context"
	"log/slog"
	"net"
	"time"

	"github.com/scanwarden/scanwarden/internal/localname"
	"github.com/scanwarden/scanwarden/smbclient"
)

// Options tune a check.
type Options struct {
	NoWrite bool // skip the canary write
	// MaxFailures is the failed-logon budget per account and window. Zero
	// means zero: replay nothing that can fail (negative counts as zero).
	// The default, DefaultMaxFailures, is filled where the configuration is
	// read (CLI flag, config file), not here.
	MaxFailures int
	// Window is the observation window of the budget (default 30 min).
	Window time.Duration
	// Ledger remembers failed logons across checks; nil keeps them only for
	// this check (still within MaxFailures).
	Ledger smbclient.Ledger
	// Canaries, when set, records each test file's name before it is
	// created, so that one a killed check left behind is swept by the next
	// check of the same folder.
	Canaries CanaryJournal
	// LowestDialects, when set, remembers each server's lowest dialect
	// for the checks of a long-running process (serve), which then ask a
	// server once per LowestDialectTTL rather than at every check with no
	// device profile; nil asks at every such check (the CLI's one check),
	// remembering the answer only for the check's nested checks (a DFS
	// link's target on the same server asks nothing more).
	LowestDialects *LowestDialects
	// ownLowest: LowestDialects is the check's own (none was given), which
	// no other check shares — its question's first dialect is then asked
	// at once (firstAsk).
	ownLowest bool
	// LowestSince: an answer LowestDialects learned before this time is
	// not used — the server is asked again and the fresh answer remembered
	// (an admin's own check, who may just have changed the server's
	// floor); zero: any answer younger than the TTL.
	LowestSince time.Time
	// Directory, when set, is asked about the account and the host.
	Directory Directory
	Device    Device
	// Profile, when set, names whose profile Device is and where each of
	// its values came from, for the report (Report.Profile); the check
	// replays Device alone.
	Profile *Profile
	// StepTimeout bounds each network step (default 10 s).
	StepTimeout time.Duration
	// Resolver resolves the host name (default: the system resolver).
	Resolver smbclient.Resolver
	// DNSDomains are domains a bare host name is tried under when it does
	// not resolve (e.g. the AD domain), to tell which full name to store.
	DNSDomains []string
	// LocalNames is asked for a host name DNS says does not exist, as a
	// Windows PC would ask (NetBIOS name service, LLMNR): an answer turns
	// name-unresolved into name-not-in-dns. Default: localname.Local, the
	// networks of this machine's own interfaces (nothing in a test binary).
	LocalNames LocalNames
	// Realm is the Kerberos realm of a user name without a UPN suffix when
	// the server names no DNS domain ([ad]'s domain); KDCs are asked for a
	// realm whose KDCs DNS does not name (no _kerberos SRV record): the
	// [ad] host, as host or host:port. A Resolver that has LookupSRV
	// (*net.Resolver) finds the SRV records, else the system resolver.
	Realm string
	KDCs  []string
	// resolvConf is read for the search list (tests point it elsewhere).
	resolvConf string
	// nested names what a nested check (nested.go) is of — a DFS link's
	// target, the address that answered for a name not in DNS; such a
	// check starts no nested check of its own.
	nested string
	// afterCreate runs right after the canary is created (tests interrupt
	// the check there).
	afterCreate func()
	// Progress is called as each step completes.
	Progress func(Step)
	Logger   *slog.Logger
	Now      func() time.Time
}

const (
	defaultMaxFailures = 2
	defaultWindow      = smbclient.DefaultWindow
	defaultStepTimeout = smbclient.DefaultTimeout
)

// DefaultMaxFailures is the budget a front end offers when none is
// configured (Options.MaxFailures 0 replays nothing that can fail).
const DefaultMaxFailures = defaultMaxFailures

// profile is the report's Profile of the client o replays.
func (o Options) profile() *Profile {
	p := Profile{Own: !o.Device.Known(), Summary: o.Device.Describe()}
	if o.Profile != nil {
		p.Device = o.Profile.Device
		if !p.Own {
			p.Values = append([]ProfileSource(nil), o.Profile.Values...)
		}
	}
	return &p
}

// defaults fills the durations and hooks: a zero duration is no usable
// setting, so it means the default. MaxFailures is taken as given.
func (o *Options) defaults() {
	o.Device = o.Device.Normalized()
	if o.MaxFailures < 0 {
		o.MaxFailures = 0
	}
	if o.Window <= 0 {
		o.Window = defaultWindow
	}
	if o.StepTimeout <= 0 {
		o.StepTimeout = defaultStepTimeout
	}
	if o.resolvConf == "" {
		o.resolvConf = "/etc/resolv.conf"
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.LocalNames == nil {
		o.LocalNames = localname.Local{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LowestDialects == nil {
		// The check's own memory: its nested checks (nested.go) inherit it.
		o.LowestDialects = NewLowestDialects(LowestDialectTTL)
		o.ownLowest = true
	}
}

// CanaryJournal remembers the write step's test files across checks and
// processes: a name is recorded before its file is created and forgotten
// once the file is gone (or reported as left behind), so a check killed
// between the two (kill -9, power loss) leaves a name that the next check
// of the same folder sweeps. The CLI keeps it in the state directory.
type CanaryJournal interface {
	Record(ctx context.Context, folder, name string) error
	Forget(ctx context.Context, folder, name string) error
	// Left lists the names recorded for folder and not forgotten.
	Left(ctx context.Context, folder string) ([]string, error)
}
