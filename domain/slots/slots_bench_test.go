package slots

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// BenchmarkSlots is booking/slots' pure part at the size of the issue: a
// 31-day window of a practice with 10 bookable users at 2 locations and 500
// appointments.
func BenchmarkSlots(b *testing.B) {
	q := benchSlotQuery(b)
	n := len(Free(q))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Free(q)
	}
	b.ReportMetric(float64(n), "slots")
}

// BenchmarkAppendJSON is the same computation rendered as booking/slots answers it.
func BenchmarkAppendJSON(b *testing.B) {
	q := benchSlotQuery(b)
	buf := AppendJSON(nil, q)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf = AppendJSON(buf[:0], q)
	}
}

func benchSlotQuery(b *testing.B) Query {
	b.Helper()
	z, err := time.LoadLocation("Europe/Vienna")
	if err != nil {
		b.Fatal(err)
	}
	q := Query{From: "2026-03-02", To: "2026-04-01", Zone: z, Now: time.Date(2026, 3, 1, 0, 0, 0, 0, z),
		Service: slotService, Location: slotPlace, StepMinutes: 15, BufferMinutes: 5}
	for i := range 10 {
		u := domain.UUID(fmt.Sprintf("019bc0e2-1280-781f-a8e2-5d940ed904%02d", i))
		var hours []domain.WorkingTime
		for _, d := range []string{"monday", "tuesday", "wednesday", "thursday", "friday"} {
			hours = append(hours, domain.WorkingTime{LocationID: slotPlace, Weekday: d, From: "08:00", To: "12:00"},
				domain.WorkingTime{LocationID: slotPlace2, Weekday: d, From: "13:00", To: "18:00"})
		}
		q.Candidates = append(q.Candidates, Candidate{User: u, DurationMinutes: 20, WorkingHours: hours})
		for j := range 50 { // 500 in all, spread over the window and both locations
			start := time.Date(2026, 3, 2+j*31/50, 8+j%9, 0, 0, 0, z)
			q.Busy = append(q.Busy, Busy{User: u, From: start.Unix(), Until: start.Add(25 * time.Minute).Unix()})
		}
	}
	slices.SortFunc(q.Busy, compareBusy) // as the calendar lists them
	return q
}
