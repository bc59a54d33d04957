package receiver

import (
	"context"
	"fmt"
	"io/fs"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
	"golang.org/x/sys/unix"
)

// Status is the receiver's state for `receiver status` and the web page.
type Status struct {
	SmbdUp bool `json:"smbd_up"`
	// Fault says why the share cannot take a scan although smbd may run
	// (the share probe's failure: its detail and fix, e.g. the package to
	// install). "" when none is known.
	Fault string `json:"fault,omitempty"`
	// ShareCheck is the share probe (an MFP's logon and tree connect) the
	// status is judged on: the running receiver's last one, or the
	// caller's own; nil when none was made.
	ShareCheck *samba.ShareHealth `json:"share_check,omitempty"`
	SmbdPid    int                `json:"smbd_pid,omitempty"`
	Listen     string             `json:"listen"`
	Port       int                `json:"port"`
	Share      string             `json:"share"`
	SMB1       bool               `json:"smb1"`
	// Allow are the networks that may connect to the share; empty: any
	// address (a standing warning).
	Allow    []string `json:"allow"`
	Warnings []string `json:"warnings"`
	// IngestStopped says why no scan is taken from the inbox now (the
	// receiver cannot tell whether smbd still writes them); "" when they
	// are. It is among Warnings too.
	IngestStopped string         `json:"ingest_stopped,omitempty"`
	Inbox         int            `json:"inbox"`       // files in the inbox not yet catalogued (incomplete ones included)
	InboxBytes    int64          `json:"inbox_bytes"` // their bytes
	Counts        map[State]int  `json:"counts"`
	HeldBytes     int64          `json:"held_bytes"` // bytes of held (undelivered) scans
	OldestHeld    *time.Time     `json:"oldest_held"`
	LastError     *DeliveryState `json:"last_delivery_error"`
	FreeBytes     int64          `json:"free_bytes"` // free space of the data dir's filesystem
}

// lowSpace is the free space below which Status warns: uploads that do not
// fit are refused to the MFP (it shows a send error) and nothing new can be
// catalogued.
const lowSpace = 100 << 20

// DeliveryState is the last failed delivery.
type DeliveryState struct {
	Scan    int64     `json:"scan"`
	Error   string    `json:"error"`
	RetryAt time.Time `json:"retry_at"`
}

// SMB1Warning is the standing warning while SMB1 is on.
const SMB1Warning = "SMB1/NTLMv1 is ON for the fallback share: old firmware can log on, and so can anything that breaks SMB1 or cracks NTLMv1 responses on this network; switch it off once the MFPs are updated"

// IngestStoppedWarning is the standing warning while no scan can be taken
// from the inbox, for why.
func IngestStoppedWarning(why string) string {
	return "scans are held in the inbox, not taken: " + why
}

// ReadStatus is Status for a data dir, without a running receiver. share
// is the caller's own probe of the share; nil: the running receiver's last
// one (in receiver.json), if any.
func ReadStatus(ctx context.Context, dataDir string, cat Catalogue, share *samba.ShareHealth) (Status, error) {
	st := Status{Counts: map[State]int{}, Warnings: []string{}}
	info, _ := readRunInfo(dataDir)
	if share == nil {
		share = info.ShareCheck
	}
	st.fromRunInfo(info, dataDir, share)
	st.fromDisk(dataDir)
	sum, err := cat.ScanStats(ctx)
	if err != nil {
		return st, err
	}
	st.fromCatalogue(sum)
	return st, nil
}

// fromRunInfo fills in the share as the receiver last run on dataDir
// describes it (receiver.json), whether its smbd runs and answers, and
// what share, the probe it is judged on, found.
func (st *Status) fromRunInfo(info runInfo, dataDir string, share *samba.ShareHealth) {
	st.Listen, st.Port, st.Share, st.SMB1 = info.Listen, info.Port, info.Share, info.SMB1
	st.Allow = append([]string{}, info.Allow...)
	if info.IngestStopped != "" {
		st.IngestStopped = info.IngestStopped
		st.Warnings = append(st.Warnings, IngestStoppedWarning(info.IngestStopped))
	}
	if st.SMB1 {
		st.Warnings = append(st.Warnings, SMB1Warning)
	}
	switch {
	case info.AllowWarning != "":
		st.Warnings = append(st.Warnings, info.AllowWarning)
	case info.Listen != "" && len(info.Allow) == 0:
		st.Warnings = append(st.Warnings, anyAddressWarning)
	}
	if info.Listen == "" {
		return
	}
	ip, err := netip.ParseAddr(info.Listen)
	if err != nil {
		return
	}
	dir := info.SmbdDir
	if dir == "" {
		dir = filepath.Join(dataDir, "smbd")
	}
	if pid := samba.Find(dir); pid != 0 {
		st.SmbdUp, st.SmbdPid = true, pid
	}
	if st.SmbdUp && !samba.Listening(ip, info.Port) {
		st.SmbdUp = false
		st.Warnings = append(st.Warnings, "smbd runs but does not answer on its port")
	}
	if st.ShareCheck = share; share != nil && !share.OK() {
		st.Fault = share.Summary()
	}
}

// fromDisk fills in the data dir's free space and the files in the inbox.
func (st *Status) fromDisk(dataDir string) {
	var fsst unix.Statfs_t
	if err := unix.Statfs(dataDir, &fsst); err == nil {
		st.FreeBytes = int64(fsst.Bavail) * int64(fsst.Bsize)
		if st.FreeBytes < lowSpace {
			st.Warnings = append(st.Warnings, fmt.Sprintf("the data dir's disk is nearly full (%d KiB free): uploads that do not fit are refused to the MFP, and nothing new is catalogued until space is freed; nothing held is lost", st.FreeBytes>>10))
		}
	}
	filepath.WalkDir(Inbox(dataDir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				st.Inbox++
				st.InboxBytes += fi.Size()
			}
		}
		return nil
	})
}

// fromCatalogue fills in the catalogue's sums.
func (st *Status) fromCatalogue(sum ScanStats) {
	for k, v := range sum.Counts {
		st.Counts[k] = v
	}
	st.HeldBytes = sum.HeldBytes
	if !sum.OldestHeld.IsZero() {
		t := sum.OldestHeld
		st.OldestHeld = &t
	}
	if sc := sum.LastFailed; sc != nil {
		st.LastError = &DeliveryState{Scan: sc.ID, Error: sc.Error, RetryAt: sc.NextAttempt}
	}
}
