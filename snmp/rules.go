package snmp

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

//go:embed rules.json
var rulesJSON []byte

// Rule says where a Kyocera code is found. Rules are data: the defaults are
// embedded (rules.json) and an admin adds more in the config.
type Rule struct {
	ID      string   `json:"id"`
	Sources []Source `json:"sources,omitempty"` // empty: every source
	OID     string   `json:"oid,omitempty"`     // the value's OID must lie under this; empty: any
	Pattern string   `json:"pattern,omitempty"` // RE2 over the cleaned text; group "code" gives the code
	Value   *int64   `json:"value,omitempty"`   // for integer values: must be equal
	Code    string   `json:"code,omitempty"`    // the code when the pattern has no code group
	AnyCode bool     `json:"any_code,omitempty"`
	Ignore  bool     `json:"ignore,omitempty"` // a match means "not a send failure"
}

// Rules is a compiled, ordered rule list with the code book it checks
// codes against. It is safe for concurrent use.
type Rules struct {
	list []compiledRule
	book *CodeBook
}

type compiledRule struct {
	Rule
	re      *regexp.Regexp
	codeIdx int
	sources map[Source]bool
}

// Match is what a rule found.
type Match struct {
	Rule   string
	Code   string
	Ignore bool
}

// Observation is one thing a device said, as the rules see it.
type Observation struct {
	Source Source
	OID    string // the value's OID, "" for e-mail
	Text   string // cleaned text ("" for a bare integer)
	Int    *int64 // integer value, when the value is one
}

const (
	maxRules      = 1000
	maxPatternLen = 1000
)

// DefaultRules returns the embedded rules over book.
func DefaultRules(book *CodeBook) *Rules {
	r, err := ParseRules(strings.NewReader(string(rulesJSON)), book, nil)
	if err != nil {
		panic("snmp: embedded rules.json: " + err.Error())
	}
	return r
}

// ParseRules reads rules in the rules.json format; admin rules (extra) come
// first, then the file's. Errors name the rule and field.
func ParseRules(r io.Reader, book *CodeBook, extra []Rule) (*Rules, error) {
	var doc struct {
		Rules []Rule `json:"rules"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	return CompileRules(book, append(append([]Rule(nil), extra...), doc.Rules...))
}

// CompileRules checks and compiles rules in order.
func CompileRules(book *CodeBook, rules []Rule) (*Rules, error) {
	if book == nil {
		return nil, errors.New("rules: no code book")
	}
	if len(rules) > maxRules {
		return nil, fmt.Errorf("rules: %d rules, at most %d", len(rules), maxRules)
	}
	out := &Rules{book: book}
	seen := map[string]bool{}
	for i, r := range rules {
		where := fmt.Sprintf("rule %d (%q)", i, r.ID)
		if r.ID == "" {
			return nil, fmt.Errorf("rule %d: id is empty", i)
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("%s: duplicate id", where)
		}
		seen[r.ID] = true
		c := compiledRule{Rule: r, codeIdx: -1}
		if len(r.Sources) > 0 {
			c.sources = map[Source]bool{}
			for _, s := range r.Sources {
				if !knownSources[s] {
					return nil, fmt.Errorf("%s: sources: unknown source %q", where, s)
				}
				c.sources[s] = true
			}
		}
		if r.OID != "" && !validOID(r.OID) {
			return nil, fmt.Errorf("%s: oid %q is not a numeric OID", where, r.OID)
		}
		if r.Pattern == "" && r.Value == nil {
			return nil, fmt.Errorf("%s: needs a pattern or a value", where)
		}
		if len(r.Pattern) > maxPatternLen {
			return nil, fmt.Errorf("%s: pattern longer than %d", where, maxPatternLen)
		}
		if r.Pattern != "" {
			re, err := regexp.Compile(r.Pattern)
			if err != nil {
				return nil, fmt.Errorf("%s: pattern: %w", where, err)
			}
			c.re = re
			c.codeIdx = re.SubexpIndex("code")
		}
		if !r.Ignore {
			if c.codeIdx < 0 && r.Code == "" {
				return nil, fmt.Errorf("%s: needs a code, or a pattern with a (?P<code>…) group", where)
			}
			if r.Code != "" && !codePattern.MatchString(r.Code) {
				return nil, fmt.Errorf("%s: code %q must be four digits", where, r.Code)
			}
			if r.Code != "" && !r.AnyCode && !book.Known(r.Code) {
				return nil, fmt.Errorf("%s: code %s is not in the code book (set any_code to allow)", where, r.Code)
			}
		}
		out.list = append(out.list, c)
	}
	return out, nil
}

// Book returns the code book the rules check codes against.
func (rs *Rules) Book() *CodeBook { return rs.book }

// Match tries the rules in order on one observation; the first rule that
// matches decides. A code not in the code book does not match (unless the
// rule says any_code), so the next rule is tried.
func (rs *Rules) Match(o Observation) (Match, bool) {
	text := o.Text
	if len(text) > 4*maxText {
		text = text[:4*maxText]
	}
	for i := range rs.list {
		r := &rs.list[i]
		if r.sources != nil && !r.sources[o.Source] {
			continue
		}
		if r.OID != "" && !hasPrefix(o.OID, r.OID) {
			continue
		}
		if r.Value != nil && (o.Int == nil || *o.Int != *r.Value) {
			continue
		}
		code := r.Code
		if r.re != nil {
			if text == "" {
				continue
			}
			found := false
			for _, m := range r.re.FindAllStringSubmatch(text, 8) {
				c := code
				if r.codeIdx >= 0 && m[r.codeIdx] != "" {
					c = m[r.codeIdx]
				}
				if r.Ignore || r.AnyCode || rs.book.Known(c) {
					code, found = c, true
					break
				}
			}
			if !found {
				continue
			}
		}
		if r.Ignore {
			return Match{Rule: r.ID, Ignore: true}, true
		}
		if !r.AnyCode && !rs.book.Known(code) {
			continue
		}
		return Match{Rule: r.ID, Code: code}, true
	}
	return Match{}, false
}

func validOID(s string) bool {
	s = trimDot(s)
	if s == "" {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" || len(part) > 10 {
			return false
		}
		for _, c := range part {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// NewRules compiles the admin rules followed by the embedded defaults.
func NewRules(book *CodeBook, admin []Rule) (*Rules, error) {
	return ParseRules(strings.NewReader(string(rulesJSON)), book, admin)
}
