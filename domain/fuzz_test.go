package domain

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseUploadHeaders: the header parsers never panic, and what they accept
// means what it says.
func FuzzParseUploadHeaders(f *testing.F) {
	for _, s := range []string{"2345", "02345", "", "0", "-1", "99999999999999999999", "f10fcd1b-4c93-48f7-b7cf-488d2605f09c", "\x00", "١٢٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := ParseCustomerID(s); err == nil {
			if id <= 0 || strings.TrimLeft(s, "0") != strconv.FormatInt(int64(id), 10) {
				t.Fatalf("ParseCustomerID(%q) = %d", s, id)
			}
		}
		if id, err := ParseCompanyID(s); err == nil && !strings.EqualFold(id.String(), s) {
			t.Fatalf("ParseCompanyID(%q) = %s", s, id)
		}
		if n := CleanFileName(s); n == "" || len(n) > 255 || strings.ContainsAny(n, "/\x00") {
			t.Fatalf("CleanFileName(%q) = %q", s, n)
		}
	})
}
