package receiver

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// shareKeeper keeps the fallback share up: it starts smbd (or, when the
// root side runs it, hands that side the allowlist and finds its smbd),
// replaces the allowlist while it runs, finds again or restarts an smbd
// that is gone, and probes the share as an MFP logs on.
type shareKeeper struct {
	cfg     Config
	samba   *samba.Server
	info    *runFile // where the allowlist's warning and the probe's answer are told
	log     *slog.Logger
	allowMu sync.Mutex // one setAllow at a time
}

// open starts smbd — or, when the root side runs it (ExternalSamba),
// hands that side the allow list and finds its smbd.
func (k *shareKeeper) open(ctx context.Context) error {
	if !k.cfg.ExternalSamba {
		return k.samba.Start(ctx)
	}
	// The root side (`scanwarden receiver prepare`, run by the smbd
	// unit) renders smb.conf from root's config and this list, makes
	// the accounts, and reloads smbd when the list changes (a path
	// unit watches the file).
	if _, err := samba.WriteAllowFile(samba.AllowFile(k.cfg.DataDir), k.cfg.Allow); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	// Older versions kept smbd's config here, written by the daemon:
	// removed (as the daemon's user), so nothing of it is left for an
	// smbd to read.
	if old := filepath.Join(k.cfg.DataDir, "smbd"); old != k.samba.Config().Dir {
		if err := os.RemoveAll(old); err != nil {
			k.log.Warn("old smbd folder not removed", "dir", old, "err", err)
		}
	}
	k.samba.Track()
	return nil
}

// close stops smbd unless KeepSamba or ExternalSamba.
func (k *shareKeeper) close() error {
	if k.cfg.KeepSamba || k.cfg.ExternalSamba {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return k.samba.Stop(ctx)
}

// setAllow is Receiver.SetAllow.
func (k *shareKeeper) setAllow(ctx context.Context, allow []netip.Prefix, warning string) error {
	k.allowMu.Lock()
	defer k.allowMu.Unlock()
	var changed bool
	var err error
	if k.cfg.ExternalSamba {
		changed, err = k.samba.HandAllow(allow)
	} else {
		changed, err = k.samba.SetAllow(ctx, allow)
	}
	if err != nil {
		return fmt.Errorf("receiver allow: %w", err)
	}
	k.info.setAllowWarning(warning)
	if !changed || k.cfg.ExternalSamba {
		return nil // under its own unit: the path unit reloads it
	}
	if k.samba.Alive() {
		if err := k.samba.Reload(); err != nil {
			return fmt.Errorf("receiver allow: %w", err)
		}
	}
	return nil
}

// tendLoop looks at each rescan whether smbd is gone: under its own unit
// it is found again (the unit may have restarted it), else started again.
func (k *shareKeeper) tendLoop(ctx context.Context) {
	t := time.NewTicker(max(k.cfg.Watch.Rescan, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch {
		case k.samba.Alive():
		case k.cfg.ExternalSamba:
			k.samba.Track() // its unit may have (re)started it
		default:
			k.log.Error("smbd is gone; starting it again")
			if err := k.samba.Start(ctx); err != nil {
				k.log.Error("smbd restart failed", "err", err)
			} else {
				k.info.write()
			}
		}
	}
}

// How often the running receiver probes its share: a failing share again
// soon (a fix shows within seconds), a working one once a minute (one
// logon, one line in smbd's log).
const (
	probeEvery       = time.Minute
	probeFailedEvery = 10 * time.Second
)

// probeLoop probes the share (ProbeShare as the first MFP account) now and
// then every probeEvery (probeFailedEvery while it fails), records the
// answer for Status and receiver.json, and logs each change.
func (k *shareKeeper) probeLoop(ctx context.Context) {
	if len(k.cfg.Accounts) == 0 {
		<-ctx.Done()
		return
	}
	p := samba.ShareProbe{Listen: k.cfg.Listen, Port: k.cfg.Port, Share: k.cfg.Share, Account: k.cfg.Accounts[0], Inbox: Inbox(k.cfg.DataDir),
		SmbdDir: k.samba.Config().Dir, Smbd: k.cfg.SambaBin.Smbd, Unit: k.cfg.ExternalSamba}
	t := time.NewTimer(0)
	defer t.Stop()
	var last samba.ShareCause
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h := samba.ProbeShare(ctx, p)
		if ctx.Err() != nil {
			return
		}
		k.info.setShare(h)
		switch {
		case h.Cause == last:
		case h.OK():
			k.log.Info("the fallback share takes scans", "probe", h.Detail)
		default:
			k.log.Error("the fallback share refuses the MFPs", "cause", string(h.Cause), "nt_status", h.NTStatus, "detail", h.Detail, "fix", h.Fix, "smbd_log", h.SmbdLog)
		}
		last = h.Cause
		if h.OK() {
			t.Reset(probeEvery)
		} else {
			t.Reset(probeFailedEvery)
		}
	}
}
