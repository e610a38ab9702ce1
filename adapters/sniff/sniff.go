// Package sniff names a file's format from its bytes with
// github.com/gabriel-vasile/mimetype, and recognises GDT records itself.
package sniff

import (
	"strings"

	"github.com/gabriel-vasile/mimetype"

	"github.com/praxis-health/praxis/domain/gdt"
	"github.com/praxis-health/praxis/ports"
)

// Sniffer is the ports.Sniffer.
type Sniffer struct{}

var _ ports.Sniffer = Sniffer{}

// Sniff returns the media type without parameters.
func (Sniffer) Sniff(head []byte) string {
	if gdt.LooksLike(head) {
		return "application/gdt"
	}
	mediaType := mimetype.Detect(head).String()
	if i := strings.IndexByte(mediaType, ';'); i >= 0 {
		mediaType = mediaType[:i]
	}
	return mediaType
}
