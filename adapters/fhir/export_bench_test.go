package fhir

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// BenchmarkExportRender is an export's own work per page of 500
// measurements as the records' port answers them: decode each payload
// into its section's type, map, encode.
func BenchmarkExportRender(b *testing.B) {
	kind := domain.KindOf("measurements")
	customer := domain.CustomerID(17)
	at := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	objs := make([]ports.StoredObject, 500)
	for i := range objs {
		objs[i] = ports.StoredObject{ID: fmt.Sprintf("0193a2b4-%04d-7000-8000-000000000000", i), Customer: &customer, Version: 1, CreatedAt: at, UpdatedAt: at,
			Payload: []byte(`{"customer_id":17,"user_id":null,"appointment_id":null,"measured_at":"2026-03-10T09:00:00Z","type":"weight","name":null,"loinc_code":"29463-7","value":"72.5","unit":"kg","components":[],"source":"device","note":null}`)}
	}
	rt := resourceByName("Observation")
	x := view{company: domain.CompanyID{}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var out bytes.Buffer
		enc := lineEncoder(&out)
		items, err := itemsOf(kind, objs)
		if err != nil {
			b.Fatal(err)
		}
		for _, it := range items {
			if err := enc.Encode(rt.toFHIR(x, it)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*500), "ns/row")
}
