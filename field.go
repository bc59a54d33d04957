package scanwarden

import "fmt"

// FieldError is a validation error that names the setting at fault, its
// value and why it cannot be used. Each front end (CLI flags, the config
// file, a web form) words the field in its own terms: no caller parses the
// message. Value is never a secret.
type FieldError struct {
	Field  string // the setting's key, e.g. "host", "max_failures", "url"
	Value  any    // what was given ("" or nil when empty)
	Reason string // why it cannot be used
}

func (e *FieldError) Error() string {
	if e.Value == nil || e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("%s %v: %s", e.Field, e.Value, e.Reason)
}

// BadField returns a *FieldError.
func BadField(field string, value any, reason string) error {
	return &FieldError{Field: field, Value: value, Reason: reason}
}
