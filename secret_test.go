package scanwarden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
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
