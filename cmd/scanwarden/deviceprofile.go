package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/scanwarden/scanwarden/registry"
)

// profileFlags are the device SMB profile's flags, the same for `device
// add` (stored as the admin's settings) and `check` (a one-off replay).
type profileFlags struct {
	maxDialect, minDialect, fileType          string
	noEncryption, noSigning, ntlmv1, smb1Only bool
	noKerberos                                bool
}

func registerProfileFlags(fs *flag.FlagSet) *profileFlags {
	p := &profileFlags{}
	fs.StringVar(&p.maxDialect, "device-max-dialect", "", "the highest SMB dialect the MFP speaks: SMB1, 2.0.2, 2.1, 3.0, 3.0.2 or 3.1.1")
	fs.StringVar(&p.minDialect, "device-min-dialect", "", "the lowest SMB dialect the MFP speaks (SMB1 … 3.1.1)")
	fs.BoolVar(&p.noEncryption, "device-no-encryption", false, "the MFP cannot encrypt SMB traffic (=false: it can)")
	fs.BoolVar(&p.noSigning, "device-no-signing", false, "the MFP cannot sign SMB traffic (=false: it can)")
	fs.BoolVar(&p.ntlmv1, "device-ntlmv1", false, "the MFP logs on with NTLMv1: over SMB2/3 with --device-max-dialect 2.0.2 or later, alone old SMB1 firmware (=false: NTLMv2)")
	fs.BoolVar(&p.smb1Only, "device-smb1-only", false, "the MFP speaks only SMB1 (old firmware or SMB1 setting; as --device-max-dialect SMB1)")
	fs.BoolVar(&p.noKerberos, "device-no-kerberos", false, "the MFP cannot log on with Kerberos (=false: it can)")
	fs.StringVar(&p.fileType, "device-file-type", "", "the file type the MFP scans to: pdf, tiff, jpeg, xps or oxps (a high-compression PDF is pdf)")
	return p
}

// settings are the profile values the command line gives (given reports
// whether a flag was on it: a bool flag given =false sets the opposite).
func (p *profileFlags) settings(given func(string) bool) (map[registry.ProfileField]string, error) {
	set := map[registry.ProfileField]string{}
	add := func(flagName string, f registry.ProfileField, v string) error {
		w, err := registry.ParseProfileValue(f, v)
		if err != nil {
			return fmt.Errorf("--%s: %w", flagName, err)
		}
		set[f] = w
		return nil
	}
	for _, s := range []struct {
		flag string
		f    registry.ProfileField
		v    string
	}{{"device-max-dialect", registry.FieldMaxDialect, p.maxDialect}, {"device-min-dialect", registry.FieldMinDialect, p.minDialect},
		{"device-file-type", registry.FieldFileType, p.fileType}} {
		if given(s.flag) {
			if err := add(s.flag, s.f, s.v); err != nil {
				return nil, err
			}
		}
	}
	for _, b := range []struct {
		flag    string
		f       registry.ProfileField
		on, off string
		v       bool
	}{{"device-no-encryption", registry.FieldEncryption, "no", "yes", p.noEncryption}, {"device-no-signing", registry.FieldSigning, "no", "yes", p.noSigning},
		{"device-ntlmv1", registry.FieldNTLM, "v1", "v2", p.ntlmv1}, {"device-no-kerberos", registry.FieldKerberos, "no", "yes", p.noKerberos}} {
		if !given(b.flag) {
			continue
		}
		v := b.off
		if b.v {
			v = b.on
		}
		set[b.f] = v
	}
	if given("device-smb1-only") && p.smb1Only {
		if v, ok := set[registry.FieldMaxDialect]; ok && v != "SMB1" {
			return nil, errors.New("--device-smb1-only and --device-max-dialect " + v + " exclude each other")
		}
		set[registry.FieldMaxDialect] = "SMB1"
	}
	return set, nil
}

// printProfile writes a device's SMB profile, one field a line, each with
// where it came from.
func printProfile(w io.Writer, d registry.Device) {
	for _, v := range d.Values() {
		humanf(w, "  %-12s %s\n", strings.ReplaceAll(string(v.Field), "_", " "), registry.DescribeValue(v))
	}
	if d.Profile.Workstation.Value != "" {
		humanf(w, "  %-12s %s (seen %s)\n", "workstation", d.Profile.Workstation.Value, d.Profile.Workstation.At.UTC().Format("2006-01-02 15:04 MST"))
	}
	if d.Profile.UserForm.Value != "" {
		humanf(w, "  %-12s %s (seen %s)\n", "user name", d.Profile.UserForm.Value, d.Profile.UserForm.At.UTC().Format("2006-01-02 15:04 MST"))
	}
	if !d.Profile.Learned() {
		humanf(w, "  never seen on the fallback share: %s\n", registry.LearnHint)
	}
}
