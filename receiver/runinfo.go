package receiver

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"

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

func (r *Receiver) writeRunInfo() {
	r.infoMu.Lock()
	defer r.infoMu.Unlock()
	allow := []string{}
	for _, p := range r.samba.Config().Allow {
		allow = append(allow, p.Masked().String())
	}
	r.mu.Lock()
	warn, stopped, share := r.allowW, r.stopped, r.share
	r.mu.Unlock()
	account := ""
	if len(r.cfg.Accounts) > 0 {
		account = r.cfg.Accounts[0].Name
	}
	b, _ := json.Marshal(runInfo{Listen: r.cfg.Listen.String(), Port: r.cfg.Port, Share: r.cfg.Share, SMB1: r.cfg.SMB1, Pid: r.samba.Pid(),
		SmbdDir: r.samba.Config().Dir, Allow: allow, AllowWarning: warn, IngestStopped: stopped, Account: account, External: r.cfg.ExternalSamba,
		ShareCheck: share})
	tmp := filepath.Join(r.cfg.DataDir, "receiver.json.new")
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, filepath.Join(r.cfg.DataDir, "receiver.json"))
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
