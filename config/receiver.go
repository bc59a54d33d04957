package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/installed"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
)

// DefaultSmbdDir is [receiver] smbd_dir by default: the folder the smbd
// unit's root step renders smb.conf into (scanwarden-smbd.service's
// StateDirectory=).
const DefaultSmbdDir = installed.SmbdDir

// The range of [receiver] bridge_stuck_after: below a minute a scan still
// being written and handed over counts as stuck; past a week a waiting scan
// is lost to its reader long before the bridge says so.
const (
	MinBridgeStuckAfter = time.Minute
	MaxBridgeStuckAfter = 7 * 24 * time.Hour
)

// Receiver is [receiver]: the fallback scan share (package receiver),
// off unless enabled. Its files live in data_dir/receiver.
type Receiver struct {
	Enabled      bool     `toml:"enabled"`       // run the fallback scan share (needs listen and password_file)
	Listen       string   `toml:"listen"`        // IP or IP:PORT (445 by default): the one address the share binds
	Share        string   `toml:"share"`         // the share's name as the MFPs address it
	Account      string   `toml:"account"`       // the MFPs' login name on the share
	PasswordFile string   `toml:"password_file"` // its password
	SMB1         bool     `toml:"smb1"`          // let SMB1/NTLMv1 firmware in (a standing warning)
	ExternalSMBD bool     `toml:"external_smbd"` // smbd runs under its own unit
	SmbdDir      string   `toml:"smbd_dir"`      // with external_smbd: root's own folder for smbd (smb.conf, passdb, logs)
	Allow        []string `toml:"allow"`         // networks that may connect to the share besides the registered MFPs
	Quiet        Duration `toml:"quiet"`         // a scan is complete after this long without a write
	Retry        Duration `toml:"retry"`         // first retry of a failed delivery (doubling)
	MaxRetry     Duration `toml:"max_retry"`     // longest wait between delivery retries
	Retention    Duration `toml:"retention"`     // how long a delivered scan's local copy is kept
	// a bridged destination whose oldest undelivered scan has waited longer
	// than this fails its bridge (bridge-failing): more than max_retry (a
	// delivery waiting out its back-off is not stuck; lower max_retry too to
	// hear sooner), longer where the MFP scans twice a day; up to 7 days
	BridgeStuckAfter Duration `toml:"bridge_stuck_after"`

	Password scanwarden.Secret `toml:"-"`
}

// validate checks [receiver].
func (r Receiver) validate(bad badValue) {
	if r.Enabled {
		if _, _, err := samba.ParseListen(r.Listen); err != nil {
			bad("receiver.listen", strconv.Quote(r.Listen), err.Error())
		}
		if r.PasswordFile == "" {
			bad("receiver.password_file", `""`, "needed with receiver.enabled")
		}
	}
	for _, a := range r.Allow {
		if _, err := samba.ParseAllowEntry(a); err != nil {
			bad("receiver.allow", strconv.Quote(a), "not an address or a network such as 192.168.10.0/24")
		}
	}
	if r.ExternalSMBD && !filepath.IsAbs(r.SmbdDir) {
		bad("receiver.smbd_dir", strconv.Quote(r.SmbdDir), "an absolute path (root's own folder for smbd)")
	}
	if r.Share == "" || strings.ContainsAny(r.Share, `\/:*?"<>|[]`) {
		bad("receiver.share", strconv.Quote(r.Share), "a share name")
	}
	if r.Account == "" || strings.ContainsAny(r.Account, `\/:*?"<>|[]@ `) {
		bad("receiver.account", strconv.Quote(r.Account), "a plain account name")
	}
	if r.Quiet.D() <= 0 {
		bad("receiver.quiet", r.Quiet.D(), "must be positive")
	}
	if r.Retry.D() <= 0 || r.MaxRetry.D() < r.Retry.D() {
		bad("receiver.retry", r.Retry.D(), "positive, and at most receiver.max_retry")
	}
	if r.Retention.D() < 0 {
		bad("receiver.retention", r.Retention.D(), "0 or more")
	}
	switch d := r.BridgeStuckAfter.D(); {
	case d < MinBridgeStuckAfter || d > MaxBridgeStuckAfter:
		bad("receiver.bridge_stuck_after", d, fmt.Sprintf("from %s to %s (how long a bridged scan may wait undelivered)", MinBridgeStuckAfter, MaxBridgeStuckAfter))
	case d <= r.MaxRetry.D():
		// the forwarder's own back-off would make a healthy bridge fail
		bad("receiver.bridge_stuck_after", d, fmt.Sprintf("more than receiver.max_retry (%s): a delivery waiting out its back-off is not stuck", r.MaxRetry.D()))
	}
}
