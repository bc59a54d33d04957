package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/ad"
	"github.com/scanwarden/scanwarden/smbcheck"
)

const adUsage = `usage:
  scanwarden ad user NAME [--workstation MFP] [--json] [AD flags]
  scanwarden ad host NAME [--json] [AD flags]

user: reads the account a user name typed on the MFP refers to (user,
DOMAIN\user, user@upn, .\user, HOST\user) and says whether it can log on now
from the MFP, and if not why and since when: disabled, locked (until when),
password expired or must change, account expired, "log on to" list, logon
hours, or no such account (unknown-user). Also the failure budget a check
may spend before the domain would lock the account.
Exit status: 0 the account can log on now, 1 it cannot (or does not exist),
2 the directory could not be read.

host: reads the computer object of the scan target and warns about its
operating system (a Windows client edition: 20 inbound sessions; Windows 11
24H2: signing required, no guest logons).
Exit status: 0 found without warnings, 1 not found or with warnings, 2 the
directory could not be read.

The service account's password comes from --ad-password-file FILE ("-" for
stdin) or SCANWARDEN_AD_PASSWORD.

flags:
`

// adCommand parses an ad command's flags and NAME and opens the directory;
// ok false: the command ends with code.
func adCommand(ctx context.Context, c *subcommand, args []string) (name string, dir *ad.Directory, asJSON bool, code int, ok bool) {
	adf := registerADFlags(c.fs)
	j := c.fs.Bool("json", false, "print the answer as JSON")
	pos, code, ok := c.parse(args, -1, "")
	if !ok {
		return "", nil, false, code, false
	}
	var err error
	switch {
	case len(pos) != 1:
		err = errors.New("want exactly one NAME")
	case !adf.configured():
		err = errors.New("no directory: give --ad-url URL or --ad-domain DOMAIN, and --ad-bind-user")
	default:
		dir, err = adf.open(ctx, c.env)
	}
	if err != nil {
		return "", nil, false, c.failSafe(err), false
	}
	return pos[0], dir, *j, 0, true
}

func adUser(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, adUsage)
	workstation := c.fs.String("workstation", "", "NetBIOS name the MFP sends (its host name), judged against the account's \"log on to\" list (default "+scanwarden.DefaultWorkstation+")")
	user, dir, asJSON, code, ok := adCommand(ctx, c, args)
	if !ok {
		return code
	}
	defer dir.Close()
	u, err := dir.User(ctx, user, *workstation)
	if err != nil {
		return adFailed(c, err)
	}
	code = exitOK
	if u.Cause != scanwarden.CauseOK {
		code = exitFinding
	}
	return adPrint(c, asJSON, u, func() { printADUser(env.stdout, u) }, code)
}

func adHost(ctx context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, adUsage)
	host, dir, asJSON, code, ok := adCommand(ctx, c, args)
	if !ok {
		return code
	}
	defer dir.Close()
	h, err := dir.Computer(ctx, host)
	if err != nil {
		return adFailed(c, err)
	}
	code = exitOK
	if !h.Found || len(h.Warnings) > 0 {
		code = exitFinding
	}
	return adPrint(c, asJSON, h, func() { printADHost(env.stdout, h) }, code)
}

// adPrint prints an answer as JSON or for a person; code is the exit
// status when printing worked.
func adPrint(c *subcommand, asJSON bool, answer any, human func(), code int) int {
	if !asJSON {
		human()
		return code
	}
	if r := c.printJSON(answer); r != exitOK {
		return r
	}
	return code
}

// adFailed reports a directory that could not be read: exit 2.
func adFailed(c *subcommand, err error) int {
	return c.failSafe(fmt.Errorf("%w [%s]", err, ad.Classify(err)))
}

// adFlags are the Active Directory flags, shared by `ad` and `check`.
type adFlags struct {
	url, domain, bindUser string
	passwordFile, caFile  string
	insecurePlain         bool
	timeout               time.Duration
	margin                int
}

// registerADFlags adds the --ad-* flags to fs.
func registerADFlags(fs *flag.FlagSet) *adFlags {
	f := &adFlags{}
	fs.StringVar(&f.url, "ad-url", "", "a domain controller: ldaps://HOST (port 636) or ldap://HOST (389, with StartTLS)")
	fs.StringVar(&f.domain, "ad-domain", "", "the AD DNS domain, to find a DC by DNS SRV _ldap._tcp.DOMAIN when --ad-url is not given")
	fs.StringVar(&f.bindUser, "ad-bind-user", "", "read-only service account: user@domain (UPN), DOMAIN\\user or a DN")
	fs.StringVar(&f.passwordFile, "ad-password-file", "", "file holding the service account's password (first line; - for stdin); else SCANWARDEN_AD_PASSWORD")
	fs.StringVar(&f.caFile, "ad-ca", "", "PEM file of the CA(s) that signed the DC's certificate (default: the system's roots)")
	fs.BoolVar(&f.insecurePlain, "ad-insecure-plain", false, "allow ldap:// without StartTLS: the service account's password crosses the network in clear")
	fs.DurationVar(&f.timeout, "ad-timeout", 10*time.Second, "time limit of one directory question")
	fs.IntVar(&f.margin, "ad-margin", 1, "failed logons kept in reserve below the lockout threshold (at least 1)")
	return f
}

// configured reports whether any directory flag was given.
func (f *adFlags) configured() bool {
	return f.url != "" || f.domain != "" || f.bindUser != ""
}

// open builds the directory from the flags. It does not connect: a DC
// that is down shows in the answer (or the check's ad step), not here.
func (f *adFlags) open(_ context.Context, env environ) (*ad.Directory, error) {
	if f.margin < 1 {
		return nil, fmt.Errorf("--ad-margin %d: must be at least 1", f.margin)
	}
	pw, err := readSecret(env, f.passwordFile, "--ad-password-file", adPasswordEnv)
	if err != nil {
		return nil, fmt.Errorf("no service account password: %w", err)
	}
	d, err := ad.New(ad.Config{
		URL: f.url, Domain: f.domain, BindUser: f.bindUser, Password: pw, CAFile: f.caFile,
		AllowPlain: f.insecurePlain, Timeout: f.timeout, Margin: f.margin,
	})
	var fe *scanwarden.FieldError
	if errors.As(err, &fe) {
		// The package names its setting; the CLI says which flag sets it.
		return nil, fmt.Errorf("%s: %s", adFlagFor(fe.Field, fe.Value), fe.Reason)
	}
	if err != nil {
		return nil, err
	}
	if d.Plain() {
		fmt.Fprintln(env.stderr, "warning: plain LDAP (--ad-insecure-plain): the service account's password crosses the network in clear; prefer ldaps:// or StartTLS")
	}
	return d, nil
}

const adPasswordEnv = "SCANWARDEN_AD_PASSWORD"

// into gives a check the directory, its DNS domain (the Kerberos realm)
// and its KDC.
func (f *adFlags) into(o *smbcheck.Options, d *ad.Directory) {
	d.Into(o)
}

// adFlagFor words an ad.Config setting as the flag that sets it.
func adFlagFor(field string, value any) string {
	flag, ok := map[string]string{"ad.url": "--ad-url", "ad.domain": "--ad-domain", "ad.bind_user": "--ad-bind-user",
		"ad.password": "--ad-password-file (or " + adPasswordEnv + ")", "ad.margin": "--ad-margin", "ad.timeout": "--ad-timeout"}[field]
	if !ok {
		flag = field
	}
	if value == nil || value == "" {
		return flag
	}
	return fmt.Sprintf("%s %v", flag, value)
}

func printADUser(w io.Writer, u *ad.User) {
	name := u.Typed
	if u.Found {
		name = u.NetBIOSDomain + `\` + u.SAM
		if u.UPN != "" {
			name += " (" + u.UPN + ")"
		}
	}
	humanf(w, "%s: %s\n  %s\n", name, u.Cause, u.Summary)
	if u.Found {
		yn := func(b bool) string {
			if b {
				return "yes"
			}
			return "no"
		}
		budget := fmt.Sprint(u.Budget)
		if u.Budget < 0 {
			budget = "no lockout policy"
		}
		humanf(w, "  enabled %s, locked %s, bad passwords %d of %d, failure budget %s\n",
			yn(u.Enabled), yn(u.Locked), u.BadPwdCount, u.LockoutThreshold, budget)
		if u.LockedUntil != nil {
			humanf(w, "  locked until %s\n", u.LockedUntil.Local().Format("2 Jan 2006 15:04"))
		}
		switch {
		case u.MustChangePassword:
			fmt.Fprintln(w, "  password: must change at next logon")
		case u.PasswordNeverExpires:
			fmt.Fprintln(w, "  password: does not expire")
		case u.PasswordExpires != nil:
			humanf(w, "  password expires %s\n", u.PasswordExpires.Local().Format("2 Jan 2006 15:04"))
		}
		if u.AccountExpires != nil {
			humanf(w, "  account expires %s\n", u.AccountExpires.Local().Format("2 Jan 2006 15:04"))
		}
		ws := "any"
		if len(u.Workstations) > 0 {
			ws = strings.Join(u.Workstations, ", ")
		}
		humanf(w, "  log on to: %s (the MFP sends %s); logon hours: %s\n", ws, u.Workstation, u.LogonHours)
		if len(u.Groups) > 0 {
			humanf(w, "  groups: %s\n", strings.Join(u.Groups, ", "))
		}
	}
	humanf(w, "fix: %s\n", u.Fix)
}

func printADHost(w io.Writer, c *ad.Computer) {
	humanf(w, "%s: %s\n", c.Name, c.Summary)
	for _, x := range c.Warnings {
		humanf(w, "  warning: %s\n", x)
	}
}
