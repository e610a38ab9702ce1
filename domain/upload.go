package domain

import (
	"errors"
	"strings"
)

// Upload limits of the GDT/SonoGdt endpoints (and of POST files in the API).
const (
	MaxFileSize       int64 = 15 << 20 // 15 MiB; exactly this size is allowed
	MaxFilesPerUpload       = 20
	// SniffBytes is how much of a file's start decides its format.
	SniffBytes = 3072
)

// The reasons an upload is refused, in the order the checks run. Each has an
// exact message that devices and bridges match on; see UploadRefusal.Error.
var (
	ErrCompanyForbidden    = errors.New("company forbidden")
	ErrSecretInvalid       = errors.New("secret invalid")
	ErrCustomerNotFound    = errors.New("customer not found")
	ErrCustomerOfOther     = errors.New("customer of another company")
	ErrNoFile              = errors.New("no file")
	ErrFileTooLarge        = errors.New("file too large")
	ErrInsufficientStorage = errors.New("insufficient storage")
	ErrTooManyFiles        = errors.New("too many files")
	ErrMalformedUpload     = errors.New("malformed upload")
	// ErrIdempotencyKeyTooLong: an Idempotency-Key over 255 characters.
	ErrIdempotencyKeyTooLong = errors.New("idempotency key too long")
	// ErrPatientMismatch: a GDT part's field 3000 names another patient than the customer header (docs/contract.md §7).
	ErrPatientMismatch = errors.New("patient mismatch")
)

// UploadRefusal is a failed upload check with the value the client sent.
type UploadRefusal struct {
	Reason error  // one of the Err… sentinels above
	Value  string // the header value as sent, for the messages that quote it
}

// Refuse builds a refusal for a reason that quotes no value.
func Refuse(reason error) *UploadRefusal { return &UploadRefusal{Reason: reason} }

// Error is the exact message of the contract.
func (r *UploadRefusal) Error() string {
	switch {
	case errors.Is(r.Reason, ErrCompanyForbidden):
		return "UUID forbidden: [" + r.Value + "]"
	case errors.Is(r.Reason, ErrSecretInvalid):
		return "Secret not valid."
	case errors.Is(r.Reason, ErrCustomerNotFound):
		return "Customer not found: [" + r.Value + "]"
	case errors.Is(r.Reason, ErrCustomerOfOther):
		return "Der Kunde gehört nicht zu diesem Account."
	case errors.Is(r.Reason, ErrNoFile):
		return "Keine Datei gefunden."
	case errors.Is(r.Reason, ErrFileTooLarge):
		return "Die Datei ist zu groß. (Maximal 15 MB sind erlaubt)"
	case errors.Is(r.Reason, ErrInsufficientStorage):
		return "Unzureichender freier Speicherplatz."
	case errors.Is(r.Reason, ErrTooManyFiles):
		return "Zu viele Dateien. (Maximal 20 Dateien sind erlaubt)"
	case errors.Is(r.Reason, ErrIdempotencyKeyReused):
		return "Der Idempotency-Key wurde bereits für eine andere Anfrage verwendet."
	case errors.Is(r.Reason, ErrIdempotencyKeyTooLong):
		return "Der Idempotency-Key ist zu lang. (Maximal 255 Zeichen sind erlaubt)"
	case errors.Is(r.Reason, ErrPatientMismatch):
		return "Die Patientennummer der GDT-Datei passt nicht zum Kunden: [" + r.Value + "]"
	default:
		return "Ungültige Anfrage: der Inhalt ist kein vollständiges multipart/form-data."
	}
}

// Unwrap lets errors.Is match the reason.
func (r *UploadRefusal) Unwrap() error { return r.Reason }

// ReasonSlug names the reason in metrics and logs, never with the value.
func (r *UploadRefusal) ReasonSlug() string {
	return strings.ReplaceAll(r.Reason.Error(), " ", "_")
}

// Accepted formats, by the media type the sniffer reports. GDT files are text.
var acceptedContentTypes = map[string]bool{
	"application/pdf":   true,
	"image/jpeg":        true,
	"image/png":         true,
	"image/gif":         true,
	"image/tiff":        true,
	"image/bmp":         true,
	"image/webp":        true,
	"application/dicom": true,
	"application/gdt":   true,
	"text/plain":        true,
	"text/xml":          true,
	"application/xml":   true,
}

// AcceptedContentType reports whether a sniffed media type (parameters ignored) may be stored.
func AcceptedContentType(mediaType string) bool {
	if i := strings.IndexByte(mediaType, ';'); i >= 0 {
		mediaType = mediaType[:i]
	}
	return acceptedContentTypes[strings.TrimSpace(strings.ToLower(mediaType))]
}

// MessageTooManyAttempts answers uploads to a company whose upload secret is
// locked out after repeated wrong secrets (HTTP 429, with Retry-After).
const MessageTooManyAttempts = "Zu viele fehlgeschlagene Versuche. Bitte später erneut versuchen."

// Code names the refusal's reason for metrics and logs: "secret_invalid",
// "file_too_large", … It never carries the value the client sent.
func (r *UploadRefusal) Code() string {
	if r.Reason == nil {
		return ErrMalformedUpload.Error()
	}
	return strings.ReplaceAll(r.Reason.Error(), " ", "_")
}
