package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/domain"
)

func TestParsePrecondition(t *testing.T) {
	cases := []struct {
		value    string
		weak     bool
		matches  []int64
		misses   []int64
		anything bool
	}{
		{value: `"3"`, matches: []int64{3}, misses: []int64{2, 4}},
		{value: ` "3" , "7"`, matches: []int64{3, 7}, misses: []int64{5}},
		{value: `*`, anything: true, matches: []int64{1, 99}},
		{value: `W/"4"`, weak: true, matches: []int64{4}, misses: []int64{3}},
		{value: `W/"4", "5"`, weak: true, matches: []int64{4, 5}},
	}
	for _, c := range cases {
		p, err := domain.ParsePrecondition("If-Match", c.value, c.weak)
		if err != nil || !p.Sent() || p.Any != c.anything {
			t.Fatalf("%q: %+v %v", c.value, p, err)
		}
		for _, v := range c.matches {
			if !p.Matches(v) || p.CheckVersion(v) != nil {
				t.Errorf("%q should match version %d", c.value, v)
			}
		}
		for _, v := range c.misses {
			var stale *domain.StaleVersion
			if err := p.CheckVersion(v); !errors.As(err, &stale) || stale.Current != v || !errors.Is(err, domain.ErrVersionMismatch) {
				t.Errorf("%q against version %d: %v", c.value, v, err)
			}
		}
	}
	if p, err := domain.ParsePrecondition("If-Match", "", false); err != nil || p.Sent() || p.CheckVersion(7) != nil {
		t.Errorf("no header: %+v %v", p, err)
	}
	for _, bad := range []string{`3`, `"x"`, `""`, `"0"`, `"03"`, `"-1"`, `"+1"`, `"1`, `W/"1"`, `"1",`, `"99999999999999999999"`, `"1" "2"`,
		strings.Repeat(`"1",`, 20) + `"1"`} {
		if _, err := domain.ParsePrecondition("If-Match", bad, false); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("If-Match %q: %v, want a validation error", bad, err)
		}
	}
	if _, err := domain.ParsePrecondition("If-None-Match", `W/x`, true); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("a malformed weak tag: %v", err)
	}
	if got := domain.ETag(12); got != `"12"` {
		t.Errorf("ETag(12) = %s", got)
	}
}

func TestParseIDs(t *testing.T) {
	a, b := domain.NewObjectID(), domain.NewObjectID()
	ids, err := domain.ParseIDs(a+","+b+","+a, false)
	if err != nil || len(ids) != 2 || ids[0] != a || ids[1] != b {
		t.Fatalf("two ids, one twice: %v %v", ids, err)
	}
	if ids, err := domain.ParseIDs("7,12", true); err != nil || len(ids) != 2 {
		t.Fatalf("customer numbers: %v %v", ids, err)
	}
	_, err = domain.ParseIDs(a+",7,"+strings.ToUpper(b)+",", false)
	fe, _ := domain.AsFieldErrors(err)
	if len(fe) != 3 || fe[0].Field != "ids[1]" || fe[1].Field != "ids[2]" || fe[2].Field != "ids[3]" {
		t.Fatalf("ids of another form: %v", err)
	}
	for _, f := range fe {
		if strings.Contains(f.Message, strings.ToUpper(b)) {
			t.Errorf("the message repeats a value: %s", f.Message)
		}
	}
	if _, err := domain.ParseIDs(a, true); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("a UUID for a customer number: %v", err)
	}
	many := strings.TrimSuffix(strings.Repeat("1,", domain.MaxBatchIDs+1), ",")
	if _, err := domain.ParseIDs(many, true); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("%d ids: %v", domain.MaxBatchIDs+1, err)
	}
	if ids, err := domain.ParseIDs(strings.TrimSuffix(strings.Repeat("1,", domain.MaxBatchIDs), ","), true); err != nil || len(ids) != 1 {
		t.Errorf("%d ids, all one: %v %v", domain.MaxBatchIDs, ids, err)
	}
}
