package slots

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

const (
	slotUser    domain.UUID = "019bc0e2-1280-781f-a8e2-5d940ed90475"
	slotUser2   domain.UUID = "019bc0e2-1280-781f-a8e2-5d940ed90476"
	slotPlace   domain.UUID = "019bc0e2-1668-7160-8999-50d836f675cc"
	slotPlace2  domain.UUID = "019bc0e2-1668-7160-8999-50d836f675cd"
	slotService domain.UUID = "019cd6cf-68f8-70c6-a6a3-a4506513270e"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// slotQuery is one user with the given working hours at slotPlace, a
// service of duration/step/buffer minutes, judged long before the dates.
func slotQuery(z *time.Location, from, to domain.Date, duration, step, buffer int, hours ...domain.WorkingTime) Query {
	return Query{From: from, To: to, Zone: z, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Service: slotService,
		Location: slotPlace, StepMinutes: step, BufferMinutes: buffer,
		Candidates: []Candidate{{User: slotUser, DurationMinutes: duration, WorkingHours: hours}}}
}

func hours(weekday, from, to string) domain.WorkingTime {
	return domain.WorkingTime{LocationID: slotPlace, Weekday: weekday, From: domain.TimeOfDay(from), To: domain.TimeOfDay(to)}
}

// local lists the slots' starts as local wall-clock times with their offsets.
func local(slots []Slot, z *time.Location) []string {
	out := make([]string, len(slots))
	for i, s := range slots {
		out[i] = s.Start.In(z).Format("2006-01-02 15:04 -07:00")
	}
	return out
}

func clock(slots []Slot, z *time.Location) string {
	out := make([]string, len(slots))
	for i, s := range slots {
		out[i] = s.Start.In(z).Format("15:04")
	}
	return strings.Join(out, " ")
}

func TestSlotsKeepWallClockAcrossDaylightSaving(t *testing.T) {
	cases := []struct {
		zone, weekday string
		ordinary, dst domain.Date
	}{
		{"Europe/Vienna", "sunday", "2026-03-22", "2026-03-29"},    // spring forward
		{"Europe/Vienna", "sunday", "2026-10-18", "2026-10-25"},    // fall back
		{"Australia/Sydney", "sunday", "2026-09-27", "2026-10-04"}, // spring forward, southern hemisphere
		{"Australia/Sydney", "sunday", "2026-03-29", "2026-04-05"}, // fall back
	}
	for _, c := range cases {
		z := zone(t, c.zone)
		day := func(d domain.Date) []Slot {
			return Free(slotQuery(z, d, d, 30, 30, 0, hours(c.weekday, "08:00", "12:00")))
		}
		ordinary, dst := day(c.ordinary), day(c.dst)
		if want := "08:00 08:30 09:00 09:30 10:00 10:30 11:00 11:30"; clock(ordinary, z) != want || clock(dst, z) != want {
			t.Errorf("%s %s: %q, ordinary day %q; want %q", c.zone, c.dst, clock(dst, z), clock(ordinary, z), want)
		}
		if _, o1 := ordinary[0].Start.In(z).Zone(); true {
			if _, o2 := dst[0].Start.In(z).Zone(); o1 == o2 {
				t.Errorf("%s: the instants should shift with the offset (%d both)", c.zone, o1)
			}
		}
	}
}

func TestSlotsSkipMissingAndTakeAmbiguousTimesOnce(t *testing.T) {
	vienna, sydney := zone(t, "Europe/Vienna"), zone(t, "Australia/Sydney")
	spring := Free(slotQuery(vienna, "2026-03-29", "2026-03-29", 30, 30, 0, hours("sunday", "01:00", "04:00")))
	if got, want := local(spring, vienna), []string{"2026-03-29 01:00 +01:00", "2026-03-29 01:30 +01:00",
		"2026-03-29 03:00 +02:00", "2026-03-29 03:30 +02:00"}; !slices.Equal(got, want) {
		t.Errorf("spring forward in Vienna: %v, want %v (02:00–02:59 does not exist)", got, want)
	}
	autumn := Free(slotQuery(vienna, "2026-10-25", "2026-10-25", 30, 30, 0, hours("sunday", "01:00", "04:00")))
	if got := clock(autumn, vienna); got != "01:00 01:30 02:00 02:30 03:00 03:30" {
		t.Errorf("fall back in Vienna: %q: each local start once", got)
	}
	south := Free(slotQuery(sydney, "2026-10-04", "2026-10-04", 30, 30, 0, hours("sunday", "01:00", "04:00")))
	if got := clock(south, sydney); got != "01:00 01:30 03:00 03:30" {
		t.Errorf("spring forward in Sydney: %q", got)
	}
}

func TestSlotsBufferAndAppointments(t *testing.T) {
	z := zone(t, "Europe/Vienna")
	q := slotQuery(z, "2026-03-10", "2026-03-10", 20, 15, 10, hours("tuesday", "08:00", "09:00"))
	if got := clock(Free(q), z); got != "08:00 08:15 08:30" {
		t.Errorf("20 minutes + 10 buffer in 08:00–09:00 every 15: %q", got)
	}
	at := func(hm string) time.Time {
		v, _ := time.ParseInLocation("2006-01-02 15:04", "2026-03-10 "+hm, z)
		return v
	}
	// An appointment 08:00–08:20 with a 10-minute buffer, at the other location: it blocks the user everywhere.
	span := domain.AppointmentSpan{User: slotUser, Location: slotPlace2, Start: at("08:00"), BlockedUntil: at("08:30"), Active: true}
	q.Busy = []Busy{BusyOf(span)}
	if got := clock(Free(q), z); got != "08:30" {
		t.Errorf("with an appointment at another location until 08:30: %q", got)
	}
	q.Busy = []Busy{{User: slotUser2, From: at("08:00").Unix(), Until: at("09:00").Unix()}}
	if got := clock(Free(q), z); got != "08:00 08:15 08:30" {
		t.Errorf("another user's appointment: %q", got)
	}
	// Blocked until half a second past 08:30: the 08:30 slot overlaps it.
	span.BlockedUntil = at("08:30").Add(500 * time.Millisecond)
	q.Busy = []Busy{BusyOf(span)}
	if got := clock(Free(q), z); got != "" {
		t.Errorf("an appointment blocking until 08:30:00.5: %q, want no slot", got)
	}
	// Spans in any order: the same answer as sorted ones.
	q.Busy = []Busy{
		{User: slotUser, From: at("08:45").Unix(), Until: at("09:00").Unix()},
		{User: slotUser2, From: at("08:00").Unix(), Until: at("09:00").Unix()},
		{User: slotUser, From: at("08:00").Unix(), Until: at("08:15").Unix()},
	}
	if got := clock(Free(q), z); got != "08:15" {
		t.Errorf("unsorted spans 08:00–08:15 and 08:45–09:00: %q, want 08:15", got)
	}
}

func TestSlotsAbsenceAcrossMidnight(t *testing.T) {
	z := zone(t, "Europe/Vienna")
	q := slotQuery(z, "2026-03-09", "2026-03-10", 60, 60, 0, hours("monday", "18:00", "22:00"), hours("tuesday", "07:00", "11:00"))
	start, _ := time.ParseInLocation(time.DateTime, "2026-03-09 20:00:00", z)
	end, _ := time.ParseInLocation(time.DateTime, "2026-03-10 09:00:00", z)
	q.Candidates[0].Absences = []domain.Absence{{Start: domain.DateTime{Time: start}, End: domain.DateTime{Time: end}}}
	if got := clock(Free(q), z); got != "18:00 19:00 09:00 10:00" {
		t.Errorf("absent Monday 20:00 to Tuesday 09:00: %q", got)
	}
}

func TestSlotsNoticeAndOrder(t *testing.T) {
	z := zone(t, "Europe/Vienna")
	q := slotQuery(z, "2026-03-10", "2026-03-10", 30, 30, 0, hours("tuesday", "08:00", "16:00"))
	q.Now, q.NoticeMinutes = time.Date(2026, 3, 10, 10, 7, 0, 0, z), 120
	if got := clock(Free(q), z); got != "12:30 13:00 13:30 14:00 14:30 15:00 15:30" {
		t.Errorf("at 10:07 with two hours' notice: %q", got)
	}
	q.NoticeMinutes = 0
	q.Candidates = append(q.Candidates, Candidate{User: slotUser2, DurationMinutes: 30, WorkingHours: []domain.WorkingTime{hours("tuesday", "10:00", "11:00")}})
	var got []string
	for _, s := range Free(q) {
		got = append(got, s.Start.In(z).Format("15:04")+"/"+string(s.User[len(s.User)-1:]))
	}
	if want := "10:30/5 10:30/6 11:00/5"; !strings.HasPrefix(strings.Join(got, " "), want) {
		t.Errorf("sorted by start, then user: %v, want prefix %q", got, want)
	}
}

func TestSlotWindow(t *testing.T) {
	for _, c := range []struct{ from, to, field string }{
		{"2026-03-01", "2026-03-31", ""},
		{"2026-03-01", "2026-03-01", ""},
		{"2026-03-01", "2026-04-01", "to"},
		{"2026-03-02", "2026-03-01", "to"},
		{"2026-3-1", "2026-03-01", "from"},
		{"2026-03-01", "tomorrow", "to"},
	} {
		_, _, err := Window(c.from, c.to)
		fe, _ := domain.AsFieldErrors(err)
		if (c.field == "" && err != nil) || (c.field != "" && (len(fe) != 1 || fe[0].Field != c.field)) {
			t.Errorf("%s … %s: %v, want an error on %q", c.from, c.to, err, c.field)
		}
	}
}
