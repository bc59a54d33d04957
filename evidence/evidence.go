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
	"sync"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/pattern"
	"github.com/scanwarden/scanwarden/serverlog"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
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
	// Gate, when set, keeps a reading account whose logon a server
	// refused from trying again for RetryAfter: a wrong password must not
	// lock the reading account out, one check after another.
	Gate *Gate
}

// RetryAfter is how long a reading account a server refused is left
// alone (the usual lockout observation window).
const RetryAfter = 30 * time.Minute

// Gate remembers the reading accounts a server refused.
type Gate struct {
	mu      sync.Mutex
	refused map[string]refusal // by account name and host, lower case
}

type refusal struct {
	at     time.Time
	status string
}

// NewGate is an empty gate.
func NewGate() *Gate { return &Gate{refused: map[string]refusal{}} }

func gateKey(a serverlog.Account, host string) string {
	return strings.ToLower(a.Name() + "\x00" + host)
}

// blocked returns the refusal that keeps a from host now, if any.
func (g *Gate) blocked(a serverlog.Account, host string, now time.Time) (refusal, bool) {
	if g == nil {
		return refusal{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.refused[gateKey(a, host)]
	if ok && now.Sub(r.at) >= RetryAfter {
		delete(g.refused, gateKey(a, host))
		return refusal{}, false
	}
	return r, ok
}

func (g *Gate) record(a serverlog.Account, host string, st serverlog.Story) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if st.LogonRefused == "" {
		delete(g.refused, gateKey(a, host))
		return
	}
	g.refused[gateKey(a, host)] = refusal{at: st.At, status: st.LogonRefused}
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
	u := smbclient.ParseUserName(typed)
	a := serverlog.Account{User: typed, Password: password}
	if u.Kind == "domain" {
		a.User, a.Domain = u.User, u.Prefix
	}
	return a
}

// Attach reads the story of t's server for the finished check rep and
// puts it on rep.ServerLog; nothing when the server has no reading
// account, or the check was interrupted.
func (r Readers) Attach(ctx context.Context, t scanwarden.Target, rep *smbcheck.Report) {
	a, ok := r.For(t.Host)
	if !ok || rep.Interrupted || ctx.Err() != nil {
		return
	}
	if same(a, t.User) {
		rep.ServerLog = &serverlog.Story{At: time.Now().UTC(), Reader: a.Name(), Problems: []string{
			fmt.Sprintf("the reading account %s is the scan account: not used (its logons would count against the scan account's failed-logon budget); give the event log a read-only account of its own", a.Name())}}
		return
	}
	if ref, ok := r.Gate.blocked(a, t.Host, time.Now()); ok {
		rep.ServerLog = &serverlog.Story{At: time.Now().UTC(), Reader: a.Name(), Problems: []string{
			fmt.Sprintf("not read: %s refused the reading account %s at %s (%s); it is not tried again before %s, so that it is not locked out — correct its password",
				t.Host, a.Name(), ref.at.Local().Format("15:04"), ref.status, ref.at.Add(RetryAfter).Local().Format("15:04"))}}
		return
	}
	before := r.Before
	if before <= 0 {
		before = DefaultBefore
	}
	user := smbclient.ParseUserName(t.User).User
	ws := t.Info().Workstation
	started := rep.Started
	if started.IsZero() {
		started = time.Now()
	}
	st := serverlog.Read(ctx, a, serverlog.Query{Host: t.Host, Port: t.Info().Port, Share: t.Share, Events: !rep.OK(),
		From: started.Add(-before), Until: time.Now().Add(time.Minute), BootsFrom: started.Add(-pattern.DefaultWindow),
		Account: user, Workstation: ws, Timeout: r.Timeout})
	r.Gate.record(a, t.Host, st)
	agree(rep, &st)
	rep.ServerLog = &st
}

// agree marks the events that say what the check met: a logon event
// logged during the check with the status a failed step saw.
func agree(rep *smbcheck.Report, st *serverlog.Story) {
	var seen []string
	for _, s := range rep.Steps {
		if v, ok := s.Evidence["nt_status"].(string); ok && s.Status == smbcheck.StatusFail && len(v) >= 10 {
			seen = append(seen, strings.ToUpper(v[:10]))
		}
	}
	for i := range st.Events {
		e := &st.Events[i]
		if e.At.Before(rep.Started.Add(-5*time.Second)) || (e.ID != 4625 && e.ID != 4776) {
			continue
		}
		for _, code := range seen {
			if strings.HasPrefix(strings.ToUpper(e.Status), code) || strings.HasPrefix(strings.ToUpper(e.SubStatus), code) {
				e.Agrees = true
				e.Text += " — the server logged the status the check met"
				break
			}
		}
	}
}

// same reports whether the reading account is the scan account typed as
// scan: the same name, and the same domain when both name one.
func same(a serverlog.Account, scan string) bool {
	u := smbclient.ParseUserName(scan)
	name := u.User
	if !strings.EqualFold(name, a.User) {
		return false
	}
	return a.Domain == "" || u.Prefix == "" || u.Kind != "domain" || strings.EqualFold(a.Domain, u.Prefix)
}
