package receiver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
)

// SMBRemote opens destination folders through smbclient's dialer: the
// logon the MFP would make — NTLM, or Kerberos as the destination's auth
// says, exactly as its check logs on — behind the failure ledger's gate,
// logged off at Close.
type SMBRemote struct {
	Ledger      smbclient.Ledger // the store's ledger; nil: a private one
	MaxFailures int              // failed-logon budget per account and window (0: no logon that could fail)
	// Window is the budget's window — the checks' failure_window, so that
	// deliveries and checks count failures over the same span (0:
	// smbclient.DefaultWindow).
	Window  time.Duration
	Timeout time.Duration // per operation (0: smbclient.DefaultTimeout)
	// Kerberos is where a destination of auth kerberos or auto finds its
	// realm and KDC when the user name and DNS do not say: the checks'
	// ([ad], ad.Directory.Kerberos).
	Kerberos smbclient.Kerberos
	// Accounts is asked which account a destination's user name names
	// (smbclient.DialOptions.Accounts): [ad]'s directory, as the checks ask
	// it, so that deliveries and checks spend one budget per account; nil:
	// the server's NTLM domain and the base user name.
	Accounts smbclient.Accounts
	// Resolver resolves destination hosts and KDCs (nil: the system's).
	Resolver smbclient.Resolver
	// Logger gets what the dialer does not return (a directory that could
	// not be asked, a ledger that could not record); nil: discarded.
	Logger *slog.Logger
}

// Open implements Remote.
func (r SMBRemote) Open(ctx context.Context, t scanwarden.Target) (Folder, error) {
	s, err := smbclient.Dial(ctx, t, smbclient.DialOptions{Ledger: r.Ledger, MaxFailures: r.MaxFailures, Window: r.Window, Timeout: r.Timeout,
		Kerberos: r.Kerberos, Accounts: r.Accounts, Resolver: r.Resolver, Logger: r.Logger})
	if err != nil {
		var se *smbclient.Error
		if errors.As(err, &se) && se.LogonFailed() {
			return nil, fmt.Errorf("%w: %w", ErrLogon, err)
		}
		return nil, err
	}
	if s.Guest() {
		s.Close()
		return nil, errors.New("the server logged the destination's account on as guest: it does not know the account, so the scans are not delivered there")
	}
	return smbFolder{s}, nil
}

type smbFolder struct{ s *smbclient.Session }

func (f smbFolder) Create(ctx context.Context, name string) (RemoteFile, error) {
	file, err := f.s.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (f smbFolder) Open(ctx context.Context, name string) (RemoteFile, error) {
	file, err := f.s.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (f smbFolder) Rename(ctx context.Context, from, to string) error {
	return f.s.Rename(ctx, from, to)
}
func (f smbFolder) Remove(ctx context.Context, name string) error { return f.s.Remove(ctx, name) }
func (f smbFolder) Close() error                                  { return f.s.Close() }

func (f smbFolder) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return f.s.Stat(ctx, name)
}
