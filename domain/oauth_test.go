package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

func TestScopeCatalogue(t *testing.T) {
	t.Parallel()
	all := domain.AllScopes()
	optIn := 0
	for _, s := range domain.Sections {
		if s.OptIn {
			optIn++
			if all.Contains(domain.ReadScope(s.Slug)) || !domain.OptInScopes.Contains(domain.WriteScope(s.Slug)) {
				t.Errorf("the opt-in section %s's scopes are in the default catalogue or not opt-in", s.Slug)
			}
		}
	}
	if optIn == 0 || len(all) != 2*(len(domain.Sections)-optIn) {
		t.Fatalf("%d scopes for %d sections (%d opt-in), want a read and a write scope for each that is not opt-in", len(all), len(domain.Sections), optIn)
	}
	for _, s := range all {
		if !s.Known() {
			t.Errorf("%s is in the catalogue but not Known", s)
		}
	}
	if !all.Contains(domain.ScopeCompanyRead) || !all.Contains("customers:write") || !all.Contains("medical-fee-services:read") {
		t.Error("catalogue misses a scope of docs/contract.md §4")
	}
}

func TestParseScopes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		err      bool
	}{
		{"company:read", "company:read", false},
		{"  customers:write   company:read ", "customers:write company:read", false},
		{"company:read company:read", "company:read", false},
		{"", "", true},
		{"   ", "", true},
		{"company:delete", "", true},
		{"nothing:read", "", true},
		{"company", "", true},
		{"Company:read", "", true},
		{"company:read,customers:read", "", true},
	}
	for _, tc := range cases {
		got, err := domain.ParseScopes(tc.in)
		if (err != nil) != tc.err || got.String() != tc.want {
			t.Errorf("ParseScopes(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("ParseScopes(%q): %v is not ErrInvalid", tc.in, err)
		}
	}
	granted, _ := domain.ParseScopes("company:read customers:read")
	want, _ := domain.ParseScopes("customers:read customers:write")
	if missing, ok := granted.Missing(want); !ok || missing != "customers:write" {
		t.Errorf("Missing = %q, %v; want customers:write", missing, ok)
	}
	if _, ok := granted.Missing(granted); ok {
		t.Error("a set misses nothing of itself")
	}
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	company := domain.NewCompanyID()
	c, secret, err := domain.NewClient(company, "  Kalender  ", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "Kalender" || len(c.Scopes) != len(domain.AllScopes()) || !c.Active() || c.CompanyID != company {
		t.Errorf("client %+v", c)
	}
	if !strings.HasPrefix(string(c.ID), "pc_") || !c.ID.Plausible() || len(secret) != 43 || !secret.Matches(c.SecretHash) {
		t.Errorf("id %q, secret of %d characters", c.ID, len(secret))
	}
	other, otherSecret, _ := domain.NewClient(company, "", nil, time.Now())
	if other.ID == c.ID || otherSecret == secret {
		t.Error("two clients share an id or a secret")
	}
	if _, _, err := domain.NewClient(company, strings.Repeat("x", 201), nil, time.Now()); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("long name: %v", err)
	}
}

func TestClientIDPlausible(t *testing.T) {
	t.Parallel()
	for id, want := range map[domain.ClientID]bool{
		"pc_abc": true, "": false, "a:b": false, "a b": false, "ä": false, "a\n": false,
		domain.ClientID(strings.Repeat("a", 64)): true, domain.ClientID(strings.Repeat("a", 65)): false,
	} {
		if got := id.Plausible(); got != want {
			t.Errorf("%q.Plausible() = %v, want %v", id, got, want)
		}
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]int{time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, time.Minute: 60} {
		if got := (&domain.TooManyAttempts{RetryAfter: d}).RetryAfterSeconds(); got != want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestClientSecretRotation(t *testing.T) {
	now := time.Now()
	first, _ := domain.NewSecret()
	second, _ := domain.NewSecret()
	third, _ := domain.NewSecret()
	c := domain.Client{SecretHash: first.Hash()}
	c.Rotate(second, time.Hour, now)
	if !c.Accepts(first, now) || !c.Accepts(second, now) || c.Accepts(first, now.Add(time.Hour)) || !c.Accepts(second, now.Add(time.Hour)) {
		t.Error("during and after the overlap")
	}
	c.Rotate(third, 0, now)
	if c.Accepts(first, now) || c.Accepts(second, now) || !c.Accepts(third, now) || c.PreviousSecretUntil != nil {
		t.Error("a rotation without overlap")
	}
	if c.Accepts("", now) {
		t.Error("an empty secret is accepted")
	}
}

// BenchmarkParseScopes: a default client's whole list, as every bearer
// request reads it from its token.
func BenchmarkParseScopes(b *testing.B) {
	list := domain.AllScopes().String()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := domain.ParseScopes(list); err != nil {
			b.Fatal(err)
		}
	}
}
