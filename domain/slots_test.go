package domain

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	slotUser    UUID = "019bc0e2-1280-781f-a8e2-5d940ed90475"
	slotUser2   UUID = "019bc0e2-1280-781f-a8e2-5d940ed90476"
	slotPlace   UUID = "019bc0e2-1668-7160-8999-50d836f675cc"
	slotPlace2  UUID = "019bc0e2-1668-7160-8999-50d836f675cd"
	slotService UUID = "019cd6cf-68f8-70c6-a6a3-a4506513270e"
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
func slotQuery(z *time.Location, from, to Date, duration, step, buffer int, hours ...WorkingTime) SlotQuery {
	return SlotQuery{From: from, To: to, Zone: z, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Service: slotService,
		Location: slotPlace, StepMinutes: step, BufferMinutes: buffer,
		Candidates: []SlotCandidate{{User: slotUser, DurationMinutes: duration, WorkingHours: hours}}}
}

func hours(weekday, from, to string) WorkingTime {
	return WorkingTime{LocationID: slotPlace, Weekday: weekday, From: TimeOfDay(from), To: TimeOfDay(to)}
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
		ordinary, dst Date
	}{
		{"Europe/Vienna", "sunday", "2026-03-22", "2026-03-29"},    // spring forward
		{"Europe/Vienna", "sunday", "2026-10-18", "2026-10-25"},    // fall back
		{"Australia/Sydney", "sunday", "2026-09-27", "2026-10-04"}, // spring forward, southern hemisphere
		{"Australia/Sydney", "sunday", "2026-03-29", "2026-04-05"}, // fall back
	}
	for _, c := range cases {
		z := zone(t, c.zone)
		day := func(d Date) []Slot { return Slots(slotQuery(z, d, d, 30, 30, 0, hours(c.weekday, "08:00", "12:00"))) }
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
	spring := Slots(slotQuery(vienna, "2026-03-29", "2026-03-29", 30, 30, 0, hours("sunday", "01:00", "04:00")))
	if got, want := local(spring, vienna), []string{"2026-03-29 01:00 +01:00", "2026-03-29 01:30 +01:00",
		"2026-03-29 03:00 +02:00", "2026-03-29 03:30 +02:00"}; !slices.Equal(got, want) {
		t.Errorf("spring forward in Vienna: %v, want %v (02:00–02:59 does not exist)", got, want)
	}
	autumn := Slots(slotQuery(vienna, "2026-10-25", "2026-10-25", 30, 30, 0, hours("sunday", "01:00", "04:00")))
	if got := clock(autumn, vienna); got != "01:00 01:30 02:00 02:30 03:00 03:30" {
		t.Errorf("fall back in Vienna: %q: each local start once", got)
	}
	south := Slots(slotQuery(sydney, "2026-10-04", "2026-10-04", 30, 30, 0, hours("sunday", "01:00", "04:00")))
	if got := clock(south, sydney); got != "01:00 01:30 03:00 03:30" {
		t.Errorf("spring forward in Sydney: %q", got)
	}
}

func TestSlotsBufferAndAppointments(t *testing.T) {
	z := zone(t, "Europe/Vienna")
	q := slotQuery(z, "2026-03-10", "2026-03-10", 20, 15, 10, hours("tuesday", "08:00", "09:00"))
	if got := clock(Slots(q), z); got != "08:00 08:15 08:30" {
		t.Errorf("20 minutes + 10 buffer in 08:00–09:00 every 15: %q", got)
	}
	at := func(hm string) time.Time {
		v, _ := time.ParseInLocation("2006-01-02 15:04", "2026-03-10 "+hm, z)
		return v
	}
	// An appointment 08:00–08:20 with a 10-minute buffer, at the other location: it blocks the user everywhere.
	span := AppointmentSpan{User: slotUser, Location: slotPlace2, Start: at("08:00"), BlockedUntil: at("08:30"), Active: true}
	q.Busy = []BusySpan{span.Busy()}
	if got := clock(Slots(q), z); got != "08:30" {
		t.Errorf("with an appointment at another location until 08:30: %q", got)
	}
	q.Busy = []BusySpan{{User: slotUser2, From: at("08:00").Unix(), Until: at("09:00").Unix()}}
	if got := clock(Slots(q), z); got != "08:00 08:15 08:30" {
		t.Errorf("another user's appointment: %q", got)
	}
	// Blocked until half a second past 08:30: the 08:30 slot overlaps it.
	span.BlockedUntil = at("08:30").Add(500 * time.Millisecond)
	q.Busy = []BusySpan{span.Busy()}
	if got := clock(Slots(q), z); got != "" {
		t.Errorf("an appointment blocking until 08:30:00.5: %q, want no slot", got)
	}
	// Spans in any order: the same answer as sorted ones.
	q.Busy = []BusySpan{
		{User: slotUser, From: at("08:45").Unix(), Until: at("09:00").Unix()},
		{User: slotUser2, From: at("08:00").Unix(), Until: at("09:00").Unix()},
		{User: slotUser, From: at("08:00").Unix(), Until: at("08:15").Unix()},
	}
	if got := clock(Slots(q), z); got != "08:15" {
		t.Errorf("unsorted spans 08:00–08:15 and 08:45–09:00: %q, want 08:15", got)
	}
}

func TestSlotsAbsenceAcrossMidnight(t *testing.T) {
	z := zone(t, "Europe/Vienna")
	q := slotQuery(z, "2026-03-09", "2026-03-10", 60, 60, 0, hours("monday", "18:00", "22:00"), hours("tuesday", "07:00", "11:00"))
	start, _ := time.ParseInLocation(time.DateTime, "2026-03-09 20:00:00", z)
	end, _ := time.ParseInLocation(time.DateTime, "2026-03-10 09:00:00", z)
	q.Candidates[0].Absences = []Absence{{Start: DateTime{start}, End: DateTime{end}}}
	if got := clock(Slots(q), z); got != "18:00 19:00 09:00 10:00" {
		t.Errorf("absent Monday 20:00 to Tuesday 09:00: %q", got)
	}
}

func TestSlotsNoticeAndOrder(t *testing.T) {
	z := zone(t, "Europe/Vienna")
	q := slotQuery(z, "2026-03-10", "2026-03-10", 30, 30, 0, hours("tuesday", "08:00", "16:00"))
	q.Now, q.NoticeMinutes = time.Date(2026, 3, 10, 10, 7, 0, 0, z), 120
	if got := clock(Slots(q), z); got != "12:30 13:00 13:30 14:00 14:30 15:00 15:30" {
		t.Errorf("at 10:07 with two hours' notice: %q", got)
	}
	q.NoticeMinutes = 0
	q.Candidates = append(q.Candidates, SlotCandidate{User: slotUser2, DurationMinutes: 30, WorkingHours: []WorkingTime{hours("tuesday", "10:00", "11:00")}})
	var got []string
	for _, s := range Slots(q) {
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
		_, _, err := SlotWindow(c.from, c.to)
		fe, _ := AsFieldErrors(err)
		if (c.field == "" && err != nil) || (c.field != "" && (len(fe) != 1 || fe[0].Field != c.field)) {
			t.Errorf("%s … %s: %v, want an error on %q", c.from, c.to, err, c.field)
		}
	}
}

func TestOffers(t *testing.T) {
	yes, no := ptr(true), ptr(false)
	c := BookingCatalog{
		Users: map[UUID]User{
			slotUser:  {Active: yes, OnlineBookable: yes, WorkingHours: []WorkingTime{hours("monday", "08:00", "12:00"), {LocationID: slotPlace2, Weekday: "friday", From: "08:00", To: "10:00"}}},
			slotUser2: {Active: yes, OnlineBookable: no},
		},
		Locations: map[UUID]Location{slotPlace: {Active: yes, OnlineBookable: yes}, slotPlace2: {Active: yes, OnlineBookable: no}},
		Services:  map[UUID]Service{slotService: {Active: yes, OnlineBookable: yes, DurationMinutes: 20}},
		Assignments: []ServiceAssignment{
			{UserID: slotUser, ServiceID: slotService, Active: yes, OnlineBookable: yes},
			{UserID: slotUser2, ServiceID: slotService, LocationID: ptr(slotPlace), Active: yes, OnlineBookable: yes},
		},
	}
	got := c.Offers()
	if want := []Offer{{User: slotUser, Service: slotService, Location: slotPlace, DurationMinutes: 20}}; !slices.Equal(got, want) {
		t.Errorf("offers %v, want %v: the second location and the second user are not bookable online", got, want)
	}
	c.Assignments = append(c.Assignments, ServiceAssignment{UserID: slotUser, ServiceID: slotService, LocationID: ptr(slotPlace),
		DurationMinutes: ptr(45), Active: yes, OnlineBookable: yes})
	if got := c.Offers(); len(got) != 1 || got[0].DurationMinutes != 45 || c.Duration(slotUser, slotService, slotPlace) != 45 {
		t.Errorf("an assignment naming the location wins over one for every location: %v", got)
	}
	if d := c.Duration(slotUser, slotService, slotPlace2); d != 20 {
		t.Errorf("duration elsewhere: %d, want the service's 20", d)
	}
}

func TestAppointmentStatusMachine(t *testing.T) {
	z := zone(t, "Europe/Vienna")
	start := time.Date(2026, 3, 10, 15, 0, 0, 0, z)
	before := RuleContext{Now: time.Date(2026, 3, 9, 12, 0, 0, 0, z), Zone: z}
	sameDay := RuleContext{Now: time.Date(2026, 3, 10, 9, 0, 0, 0, z), Zone: z}
	after := RuleContext{Now: time.Date(2026, 3, 10, 16, 0, 0, 0, z), Zone: z}
	for _, c := range []struct {
		from, to AppointmentStatus
		rc       RuleContext
		ok       bool
	}{
		{StatusBooked, StatusArrived, before, true},
		{StatusBooked, StatusCompleted, before, false},
		{StatusBooked, StatusCompleted, sameDay, true},
		{StatusBooked, StatusNoShow, sameDay, false},
		{StatusBooked, StatusNoShow, after, true},
		{StatusBooked, StatusCancelled, after, false},
		{StatusArrived, StatusCompleted, before, true},
		{StatusArrived, StatusBooked, before, true},
		{StatusArrived, StatusNoShow, after, false},
		{StatusNoShow, StatusBooked, after, true},
		{StatusNoShow, StatusCompleted, after, false},
		{StatusCompleted, StatusBooked, after, false},
		{StatusCancelled, StatusBooked, after, false},
	} {
		if got := c.from.CanBecome(c.to, start, c.rc); got != c.ok {
			t.Errorf("%s → %s at %s: %v, want %v", c.from, c.to, c.rc.Now, got, c.ok)
		}
	}
	if !StatusBooked.Cancellable() || !StatusArrived.Cancellable() || StatusCompleted.Cancellable() || StatusNoShow.Cancellable() {
		t.Error("only booked and arrived appointments can be cancelled")
	}
}
