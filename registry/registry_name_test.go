package registry

import (
	"strings"
	"testing"
)

// TestValidNameSaysASCII: a name with a letter such as ü is refused saying
// ASCII, and offers the slug the importer would make of it.
func TestValidNameSaysASCII(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"Müller-Scans", `use ASCII letters a-z, digits and . _ - (starting with a letter or digit), e.g. "muller-scans"`},
		{"büro 2", `e.g. "buro-2"`},
		{"-x", "starting with a letter or digit"},
		{"ok-name_1.a", ""},
	} {
		err := ValidName(c.name)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
