package receiver

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// openSamba starts smbd — or, when the root side runs it (ExternalSamba),
// hands that side the allow list and finds its smbd.
func (r *Receiver) openSamba(ctx context.Context) error {
	if !r.cfg.ExternalSamba {
		return r.samba.Start(ctx)
	}
	// The root side (`scanwarden receiver prepare`, run by the smbd
	// unit) renders smb.conf from root's config and this list, makes
	// the accounts, and reloads smbd when the list changes (a path
	// unit watches the file).
	if _, err := samba.WriteAllowFile(samba.AllowFile(r.cfg.DataDir), r.cfg.Allow); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	// Older versions kept smbd's config here, written by the daemon:
	// removed (as the daemon's user), so nothing of it is left for an
	// smbd to read.
	if old := filepath.Join(r.cfg.DataDir, "smbd"); old != r.samba.Config().Dir {
		if err := os.RemoveAll(old); err != nil {
			r.log.Warn("old smbd folder not removed", "dir", old, "err", err)
		}
	}
	r.samba.Track()
	return nil
}

// SetAllow replaces the share's allowlist while it runs: smb.conf is
// rewritten, validated by testparm (refused: the running list stays) and
// smbd reloads it (new connections are checked against the new list).
// warning, when not empty, is a standing warning in Status: why the list
// admits more than the MFPs.
func (r *Receiver) SetAllow(ctx context.Context, allow []netip.Prefix, warning string) error {
	r.allowMu.Lock()
	defer r.allowMu.Unlock()
	var changed bool
	var err error
	if r.cfg.ExternalSamba {
		changed, err = r.samba.HandAllow(allow)
	} else {
		changed, err = r.samba.SetAllow(ctx, allow)
	}
	if err != nil {
		return fmt.Errorf("receiver allow: %w", err)
	}
	r.mu.Lock()
	r.allowW = warning
	r.mu.Unlock()
	r.writeRunInfo()
	if !changed || r.cfg.ExternalSamba {
		return nil // under its own unit: the path unit reloads it
	}
	if r.samba.Alive() {
		if err := r.samba.Reload(); err != nil {
			return fmt.Errorf("receiver allow: %w", err)
		}
	}
	return nil
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
func (r *Receiver) probeLoop(ctx context.Context) {
	if len(r.cfg.Accounts) == 0 {
		<-ctx.Done()
		return
	}
	p := samba.ShareProbe{Listen: r.cfg.Listen, Port: r.cfg.Port, Share: r.cfg.Share, Account: r.cfg.Accounts[0], Inbox: Inbox(r.cfg.DataDir),
		SmbdDir: r.samba.Config().Dir, Smbd: r.cfg.SambaBin.Smbd, Unit: r.cfg.ExternalSamba}
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
		r.mu.Lock()
		r.share = &h
		r.mu.Unlock()
		r.writeRunInfo()
		switch {
		case h.Cause == last:
		case h.OK():
			r.log.Info("the fallback share takes scans", "probe", h.Detail)
		default:
			r.log.Error("the fallback share refuses the MFPs", "cause", string(h.Cause), "nt_status", h.NTStatus, "detail", h.Detail, "fix", h.Fix, "smbd_log", h.SmbdLog)
		}
		last = h.Cause
		if h.OK() {
			t.Reset(probeEvery)
		} else {
			t.Reset(probeFailedEvery)
		}
	}
}
