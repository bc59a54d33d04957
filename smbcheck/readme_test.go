package smbcheck

import (
	"os"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
)

// TestREADMEListsEveryCause: the README's diagnosis table has a row for
// every cause of the vocabulary, with its panel code.
func TestREADMEListsEveryCause(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, ci := range scanwarden.Causes() {
		code := ci.KyoceraCode
		if code == "" {
			code = "—"
		}
		if row := "| `" + string(ci.Cause) + "` | " + code + " |"; !strings.Contains(readme, row) {
			t.Errorf("README's diagnosis table lacks %q", row)
		}
	}
}
