// Helpers: GDT and file fixtures.

package test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

// pdfOfSize is a PDF-signed file of exactly n bytes.
func pdfOfSize(n int) []byte {
	b := bytes.Repeat([]byte("0"), n)
	copy(b, "%PDF-1.4\n")
	return b
}

func pngImage(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func jpegImage(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 8, 8)), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// dicomFile has the 128-byte preamble and the DICM magic.
func dicomFile() []byte {
	b := make([]byte, 256)
	copy(b[128:], "DICM")
	return b
}

// gdtFile is a GDT 2.1 record about customer with ISO-8859-15 umlauts (ü is 0xFC);
// its 3000 carries leading zeros, as exports often do.
func gdtFile(customer int64) []byte {
	return []byte(fmt.Sprintf("01380006310\r\n014810000204\r\n0173000%06d\r\n0193101M\xfcller\r\n", customer))
}

// executable is a format praxis does not store.
func executable() []byte { return append([]byte("MZ\x90\x00\x03\x00\x00\x00"), make([]byte, 200)...) }
