package domain_test

import (
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
)

// canonical is the one spelling of an id, as a pattern: ValidObjectID
// must say what it says, for every string.
var canonical = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func FuzzValidObjectID(f *testing.F) {
	for _, s := range []string{domain.NewObjectID(), uuid.NewString(), "019C0000-0000-7000-8000-000000000000",
		"019c0000-0000-7000-8000-00000000000", "019c0000-0000-7000-8000-0000000000000", "019c0000_0000-7000-8000-000000000000",
		"019c0000-0000-7000-8000-00000000000g", "", "{019c0000-0000-7000-8000-000000000000}", "019c0000-0000-7000-8000-000000000000\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := domain.ValidObjectID(s), canonical.MatchString(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	})
}

// TestObjectOverheadBoundsAppendObject: a page's buffer sized by
// ObjectOverhead per object never grows while the page is written.
func TestObjectOverheadBoundsAppendObject(t *testing.T) {
	latest := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	payload := []byte(`{"customer_id": 1, "text": "x"}`)
	for _, id := range []string{domain.NewObjectID(), "9999999999"} {
		out := domain.AppendObject(nil, id, id == "9999999999", payload, math.MaxInt64, latest, latest)
		if extra := len(out) - len(payload); extra > domain.ObjectOverhead {
			t.Errorf("%s: %d bytes beside the payload, ObjectOverhead is %d", id, extra, domain.ObjectOverhead)
		}
	}
}
