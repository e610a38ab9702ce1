package otelattr

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

func TestSetsKeepBoundedSets(t *testing.T) {
	built := 0
	sets := NewSets(2, func(route string) []attribute.KeyValue {
		built++
		return []attribute.KeyValue{attribute.String("http.route", route), attribute.String("http.request.method", "GET")}
	})
	for range 3 {
		for _, route := range []string{"/a", "/b", "/c"} {
			set := sets.Of(route)
			if v, _ := set.Value("http.route"); v.AsString() != route || set.Len() != 2 {
				t.Fatalf("the set of %s: %v", route, set.Encoded(attribute.DefaultEncoder()))
			}
		}
	}
	// /a and /b are kept after their first use; /c, past the bound, is built each time.
	if built != 2+3 {
		t.Errorf("sets built: %d, want 5", built)
	}
}
