package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scanwarden/scanwarden"
)

// Saved is one setting saved from the page, as the store keeps it
// (store.Settings): a secret's Value sealed, a pin row's the endpoint its
// secret was entered for. With Delete, storing it removes the saved value
// (back to the file's or the default).
type Saved struct {
	Section, Key, Value string
	Secret              bool
	Delete              bool
}

// Open unseals a saved secret; Seal seals one to be saved. section and key
// name the setting, which the sealing binds the value to.
type (
	Open func(sealed []byte, section, key string) ([]byte, error)
	Seal func(plain []byte, section, key string) []byte
)

// Overlay lays saved settings over cfg where the file does not set the
// key; open unseals a saved secret. A saved value that cannot be used (a
// secret that does not open, a value that no longer parses) is skipped and
// named in skipped; the others apply. An endpoint whose secret did not open
// keeps the file's value too. A result that does not validate is refused
// (err, an Errors) and cfg kept.
func Overlay(cfg Config, saved []Saved, open Open) (out Config, skipped []string, err error) {
	out = cfg
	out.CIDRCopy()
	o := overlay{file: cfg, out: &out}
	for _, s := range saved {
		o.apply(s, open)
	}
	o.keepMovedSecrets(saved)
	o.keepUnreadableEndpoints()
	if es := out.Validate(); len(es) > 0 {
		return cfg, o.skipped, es
	}
	return out, o.skipped, nil
}

// overlay is one Overlay under way: the file's config, the one being laid
// over, and what was skipped, applied and did not open.
type overlay struct {
	file       Config
	out        *Config
	skipped    []string
	unreadable []string // section.key of secrets that did not open
	applied    []string // section.key of saved secrets laid over the file's
}

// apply lays s over o.out unless the file sets it.
func (o *overlay) apply(s Saved, open Open) {
	f, ok := findSetting(s.Section, s.Key)
	if !ok {
		return
	}
	name := s.Section + "." + s.Key
	if f.secret {
		if fileSets(o.file, s.Section+"."+f.fileKey) {
			return
		}
		plain, err := open([]byte(s.Value), s.Section, s.Key)
		if err != nil {
			o.skipped = append(o.skipped, fmt.Sprintf("%s: %v", name, err))
			o.unreadable = append(o.unreadable, name)
			return
		}
		*secretField(o.out, s.Section, s.Key) = scanwarden.NewSecret(string(plain))
		o.applied = append(o.applied, name)
		return
	}
	if fileSets(o.file, name) {
		return
	}
	v, ok := configField(o.out, s.Section, s.Key)
	if !ok {
		return
	}
	if err := setValue(v, s.Value); err != nil {
		o.skipped = append(o.skipped, fmt.Sprintf("%s: %v", name, err))
	}
}

// keepMovedSecrets: a saved secret entered for another endpoint than the
// one now in effect (moved in the file) is not sent there: it and the user
// it goes with are the file's (none) until entered again. One saved before
// endpoints were pinned has no pin: it is pinned where it is (Unpinned).
func (o *overlay) keepMovedSecrets(saved []Saved) {
	for _, tie := range secretTies {
		if !slices.Contains(o.applied, tie.section+"."+tie.secret) {
			continue
		}
		if pin, ok := tie.savedPin(saved); !ok || pin == tie.endpoint(*o.out) {
			continue
		}
		*secretField(o.out, tie.section, tie.secret) = *secretField(&o.file, tie.section, tie.secret)
		o.keepFile(tie.section, tie.creds)
		o.skipped = append(o.skipped, fmt.Sprintf("%s.%s: entered for another %s than the one now configured, so not sent there: enter it again",
			tie.section, tie.secret, strings.Join(prefixed(tie.section, tie.fields), "/")))
	}
}

// keepUnreadableEndpoints: an endpoint whose secret did not open is not
// used either (it would fail, or be used without its secret), nor the user
// that goes with the secret (a relay user without its password fails
// validation, and with it every saved setting): the file's values stay.
func (o *overlay) keepUnreadableEndpoints() {
	for _, tie := range secretTies {
		if !slices.Contains(o.unreadable, tie.section+"."+tie.secret) {
			continue
		}
		for _, k := range append(slices.Clone(tie.fields), tie.creds...) {
			o.keepFile(tie.section, []string{k})
			o.skipped = append(o.skipped, fmt.Sprintf("%s.%s: not used without %s.%s", tie.section, k, tie.section, tie.secret))
		}
	}
}

// keepFile sets section's keys in o.out back to the file's values.
func (o *overlay) keepFile(section string, keys []string) {
	for _, k := range keys {
		from, _ := configField(&o.file, section, k)
		to, _ := configField(o.out, section, k)
		to.Set(from)
	}
}

// Unpinned is the pin rows to save for the saved secrets that have none
// (saved before endpoints were pinned): each binds its secret to the
// endpoint it is used with in cfg, the overlaid config.
func Unpinned(saved []Saved, cfg Config) []Saved {
	var pins []Saved
	for _, tie := range secretTies {
		_, pinned := tie.savedPin(saved)
		has := slices.ContainsFunc(saved, func(s Saved) bool { return s.Section == tie.section && s.Key == tie.secret })
		if has && !pinned && !secretField(&cfg, tie.section, tie.secret).IsZero() {
			pins = append(pins, tie.pin(cfg))
		}
	}
	return pins
}

// prefixed is keys as section.key.
func prefixed(section string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = section + "." + k
	}
	return out
}
