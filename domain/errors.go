// Package domain holds praxis's types and rules. It imports nothing of ours but itself.
package domain

import "errors"

// Sentinel errors. Adapters translate their drivers' errors into these once;
// the HTTP layer maps them to status codes in one place.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrInvalid  = errors.New("invalid")
)

// ValidationError is a rejected value of one named field.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// Unwrap lets callers match every validation failure with errors.Is(err, ErrInvalid).
func (e *ValidationError) Unwrap() error { return ErrInvalid }

func invalid(field, message string) error { return &ValidationError{Field: field, Message: message} }

// ErrOtherCompany: the object exists but belongs to another company. Only the
// upload check that the spec requires tells this apart from ErrNotFound.
var ErrOtherCompany = errors.New("belongs to another company")

// ErrIdempotencyKeyReused: an Idempotency-Key came back with another request than its first.
var ErrIdempotencyKeyReused = errors.New("the Idempotency-Key was used for another request")
