package scanwarden

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretNeverShows(t *testing.T) {
	const pw = "Sup3r-Secret!"
	s := NewSecret(pw)
	type holder struct {
		Password Secret `json:"password"`
		P        *Secret
	}
	h := holder{Password: s, P: &s}
	j, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var logbuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&logbuf, nil)).Info("x", "pw", s, "h", h)
	slog.New(slog.NewTextHandler(&logbuf, nil)).Info("x", "pw", s)
	outs := map[string]string{
		"%v": fmt.Sprintf("%v", s), "%s": fmt.Sprintf("%s", s), "%q": fmt.Sprintf("%q", s),
		"%#v": fmt.Sprintf("%#v", s), "%x": fmt.Sprintf("%x", s), "%+v struct": fmt.Sprintf("%+v", h),
		"%#v struct": fmt.Sprintf("%#v", h), "json": string(j), "slog": logbuf.String(),
		"error": fmt.Errorf("logon with %v failed", s).Error(),
	}
	for name, out := range outs {
		if strings.Contains(out, pw) {
			t.Errorf("%s shows the secret: %s", name, out)
		}
		if !strings.Contains(out, "redacted") {
			t.Errorf("%s does not say [redacted]: %s", name, out)
		}
	}
	if s.Reveal() != pw || s.IsZero() || !NewSecret("").IsZero() {
		t.Fatal("Reveal/IsZero wrong")
	}
}

// TestReadSecretFile: the first line, without its end; an empty first line
// and a line over the cap are refused without echoing the content.
func TestReadSecretFile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, text, want, err string
	}{
		{"one line", "s3cret\n", "s3cret", ""},
		{"no newline", "s3cret", "s3cret", ""},
		{"crlf", "s3cret\r\nsecond\n", "s3cret", ""},
		{"empty", "", "", "first line is empty"},
		{"empty first line", "\nlater", "", "first line is empty"},
		{"at the cap", strings.Repeat("a", MaxSecretFile) + "\n", strings.Repeat("a", MaxSecretFile), ""},
		{"over the cap", strings.Repeat("b", MaxSecretFile+1), "", "longer than 64 KiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if err := os.WriteFile(p, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := ReadSecretFile(p)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				if strings.Contains(err.Error(), "bbbb") {
					t.Fatalf("the error holds the content: %v", err)
				}
				return
			}
			if err != nil || s.Reveal() != c.want {
				t.Fatalf("got %d bytes, %v; want %d bytes", len(s.Reveal()), err, len(c.want))
			}
		})
	}
	if _, err := ReadSecretFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
