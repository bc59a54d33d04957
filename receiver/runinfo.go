package receiver

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"sync"

	"github.com/scanwarden/scanwarden/internal/safefile"
	"github.com/scanwarden/scanwarden/receiver/samba"
)

// runInfo is what `receiver status` reads from another process (no secret).
type runInfo struct {
	Listen       string   `json:"listen"`
	Port         int      `json:"port"`
	Share        string   `json:"share"`
	SMB1         bool     `json:"smb1"`
	Pid          int      `json:"pid"`
	SmbdDir      string   `json:"smbd_dir"`
	Allow        []string `json:"allow"`
	AllowWarning string   `json:"allow_warning,omitempty"`
	// IngestStopped: why nothing is taken from the inbox ("" = it is).
	IngestStopped string `json:"ingest_stopped,omitempty"`
	// Account is the MFP account the share probe logs on as; External:
	// smbd runs under its own unit.
	Account  string `json:"account,omitempty"`
	External bool   `json:"external,omitempty"`
	// ShareCheck is the receiver's last probe of its share (ProbeShare).
	ShareCheck *samba.ShareHealth `json:"share_check,omitempty"`
}

// runFile is receiver.json, what another process reads of the running
// receiver (runInfo): the share's settings and smbd's, and three things
// that change as it runs — why the allowlist admits more than the MFPs,
// why no scan is taken from the inbox, the share probe's last answer.
// Each change rewrites the file whole.
type runFile struct {
	cfg   Config
	samba *samba.Server // its pid and allowlist

	mu      sync.Mutex
	allowW  string             // why the allowlist admits more than the MFPs (a standing warning)
	stopped string             // why no scan can be taken from the inbox now ("" = they can)
	share   *samba.ShareHealth // the share probe's last answer (nil: none yet)
	// writeMu: one write at a time — the share probe's loop, the
	// watcher's signal and SetAllow write through one temporary file.
	writeMu sync.Mutex
}

// setAllowWarning records why the allowlist admits more than the MFPs
// ("" = it does not).
func (f *runFile) setAllowWarning(warning string) {
	f.mu.Lock()
	f.allowW = warning
	f.mu.Unlock()
	f.write()
}

// setStopped records why no scan is taken from the inbox ("" = they are).
func (f *runFile) setStopped(why string) {
	f.mu.Lock()
	f.stopped = why
	f.mu.Unlock()
	f.write()
}

// setShare records the share probe's answer.
func (f *runFile) setShare(h samba.ShareHealth) {
	f.mu.Lock()
	f.share = &h
	f.mu.Unlock()
	f.write()
}

// lastShare is the share probe's last answer (nil: none yet).
func (f *runFile) lastShare() *samba.ShareHealth {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.share == nil {
		return nil
	}
	h := *f.share
	return &h
}

func (f *runFile) write() {
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	allow := []string{}
	for _, p := range f.samba.Config().Allow {
		allow = append(allow, p.Masked().String())
	}
	f.mu.Lock()
	warn, stopped, share := f.allowW, f.stopped, f.share
	f.mu.Unlock()
	account := ""
	if len(f.cfg.Accounts) > 0 {
		account = f.cfg.Accounts[0].Name
	}
	b, _ := json.Marshal(runInfo{Listen: f.cfg.Listen.String(), Port: f.cfg.Port, Share: f.cfg.Share, SMB1: f.cfg.SMB1, Pid: f.samba.Pid(),
		SmbdDir: f.samba.Config().Dir, Allow: allow, AllowWarning: warn, IngestStopped: stopped, Account: account, External: f.cfg.ExternalSamba,
		ShareCheck: share})
	tmp := filepath.Join(f.cfg.DataDir, "receiver.json.new")
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, filepath.Join(f.cfg.DataDir, "receiver.json"))
	}
}

// ReadAllow reads, from another process, who may connect to the share of
// the receiver last run on dataDir: the networks (empty: any address) and
// the standing warning about them ("" when none). ok is false when no
// receiver ran there.
func ReadAllow(dataDir string) (allow []string, warning string, ok bool) {
	info, ok := readRunInfo(dataDir)
	if !ok {
		return nil, "", false
	}
	warning = info.AllowWarning
	if warning == "" && len(info.Allow) == 0 {
		warning = anyAddressWarning
	}
	return info.Allow, warning, true
}

// ReadIngestStopped reads, from another process, why the receiver last run
// on dataDir takes no scan from its inbox ("" when it takes them); ok is
// false when no receiver ran there.
func ReadIngestStopped(dataDir string) (why string, ok bool) {
	info, ok := readRunInfo(dataDir)
	return info.IngestStopped, ok
}

// ReadShareProbe is the probe of the share the receiver last run on
// dataDir serves (from receiver.json), without the password: the caller
// sets Account.Password. ok is false when no receiver ran there.
func ReadShareProbe(dataDir string) (p samba.ShareProbe, ok bool) {
	info, ok := readRunInfo(dataDir)
	if !ok {
		return samba.ShareProbe{}, false
	}
	ip, err := netip.ParseAddr(info.Listen)
	if err != nil {
		return samba.ShareProbe{}, false
	}
	return samba.ShareProbe{Listen: ip, Port: info.Port, Share: info.Share, Account: samba.Account{Name: info.Account}, Inbox: Inbox(dataDir),
		SmbdDir: info.SmbdDir, Unit: info.External}, true
}

func readRunInfo(dataDir string) (runInfo, bool) {
	var info runInfo
	// root's commands read it too (receiver status, doctor): the daemon's file
	b, err := safefile.Read(filepath.Join(dataDir, "receiver.json"), 1<<20) // dataDir not followed when a link
	if err != nil || json.Unmarshal(b, &info) != nil || info.Listen == "" {
		return runInfo{}, false
	}
	return info, true
}

// anyAddressWarning is the standing warning while no allowlist is set.
const anyAddressWarning = "the fallback share admits any address that reaches it: list the MFPs' addresses or networks ([receiver] allow, receiver run --allow)"
