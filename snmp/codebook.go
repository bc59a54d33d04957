package snmp

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

//go:embed codebook.json
var codebookJSON []byte

// CodeEntry explains one Kyocera send-error code.
type CodeEntry struct {
	Code       string   `json:"code"`        // "1102", or a family such as "22xx"
	Protocols  []string `json:"protocols"`   // smb, ftp, smtp; empty when not about a destination
	Meaning    string   `json:"meaning"`     // what the device means
	Causes     []string `json:"causes"`      // smbcheck cause ids, most likely first
	FirstCheck string   `json:"first_check"` // the first thing to check
	Source     string   `json:"source"`      // where this entry comes from
	Certainty  string   `json:"certainty"`   // high, medium, low
}

// CodeBook maps Kyocera codes to their explanation.
type CodeBook struct {
	exact  map[string]CodeEntry
	family []CodeEntry // codes with 'x' wildcards, most specific first
}

var codePattern = regexp.MustCompile(`^[0-9][0-9x]{3}$`)

// Certainty levels a code book entry may declare.
var certainties = map[string]bool{"high": true, "medium": true, "low": true}

// DefaultCodeBook returns the code book embedded in the binary.
func DefaultCodeBook() *CodeBook {
	cb, err := ParseCodeBook(strings.NewReader(string(codebookJSON)))
	if err != nil {
		// The embedded file is checked by tests; reaching this is a build defect.
		panic("snmp: embedded codebook.json: " + err.Error())
	}
	return cb
}

// ParseCodeBook reads a code book in the codebook.json format. Each entry
// must have a code (four digits, or a family with x), a meaning, at least one
// cause, a source and a certainty; an error names the entry and field.
// Whether the causes belong to smbcheck's vocabulary is checked by the
// package tests (the vocabulary lives in smbcheck).
func ParseCodeBook(r io.Reader) (*CodeBook, error) {
	var doc struct {
		Entries []CodeEntry `json:"entries"`
	}
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("code book: %w", err)
	}
	if len(doc.Entries) == 0 {
		return nil, errors.New("code book: no entries")
	}
	cb := &CodeBook{exact: map[string]CodeEntry{}}
	for i, e := range doc.Entries {
		where := fmt.Sprintf("code book entry %d (%q)", i, e.Code)
		switch {
		case !codePattern.MatchString(e.Code):
			return nil, fmt.Errorf("%s: code must be four digits or a family like 22xx", where)
		case strings.TrimSpace(e.Meaning) == "":
			return nil, fmt.Errorf("%s: meaning is empty", where)
		case len(e.Causes) == 0:
			return nil, fmt.Errorf("%s: causes is empty", where)
		case strings.TrimSpace(e.Source) == "":
			return nil, fmt.Errorf("%s: source is empty", where)
		case !certainties[e.Certainty]:
			return nil, fmt.Errorf("%s: certainty %q is not high, medium or low", where, e.Certainty)
		}
		if _, dup := cb.exact[e.Code]; dup {
			return nil, fmt.Errorf("%s: duplicate code", where)
		}
		for _, f := range cb.family {
			if f.Code == e.Code {
				return nil, fmt.Errorf("%s: duplicate code", where)
			}
		}
		if strings.Contains(e.Code, "x") {
			cb.family = append(cb.family, e)
		} else {
			cb.exact[e.Code] = e
		}
	}
	sort.SliceStable(cb.family, func(i, j int) bool {
		return strings.Count(cb.family[i].Code, "x") < strings.Count(cb.family[j].Code, "x")
	})
	return cb, nil
}

// Lookup returns the entry for code: the exact entry, else the most
// specific family entry (22xx), else false.
func (cb *CodeBook) Lookup(code string) (CodeEntry, bool) {
	if e, ok := cb.exact[code]; ok {
		return e, true
	}
	if len(code) != 4 {
		return CodeEntry{}, false
	}
	for _, f := range cb.family {
		match := true
		for i := 0; i < 4; i++ {
			if f.Code[i] != 'x' && f.Code[i] != code[i] {
				match = false
				break
			}
		}
		if match {
			return f, true
		}
	}
	return CodeEntry{}, false
}

// Known reports whether the code book explains code.
func (cb *CodeBook) Known(code string) bool { _, ok := cb.Lookup(code); return ok }

// Entries returns every entry, exact codes in order, then families.
func (cb *CodeBook) Entries() []CodeEntry {
	out := make([]CodeEntry, 0, len(cb.exact)+len(cb.family))
	for _, e := range cb.exact {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return append(out, cb.family...)
}
