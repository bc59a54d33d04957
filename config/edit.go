package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/scanwarden/scanwarden"
)

// Edit is what values entered on the page for one section make of a
// config: the config they give, the rows to save (secrets sealed), and the
// saved secrets dropped because their endpoint moved (section.key).
type Edit struct {
	Config  Config
	Rows    []Saved
	Dropped []string
}

// Edit checks values (key → value as entered; an empty secret keeps the
// saved one) for section against c, the running config, and says what to
// save; seal seals an entered secret. A bad value is an *Error whose Field
// is section.key; nothing is to be saved then.
func (c Config) Edit(section string, values map[string]string, seal Seal) (Edit, error) {
	e := edit{section: section, values: values, before: c, cfg: c}
	e.cfg.CIDRCopy()
	if err := e.set(seal); err != nil {
		return Edit{}, err
	}
	if err := e.dropMovedSecrets(); err != nil {
		return Edit{}, err
	}
	e.pinEntered()
	if err := e.validate(); err != nil {
		return Edit{}, err
	}
	out := Edit{Config: e.cfg, Rows: e.rows}
	for _, tie := range e.dropped {
		out.Dropped = append(out.Dropped, section+"."+tie.secret)
	}
	return out, nil
}

// edit is one Edit under way.
type edit struct {
	section string
	values  map[string]string
	before  Config // the running config
	cfg     Config // with the values set
	rows    []Saved
	dropped []secretTie
}

// bad is the field error for key of e's section.
func (e *edit) bad(key string, value any, reason string) *Error {
	return &Error{FieldError: scanwarden.FieldError{Field: e.section + "." + key, Value: value, Reason: reason}}
}

// set sets each value entered, in key order, and adds its row.
func (e *edit) set(seal Seal) error {
	keys := make([]string, 0, len(e.values))
	for k := range e.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val := e.values[k]
		f, ok := findSetting(e.section, k)
		if !ok {
			return e.bad(k, val, "no such setting")
		}
		if f.secret {
			if val == "" {
				continue // keep the saved one
			}
			*secretField(&e.cfg, e.section, k) = scanwarden.NewSecret(val)
			sealed := seal([]byte(val), e.section, k)
			e.rows = append(e.rows, Saved{Section: e.section, Key: k, Value: string(sealed), Secret: true})
			continue
		}
		v, _ := configField(&e.cfg, e.section, k)
		if err := setValue(v, val); err != nil {
			return e.bad(k, val, err.Error())
		}
		e.rows = append(e.rows, Saved{Section: e.section, Key: k, Value: val})
	}
	return nil
}

// dropMovedSecrets: a secret belongs to its endpoint. Moving the endpoint
// without entering the secret again drops the saved one, so it is never
// sent to the new place (and a secret from the file refuses the move).
func (e *edit) dropMovedSecrets() error {
	for _, tie := range secretTies {
		if tie.section != e.section || e.values[tie.secret] != "" || !tie.moved(e.before, e.cfg) {
			continue
		}
		f, _ := findSetting(e.section, tie.secret)
		if fileSets(e.before, e.section+"."+f.fileKey) {
			return e.bad(tie.fields[0], e.values[tie.fields[0]], fmt.Sprintf("%s.%s comes from %s and stays with the endpoint set there; change both in the file", e.section, tie.secret, e.before.File))
		}
		if secretField(&e.cfg, e.section, tie.secret).IsZero() {
			continue
		}
		*secretField(&e.cfg, e.section, tie.secret) = scanwarden.Secret{}
		e.rows = append(e.rows, Saved{Section: e.section, Key: tie.secret, Delete: true},
			Saved{Section: e.section, Key: tie.pinKey(), Delete: true})
		e.dropped = append(e.dropped, tie)
	}
	return nil
}

// pinEntered: a secret entered now belongs to the endpoint it was entered
// with.
func (e *edit) pinEntered() {
	for _, tie := range secretTies {
		if tie.section == e.section && e.values[tie.secret] != "" {
			e.rows = append(e.rows, tie.pin(e.cfg))
		}
	}
}

// validate validates the edited config; the first error is the answer.
func (e *edit) validate() error {
	es := e.cfg.Validate()
	if len(es) == 0 {
		return nil
	}
	for _, tie := range e.dropped {
		if strings.HasPrefix(es[0].Field, e.section+"."+tie.secret) {
			// The endpoint cannot work without its secret: ask for it
			// again rather than drop it (nothing is changed).
			return e.bad(tie.secret, nil, fmt.Sprintf("%s changed: enter the %s again (a stored secret is never sent to a new endpoint)",
				strings.Join(tie.fields, "/"), label(e.section, tie.secret)))
		}
	}
	return es[0]
}
