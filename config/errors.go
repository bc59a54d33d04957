package config

import (
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden"
)

// Error is a bad key or value: the one field error
// (scanwarden.FieldError: Field the key, dotted as "checks.interval"; Value
// as written; the reason) with the file and the key's line (0 when not from
// a file). The CLI, the web page and the log each word it.
type Error struct {
	File string
	Line int
	scanwarden.FieldError
}

// configError is the *Error for key in file at line.
func configError(file string, line int, key, value, reason string) *Error {
	return &Error{File: file, Line: line, FieldError: scanwarden.FieldError{Field: key, Value: value, Reason: reason}}
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config")
	if e.File != "" {
		b.WriteString(" " + e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	if v, _ := e.Value.(string); v != "" {
		b.WriteString(" = " + v)
	}
	b.WriteString(": " + e.Reason)
	return b.String()
}

// Errors is every problem found in one file.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}
