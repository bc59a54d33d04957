package daemon

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/resolve"
	"github.com/scanwarden/scanwarden/smbclient"
)

// Forwarding is how the fallback share's forwarder logs on to the
// destinations, from cfg — the one way serve and the CLI's `receiver run`
// and `receiver deliver` build it: the checks' failure budget, window and
// timeout, behind ledger, and [ad] as the checks use it (Kerberos realm and
// KDC hints; the account a user name names, asked of the directory and
// kept for accountCacheTTL), so that a delivery and a check of one
// destination count their failed logons against the same account and
// budget. An [ad] that cannot be used is the error (the remote is then
// without it, as the checks are: the "ad" fault).
func Forwarding(cfg config.Config, ledger smbclient.Ledger) (receiver.SMBRemote, error) {
	r := receiver.SMBRemote{Ledger: ledger, MaxFailures: cfg.Checks.MaxFailures, Window: cfg.Checks.FailureWindow.D(),
		Timeout: cfg.Checks.Timeout.D()}
	if cfg.AD.URL == "" {
		return r, nil
	}
	d, err := openAD(cfg.AD)
	if err != nil {
		return r, fmt.Errorf("[ad] not used by deliveries: %w", err)
	}
	r.Kerberos = d.Kerberos()
	r.Accounts = newAccountCache(d, accountCacheTTL)
	return r, nil
}

// accountCacheTTL is how long the directory's answer about an account is
// reused by deliveries: a scan every few seconds asks the DC about twice a
// minute, and a budget the DC lowered (bad passwords from elsewhere) is
// seen within it.
const accountCacheTTL = 30 * time.Second

// accountCache answers smbclient.Accounts from dir, each answer kept for
// ttl; an error is not kept (the next delivery asks again).
type accountCache struct {
	dir smbclient.Accounts
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[accountQuestion]cachedAccount
}

type accountQuestion struct{ typed, workstation string }

type cachedAccount struct {
	acct *smbclient.Account
	at   time.Time
}

func newAccountCache(dir smbclient.Accounts, ttl time.Duration) *accountCache {
	return &accountCache{dir: dir, ttl: ttl, now: time.Now, m: map[accountQuestion]cachedAccount{}}
}

// Account implements smbclient.Accounts. Callers only read the answer.
func (c *accountCache) Account(ctx context.Context, typed, workstation string) (*smbclient.Account, error) {
	q := accountQuestion{typed, workstation}
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[q]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.acct, nil
	}
	acct, err := c.dir.Account(ctx, typed, workstation)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.m {
		if now.Sub(v.at) >= c.ttl {
			delete(c.m, k)
		}
	}
	c.m[q] = cachedAccount{acct, now}
	return acct, nil
}

// liveRemote is the receiver's Remote whose settings a reload replaces
// (Set): each delivery's logon reads the current ones; one in flight
// finishes with those it started with.
type liveRemote struct {
	r atomic.Pointer[receiver.SMBRemote]
}

func (l *liveRemote) Set(r receiver.SMBRemote) { l.r.Store(&r) }

// Open implements receiver.Remote.
func (l *liveRemote) Open(ctx context.Context, t scanwarden.Target) (receiver.Folder, error) {
	return l.r.Load().Open(ctx, t)
}

// hostResolver is the daemon's resolver (env.resolver) as the forwarder's
// smbclient.Resolver: destination hosts and KDC names only — the realm's
// SRV records are still asked of the system's DNS.
type hostResolver struct{ r resolve.Resolver }

func (h hostResolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	addrs, err := h.r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.Unmap().String()
	}
	return out, nil
}
