package domain

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The messages are the contract: devices and bridges match on them.
func TestUploadRefusalMessages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    *UploadRefusal
		want string
	}{
		{&UploadRefusal{Reason: ErrCompanyForbidden, Value: "abc"}, "UUID forbidden: [abc]"},
		{&UploadRefusal{Reason: ErrCompanyForbidden}, "UUID forbidden: []"},
		{Refuse(ErrSecretInvalid), "Secret not valid."},
		{&UploadRefusal{Reason: ErrCustomerNotFound, Value: "02345"}, "Customer not found: [02345]"},
		{Refuse(ErrCustomerOfOther), "Der Kunde gehört nicht zu diesem Account."},
		{Refuse(ErrNoFile), "Keine Datei gefunden."},
		{Refuse(ErrFileTooLarge), "Die Datei ist zu groß. (Maximal 15 MB sind erlaubt)"},
		{Refuse(ErrInsufficientStorage), "Unzureichender freier Speicherplatz."},
		{Refuse(ErrTooManyFiles), "Zu viele Dateien. (Maximal 20 Dateien sind erlaubt)"},
	} {
		if got := tc.r.Error(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.r.Reason, got, tc.want)
		}
		wrapped := fmt.Errorf("context: %w", tc.r)
		var r *UploadRefusal
		if !errors.As(wrapped, &r) || !errors.Is(wrapped, tc.r.Reason) {
			t.Errorf("%v: not found through wrapping", tc.r.Reason)
		}
		if strings.ContainsAny(r.ReasonSlug(), " []") {
			t.Errorf("slug %q", r.ReasonSlug())
		}
	}
	if MaxFileSize != 15*1024*1024 {
		t.Errorf("MaxFileSize = %d, want 15 MiB", MaxFileSize)
	}
}

func TestAcceptedContentType(t *testing.T) {
	t.Parallel()
	for _, ct := range []string{"application/pdf", "image/jpeg", "image/png", "image/gif", "image/tiff", "image/bmp",
		"image/webp", "application/dicom", "application/gdt", "text/plain; charset=utf-8", "text/xml", "application/xml"} {
		if !AcceptedContentType(ct) {
			t.Errorf("%s refused", ct)
		}
	}
	for _, ct := range []string{"application/octet-stream", "application/zip", "text/html", "application/x-msdownload", ""} {
		if AcceptedContentType(ct) {
			t.Errorf("%s accepted", ct)
		}
	}
}

func TestCleanFileName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"befund.pdf":               "befund.pdf",
		`C:\GDT\export\befund.pdf`: "befund.pdf",
		"../../etc/passwd":         "passwd",
		"a\x00b\nc.pdf":            "abc.pdf",
		"":                         "upload",
		"..":                       "upload",
		"Röntgen Müller.jpg":       "Röntgen Müller.jpg",
		"bad\xffutf8.pdf":          "badutf8.pdf",
		strings.Repeat("ä", 200):   strings.Repeat("ä", 127),
	} {
		if got := CleanFileName(in); got != want {
			t.Errorf("CleanFileName(%q) = %q, want %q", in, got, want)
		}
	}
}
