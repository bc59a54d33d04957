package scanwarden

import (
	"os"
	"strings"
	"testing"
)

// TestCauseVocabulary pins the public ids.
func TestCauseVocabulary(t *testing.T) {
	want := []string{"ok", "name-unresolved", "name-not-in-dns", "host-unreachable", "not-smb-port", "smb1-only-server", "smb1-refused", "signing-required",
		"bad-credentials", "wrong-user-format", "account-disabled", "account-locked", "password-expired",
		"password-must-change", "account-expired", "workstation-restricted", "logon-hours", "share-not-found",
		"share-access-denied", "path-not-found", "no-write-permission", "no-delete-permission", "connection-limit",
		"server-resources", "disk-full", "timeout", "unknown", "unknown-user", "guest-refused",
		"ntlm-blocked", "clock-skew", "kdc-unreachable", "kerberos-needs-name", "password-unreadable",
		"encryption-required", "dialect-floor", "file-type-refused", "account-restricted", "dfs-link", "smartcard-required", "logon-type-not-granted", "ntlmv1-refused", "bridge-failing", "dialect-ceiling"}
	var got []string
	for _, c := range Causes() {
		got = append(got, string(c.Cause))
		if c.Summary == "" || c.Fix == "" {
			t.Errorf("%s: summary or fix missing", c.Cause)
		}
		if !c.Cause.Valid() {
			t.Errorf("%s: not valid", c.Cause)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("vocabulary\n got %v\nwant %v", got, want)
	}
	if Cause("nope").Valid() {
		t.Error("an unknown cause is valid")
	}
}

// TestREADMEListsEveryCause: the README's diagnosis table has a row for
// every cause of the vocabulary, with its panel code.
func TestREADMEListsEveryCause(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, ci := range Causes() {
		code := ci.KyoceraCode
		if code == "" {
			code = "—"
		}
		if row := "| `" + string(ci.Cause) + "` | " + code + " |"; !strings.Contains(readme, row) {
			t.Errorf("README's diagnosis table lacks %q", row)
		}
	}
}
