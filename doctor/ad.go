package doctor

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/ad"
)

// adCheck: the DC answers and the service account binds; then the clock.
type adCheck struct{ *doc }

func (c adCheck) run(ctx context.Context) {
	cfg := c.cfg
	if cfg.AD.URL == "" {
		c.add("ad", Skip, "", "no [ad] url configured")
		return
	}
	dir, err := ad.New(ad.Config{URL: cfg.AD.URL, BindUser: cfg.AD.BindUser, Password: cfg.AD.Password,
		CAFile: cfg.AD.CA, AllowPlain: cfg.AD.InsecurePlain, Timeout: c.opt.Timeout})
	if err != nil {
		c.add("ad", Fail, "fix [ad] in "+c.configFile, "%v", err)
		return
	}
	t0 := c.opt.Now()
	dc, err := dir.Probe(ctx)
	t1 := c.opt.Now()
	if err != nil {
		c.add("ad", Fail, adFix(err), "%v", err)
		c.add("ad.clock", Skip, "", "the DC did not answer")
		return
	}
	c.add("ad", OK, "", "DC %s (%s) answered over %s, bound as %s", dc.Host, dc.Addr, dc.Transport, cfg.AD.BindUser)
	if dc.Time.IsZero() {
		c.add("ad.clock", Skip, "", "the DC did not give its time (RootDSE currentTime)")
		return
	}
	// currentTime is whole seconds: compare with the middle of the read,
	// and allow that second.
	mid := t0.Add(t1.Sub(t0) / 2)
	skew := dc.Time.Add(500 * time.Millisecond).Sub(mid)
	abs := skew
	if abs < 0 {
		abs = -abs
	}
	dir2 := "ahead of"
	if skew < 0 {
		dir2 = "behind"
	}
	fix := "sync this box's clock with the DC: timedatectl set-ntp true, and point systemd-timesyncd (NTP=) at " + dc.Host
	switch {
	case abs <= 2*time.Second:
		c.add("ad.clock", OK, "", "clock within %v of the DC's", abs.Round(time.Second))
	case abs <= SkewWarn:
		c.add("ad.clock", OK, "", "the DC's clock is %v %s this box's (Kerberos allows 5 min)", abs.Round(time.Second), dir2)
	case abs <= SkewFail:
		c.add("ad.clock", Warn, fix, "the DC's clock is %v %s this box's: logon-hours and lockout times read off by that much", abs.Round(time.Second), dir2)
	default:
		c.add("ad.clock", Fail, fix, "the DC's clock is %v %s this box's: beyond Kerberos' 5 minutes, and logon hours and lockout windows are misjudged",
			abs.Round(time.Second), dir2)
	}
}

func adFix(err error) string {
	var be *ad.BindError
	switch {
	case errors.As(err, &be):
		return "check [ad] bind_user and the password in password_file (AD says: " + string(be.Cause) + ")"
	case strings.Contains(err.Error(), "x509") || strings.Contains(err.Error(), "TLS"):
		return "give the DC's CA in [ad] ca (PEM), or fix the DC's certificate name"
	}
	return "check [ad] url, and that this box reaches the DC on 636 (ldaps) or 389 (StartTLS)"
}
