package domain

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// FieldError is one rejected field: its body path (`items[2].quantity`) or
// query parameter, and the rule it broke. The message never repeats the value:
// values may be health data (docs/sections.md, the PHI rule).
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// FieldErrors collects every failing field of one input, so that a 422 lists them all at once.
type FieldErrors []FieldError

// Add records one failure.
func (e *FieldErrors) Add(field, message string) { *e = append(*e, FieldError{field, message}) }

// Err is nil when nothing failed, else a *ValidationErrors.
func (e FieldErrors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return &ValidationErrors{Errors: slices.Clone(e)}
}

// ValidationErrors is an input refused for one or more field errors.
type ValidationErrors struct{ Errors FieldErrors }

func (e *ValidationErrors) Error() string {
	parts := make([]string, len(e.Errors))
	for i, f := range e.Errors {
		parts[i] = f.Field + ": " + f.Message
	}
	return strings.Join(parts, "; ")
}

// Unwrap lets callers match it with errors.Is(err, ErrInvalid).
func (e *ValidationErrors) Unwrap() error { return ErrInvalid }

// AsFieldErrors lists the field errors of a validation error of either form.
func AsFieldErrors(err error) (FieldErrors, bool) {
	var many *ValidationErrors
	if errors.As(err, &many) {
		return many.Errors, true
	}
	var one *ValidationError
	if errors.As(err, &one) {
		return FieldErrors{{one.Field, one.Message}}, true
	}
	return nil, false
}

// bodyPath joins a JSON location into the body-path form of errors[].field.
func bodyPath(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		if _, err := strconv.Atoi(s); err == nil {
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

func join(parent, field string) string {
	if parent == "" {
		return field
	}
	return parent + "." + field
}

// ratString prints a schema bound without trailing zeros.
func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return strings.TrimRight(strings.TrimRight(r.FloatString(6), "0"), ".")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
