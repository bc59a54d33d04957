package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

// TestLabInstalledDeviceProfileReplay is issue 29's "done when", in the
// installed layout: `serve` runs as an unprivileged daemon user with
// external_smbd; root renders smb.conf (`receiver prepare`) and runs smbd.
// A destination of device mfp21 on smb2srv's `sealed` share (SMB3
// encryption required) passes while nothing is known of the MFP (the check
// is scanwarden's own client, which encrypts). Then an MFP stand-in at the
// device's address — smbclient limited to SMB 2.1, no encryption — sends
// one scan to the fallback share; the daemon learns its client from root's
// smbd log (data it may read) and its next checks replay as that client,
// with no flag given: SMB 2.1, no encryption, and the destination fails
// with encryption-required and the panel's 1102.
func TestLabInstalledDeviceProfileReplay(t *testing.T) {
	// The registry as the admin leaves it: the MFP at its address, its
	// destination on the encryption-required share. No device flag.
	cliIP := os.Getenv("SWLAB_CLI_IP")
	in := startInstalled(t, `listen = "127.0.0.1:0"
[checks]
interval = "10s"
jitter = "0s"
timeout = "10s"`, "", func(st *store.Store) {
		ctx := t.Context()
		if err := st.Devices().PutDevice(ctx, registry.Device{Name: "mfp21", Address: cliIP, Model: "TASKalfa 3253ci"}); err != nil {
			t.Fatal(err)
		}
		if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "sealed", Host: os.Getenv("SWLAB_SMB2_IP"), Share: "sealed", User: "scanuser",
			Password: scanwarden.NewSecret(os.Getenv("SWLAB_PASSWORD")), Device: "mfp21", Source: registry.SourceAdded}); err != nil {
			t.Fatal(err)
		}
	})
	ctx, until, read := t.Context(), in.until, in.read
	negotiated := func(rep smbcheck.Report) string {
		for _, s := range rep.Steps {
			if s.ID == smbcheck.StepNegotiate {
				d, _ := s.Evidence["dialect"].(string)
				return d
			}
		}
		return ""
	}
	// Nothing known of the MFP: scanwarden's own client encrypts, and the
	// destination passes — what the issue calls "ok while the MFP fails".
	var first registry.Report
	until("the first scheduled check", 60*time.Second, func() bool {
		return read(func(st *store.Store) bool {
			r, ok, err := st.Reports().LatestReport(ctx, "sealed")
			first = r
			return err == nil && ok
		})
	})
	if first.Cause != scanwarden.CauseOK || negotiated(first.Report) != "3.1.1" {
		t.Fatalf("before the MFP was seen: %s, negotiated %q; want ok over 3.1.1 (scanwarden's own client)\n%s", first.Cause, negotiated(first.Report), first.JSON)
	}

	// The MFP stand-in scans once to the fallback share from the device's
	// address: SMB 2.1 at most, no encryption, its own NetBIOS name.
	in.scan("sealed", "doc0001.pdf", []byte("%PDF-1.4\n1 0 obj\n<< >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"))
	sent := time.Now()
	var dev registry.Device
	until("the device's profile learned from the share", 30*time.Second, func() bool {
		return read(func(st *store.Store) bool {
			d, err := st.Devices().Device(ctx, "mfp21")
			dev = d
			return err == nil && d.Profile.Seen[registry.FieldMaxDialect].Value != "" && d.Profile.Seen[registry.FieldFileType].Value != ""
		})
	})
	vals := map[registry.ProfileField]registry.ProfileValue{}
	for _, v := range dev.Values() {
		vals[v.Field] = v
	}
	for f, want := range map[registry.ProfileField]string{registry.FieldMaxDialect: "2.1", registry.FieldEncryption: "no", registry.FieldNTLM: "v2", registry.FieldFileType: "pdf"} {
		if v := vals[f]; v.Value != want || v.Origin != registry.OriginSeen || !strings.Contains(v.Session, "from "+cliIP) {
			t.Errorf("%s = %+v, want %s seen from %s", f, v, want, cliIP)
		}
	}
	if dev.Profile.Workstation.Value != "MFP21" {
		t.Errorf("workstation seen %q, want MFP21", dev.Profile.Workstation.Value)
	}
	// Its checks now replay as that client: the next ones (at once, as the
	// device's client changed, and on schedule every 10 s) negotiate 2.1,
	// do not encrypt, and the destination fails.
	var after []registry.Report
	until("two checks replayed as the MFP", 60*time.Second, func() bool {
		return read(func(st *store.Store) bool {
			rs, err := st.Reports().Reports(ctx, "sealed", 10)
			if err != nil {
				return false
			}
			after = after[:0]
			for _, r := range rs {
				if r.At.After(sent) {
					after = append(after, r)
				}
			}
			return len(after) >= 2
		})
	})
	for _, r := range after {
		if negotiated(r.Report) != "2.1" || r.Cause != scanwarden.CauseEncryptionRequired || r.KyoceraCode != "1102" {
			t.Errorf("a check after the MFP was seen: %s (panel %s), negotiated %q; want %s (1102) over SMB 2.1\n%s",
				r.Cause, r.KyoceraCode, negotiated(r.Report), scanwarden.CauseEncryptionRequired, r.JSON)
		}
	}
	t.Logf("after the MFP was seen: %s (panel %s): %s", after[0].Cause, after[0].KyoceraCode, after[0].Summary)
}
