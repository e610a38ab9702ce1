package fhir

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/praxis-health/praxis/domain"
)

// BenchmarkExportRender is an export's own work per page of 500
// measurements as the native list answers them: parse, map, encode.
func BenchmarkExportRender(b *testing.B) {
	var page bytes.Buffer
	page.WriteByte('[')
	for i := range 500 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `{"id":"0193a2b4-%04d-7000-8000-000000000000","version":1,"created_at":"2026-03-10T09:00:00Z","updated_at":"2026-03-10T09:00:00Z","customer_id":17,"measured_at":"2026-03-10T09:00:00Z","type":"weight","name":null,"loinc_code":"29463-7","value":"72.5","unit":"kg","components":[],"source":"device","note":null}`, i)
	}
	page.WriteByte(']')
	rt := resourceByName("Observation")
	x := view{company: domain.CompanyID{}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var out bytes.Buffer
		enc := lineEncoder(&out)
		err := withObjects(page.Bytes(), func(objs []object) error {
			for _, o := range objs {
				if err := enc.Encode(rt.toFHIR(x, o)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*500), "ns/row")
}
