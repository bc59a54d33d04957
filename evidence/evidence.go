// Package evidence puts a file server's own story on a check's report:
// after each check of a server that has a reading account, how many
// connections the destination's share holds against its limit, and, when
// the check failed, what the server's event logs say around it (package
// serverlog). It runs once per check, never more often, and never as the
// scan account: its logons spend nothing of that account's failed-logon
// budget. What it finds is evidence beside the verdict; it never changes
// the verdict.
package evidence

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/pattern"
	"github.com/scanwarden/scanwarden/serverlog"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// DefaultBefore is how far before a failed check the event logs are read.
const DefaultBefore = 10 * time.Minute

// Readers are the reading accounts: one for every file server (Default)
// and others for some servers (Servers, by host name as stored on the
// destination, any case).
type Readers struct {
	Default *serverlog.Account
	Servers map[string]serverlog.Account
	// Before: how far back the logs are read around a failure (0:
	// DefaultBefore).
	Before time.Duration
	// Timeout bounds one reading (0: serverlog's default).
	Timeout time.Duration
}

// For returns the account that reads host's story.
func (r Readers) For(host string) (serverlog.Account, bool) {
	for h, a := range r.Servers {
		if strings.EqualFold(h, host) {
			return a, true
		}
	}
	if r.Default != nil {
		return *r.Default, true
	}
	return serverlog.Account{}, false
}

// Any reports whether some server has a reading account.
func (r Readers) Any() bool { return r.Default != nil || len(r.Servers) > 0 }

// Account splits a user name as typed (DOMAIN\user, user@upn, user) into a
// reading account.
func Account(typed string, password scanwarden.Secret) serverlog.Account {
	u := smbcheck.ParseUserName(typed)
	a := serverlog.Account{User: typed, Password: password}
	if u.Kind == "domain" {
		a.User, a.Domain = u.User, u.Prefix
	}
	return a
}

// Attach reads the story of t's server for the finished check rep and
// puts it on rep.ServerLog; nothing when the server has no reading
// account, or the check was interrupted.
func (r Readers) Attach(ctx context.Context, t smbcheck.Target, rep *smbcheck.Report) {
	a, ok := r.For(t.Host)
	if !ok || rep.Interrupted || ctx.Err() != nil {
		return
	}
	if same(a, t.User) {
		rep.ServerLog = &serverlog.Story{At: time.Now().UTC(), Reader: a.Name(), Problems: []string{
			fmt.Sprintf("the reading account %s is the scan account: not used (its logons would count against the scan account's failed-logon budget); give the event log a read-only account of its own", a.Name())}}
		return
	}
	before := r.Before
	if before <= 0 {
		before = DefaultBefore
	}
	user := smbcheck.ParseUserName(t.User).User
	ws := t.Info().Workstation
	started := rep.Started
	if started.IsZero() {
		started = time.Now()
	}
	st := serverlog.Read(ctx, a, serverlog.Query{Host: t.Host, Port: t.Info().Port, Share: t.Share, Events: !rep.OK(),
		From: started.Add(-before), Until: time.Now().Add(time.Minute), BootsFrom: started.Add(-pattern.DefaultWindow),
		Account: user, Workstation: ws, Timeout: r.Timeout})
	rep.ServerLog = &st
}

// same reports whether the reading account is the scan account typed as
// scan: the same name, and the same domain when both name one.
func same(a serverlog.Account, scan string) bool {
	u := smbcheck.ParseUserName(scan)
	name := u.User
	if !strings.EqualFold(name, a.User) {
		return false
	}
	return a.Domain == "" || u.Prefix == "" || u.Kind != "domain" || strings.EqualFold(a.Domain, u.Prefix)
}
