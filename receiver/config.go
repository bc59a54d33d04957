package receiver

import (
	"net/netip"
	"path/filepath"
	"strconv"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
)

// Config is the receiver's whole configuration. Zero means zero: fill
// defaults (DefaultShare, port 445, DefaultWatch, DefaultForward) where the
// config is read.
type Config struct {
	// DataDir holds inbox/ (the share), held/ (catalogued scans) and, in
	// the one-process layout, smbd/.
	DataDir string
	// SmbdDir is smbd's folder (smb.conf, pid file, passdb, logs); zero:
	// DataDir/smbd. With ExternalSamba it is the root side's own folder
	// (PrepareShare writes it), which the receiver only reads.
	SmbdDir  string
	Listen   netip.Addr // the one address the share binds
	Port     int
	Share    string
	Accounts []samba.Account
	// SMB1 lets SMB1/NTLMv1 firmware in, on this share only (a standing
	// security warning in Status).
	SMB1 bool
	// Allow lists the networks that may connect to the share (the MFPs);
	// empty = any address that reaches Listen (a standing warning).
	// SetAllow replaces it while the receiver runs.
	Allow []netip.Prefix
	// AllowWarning, when not empty, is a standing warning in Status: why
	// Allow admits more than the MFPs (serve: no MFP registered yet).
	AllowWarning string
	// ExternalSamba: smbd runs under its own unit (the installed layout),
	// root renders its config. The receiver hands root only data — the
	// allowlist in AllowFile(DataDir) — and never writes smb.conf, runs a
	// Samba tool, starts, stops or signals smbd.
	ExternalSamba bool
	// KeepSamba leaves smbd running at Close (a daemon restart does not cut
	// transfers in flight). Without it Close stops smbd.
	KeepSamba bool
	Watch     WatchConfig
	Forward   ForwardConfig
	// SambaBin names the Samba programs (zero: found in PATH).
	SambaBin samba.Bin
}

// Validate names the first field that cannot be used.
func (c Config) Validate() error {
	if c.DataDir == "" || !filepath.IsAbs(c.DataDir) {
		return badConfig("data_dir", c.DataDir, "must be an absolute path")
	}
	if c.Watch.Quiet <= 0 {
		return badConfig("quiet", c.Watch.Quiet.String(), "must be positive")
	}
	if c.Watch.Rescan <= 0 {
		return badConfig("rescan", c.Watch.Rescan.String(), "must be positive")
	}
	if c.Forward.Retry <= 0 || c.Forward.MaxRetry < c.Forward.Retry {
		return badConfig("retry", c.Forward.Retry.String(), "must be positive and at most max_retry")
	}
	if c.Forward.Poll <= 0 {
		return badConfig("poll", c.Forward.Poll.String(), "must be positive")
	}
	return c.samba().Validate()
}

// badConfig is the *scanwarden.FieldError for field; value shows quoted.
func badConfig(field, value, reason string) error {
	var v any
	if value != "" {
		v = strconv.Quote(value)
	}
	return &scanwarden.FieldError{Field: field, Value: v, Reason: reason}
}

func (c Config) samba() samba.Config {
	dir := c.SmbdDir
	if dir == "" {
		dir = filepath.Join(c.DataDir, "smbd")
	}
	return samba.Config{Dir: dir, Inbox: Inbox(c.DataDir), Listen: c.Listen, Port: c.Port,
		Share: c.Share, Accounts: c.Accounts, SMB1: c.SMB1, Allow: c.Allow, Bin: c.SambaBin}
}
