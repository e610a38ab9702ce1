package sniff

import (
	"bytes"
	"testing"

	"github.com/praxis-health/praxis/domain"
)

func TestSniff(t *testing.T) {
	t.Parallel()
	dicom := make([]byte, 200)
	copy(dicom[128:], "DICM")
	for name, tc := range map[string]struct {
		head []byte
		want string
	}{
		"pdf":          {[]byte("%PDF-1.7\n%âãÏÓ"), "application/pdf"},
		"png":          {[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "image/png"},
		"jpeg":         {[]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), "image/jpeg"},
		"gif":          {[]byte("GIF89a\x01\x00\x01\x00"), "image/gif"},
		"tiff":         {[]byte("II*\x00\x08\x00\x00\x00"), "image/tiff"},
		"bmp":          {[]byte("BM\x46\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00\x02\x00"), "image/bmp"},
		"webp":         {[]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), "image/webp"},
		"dicom":        {dicom, "application/dicom"},
		"gdt latin-9":  {[]byte("01380006310\r\n0193101M\xfcller\r\n"), "application/gdt"},
		"gdt 3.0":      {[]byte("01380006311\r\n014921803.00\r\n"), "application/gdt"},
		"gdt with bom": {[]byte("\xef\xbb\xbf01380006310\r\n"), "application/gdt"},
		"gdt ctrl-z":   {[]byte("01380006310\r\n0173000002345\r\n\x1a"), "application/gdt"},
		"latin-1 text": {[]byte("Befund f\xfcr Herrn M\xfcller\r\n"), "text/plain"},
		"text":         {[]byte("Blutdruck 120/80 mmHg\n"), "text/plain"},
		"xml":          {[]byte(`<?xml version="1.0" encoding="UTF-8"?><befund/>`), "text/xml"},
		"exe":          {[]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00"), "application/vnd.microsoft.portable-executable"},
		"zip":          {[]byte("PK\x03\x04\x14\x00\x00\x00"), "application/zip"},
		"random bytes": {bytes.Repeat([]byte{0x00, 0xff, 0x13}, 100), "application/octet-stream"},
	} {
		got := Sniffer{}.Sniff(tc.head)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// The formats the contract names are all accepted once sniffed; the rest are not.
func TestSniffedFormatsAgreeWithTheDomain(t *testing.T) {
	t.Parallel()
	if !domain.AcceptedContentType(Sniffer{}.Sniff([]byte("01380006310\r\n"))) {
		t.Error("GDT is not accepted")
	}
	if domain.AcceptedContentType(Sniffer{}.Sniff([]byte("MZ\x90\x00\x03\x00"))) {
		t.Error("an executable is accepted")
	}
}

func BenchmarkSniff(b *testing.B) {
	head := bytes.Repeat([]byte("%PDF-1.7\n"), domain.SniffBytes/9)
	for b.Loop() {
		_ = Sniffer{}.Sniff(head)
	}
}
