package domain

import (
	"errors"
	"testing"
	"time"
)

func TestParseCustomerID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want CustomerID
		ok   bool
	}{
		{"2345", 2345, true},
		{"02345", 2345, true}, // GDT field 3000 padding
		{"0000000001", 1, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false},
		{"0", 0, false},
		{"", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{" 5", 0, false},
		{"5a", 0, false},
		{"1e3", 0, false},
		{"٣", 0, false}, // a non-ASCII digit
	} {
		got, err := ParseCustomerID(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseCustomerID(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseCustomerID(%q) error %v is not ErrInvalid", tc.in, err)
		}
	}
}

func TestNewCustomer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	company := NewCompanyID()
	c, err := NewCustomer(company, 0, "  Anna ", "Berger", "1980-02-29", now)
	if err != nil || c.Data.FirstName != "Anna" || *c.Data.BirthDate != "1980-02-29" {
		t.Fatalf("valid customer: %+v, %v", c, err)
	}
	for name, args := range map[string][4]string{
		"no first name":   {"", "B", "", ""},
		"no last name":    {"A", " ", "", ""},
		"bad date":        {"A", "B", "1980-02-30", ""},
		"future birthday": {"A", "B", "2030-01-01", ""},
	} {
		var ve *ValidationError
		if _, err := NewCustomer(company, 0, args[0], args[1], args[2], now); !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a ValidationError", name, err)
		}
	}
	if _, err := NewCustomer(CompanyID{}, 0, "A", "B", "", now); !errors.Is(err, ErrInvalid) {
		t.Errorf("no company: %v, want ErrInvalid", err)
	}
}
