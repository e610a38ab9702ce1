package domain

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"
)

// MaxSlotDays is the longest window booking/slots answers, both dates counted.
const MaxSlotDays = 31

// Offer is one bookable combination: a user offering a service at a
// location, for DurationMinutes (the assignment's, else the service's).
type Offer struct {
	User, Service, Location UUID
	DurationMinutes         int
}

// CatalogSections are the sections a BookingCatalog is read from: those the
// table marks inCatalog. A write to any of them changes the company's CatalogVersion.
var CatalogSections = func() []string {
	var out []string
	for _, k := range Kinds() {
		if k.HasHook(HookCatalogVersion) {
			out = append(out, k.Slug)
		}
	}
	return out
}()

// BookingCatalog is the company's master data as the booking widget sees it.
type BookingCatalog struct {
	Users     map[UUID]User
	Locations map[UUID]Location
	Services  map[UUID]Service
	// Assignments are the live service assignments.
	Assignments []ServiceAssignment
}

// Offers are the catalogue's bookable combinations: an active, online-bookable
// assignment whose user, service and location are active and online-bookable
// too. An assignment without a location offers every location where its
// user has working hours; one naming the location wins over it.
func (c BookingCatalog) Offers() []Offer {
	type key struct{ user, service, location UUID }
	found := map[key]Offer{}
	specific := map[key]bool{}
	for _, a := range c.Assignments {
		u, uok := c.Users[a.UserID]
		s, sok := c.Services[a.ServiceID]
		if !uok || !sok || !on(a.Active) || !on(a.OnlineBookable) || !bookable(u.Active, u.OnlineBookable) ||
			!bookable(s.Active, s.OnlineBookable) {
			continue
		}
		duration := s.DurationMinutes
		if a.DurationMinutes != nil {
			duration = *a.DurationMinutes
		}
		locations := []UUID{}
		if a.LocationID != nil {
			locations = append(locations, *a.LocationID)
		} else {
			for _, w := range u.WorkingHours {
				if !slices.Contains(locations, w.LocationID) {
					locations = append(locations, w.LocationID)
				}
			}
		}
		for _, l := range locations {
			loc, ok := c.Locations[l]
			k := key{a.UserID, a.ServiceID, l}
			if !ok || !bookable(loc.Active, loc.OnlineBookable) || (specific[k] && a.LocationID == nil) {
				continue
			}
			found[k] = Offer{User: a.UserID, Service: a.ServiceID, Location: l, DurationMinutes: duration}
			specific[k] = specific[k] || a.LocationID != nil
		}
	}
	out := make([]Offer, 0, len(found))
	for _, o := range found {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Offer) int {
		return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.Service, b.Service), cmp.Compare(a.Location, b.Location))
	})
	return out
}

func on(b *bool) bool                    { return b != nil && *b }
func bookable(active, online *bool) bool { return on(active) && on(online) }

// SlotQuery is everything the free slots of one service at one location
// depend on; Slots is a pure function of it.
type SlotQuery struct {
	From, To      Date
	Zone          *time.Location
	Now           time.Time
	NoticeMinutes int
	Service       UUID
	Location      UUID
	StepMinutes   int
	BufferMinutes int
	Candidates    []SlotCandidate
	// Busy are the candidates' active appointments at any location, each
	// blocking [start, end + its service's buffer). Sorted by user, then
	// From, as the calendar lists them, they are used as they are;
	// otherwise a sorted copy is.
	Busy []BusySpan
}

// BusySpan is [From, Until) in Unix seconds during which User is taken: a
// non-cancelled appointment at any location plus its service's buffer.
type BusySpan struct {
	User        UUID
	From, Until int64
}

// Busy is the span a blocks in whole seconds: a fraction of a second past
// its end still blocks that second.
func (a AppointmentSpan) Busy() BusySpan {
	until := a.BlockedUntil.Unix()
	if a.BlockedUntil.Nanosecond() > 0 {
		until++
	}
	return BusySpan{User: a.User, From: a.Start.Unix(), Until: until}
}

// compareBusy orders spans by user, then start.
func compareBusy(a, b BusySpan) int {
	return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.From, b.From))
}

// SlotCandidate is a user who offers the service at the location.
type SlotCandidate struct {
	User            UUID
	DurationMinutes int
	WorkingHours    []WorkingTime
	Absences        []Absence
}

// Slot is one bookable start.
type Slot struct {
	Start, End              time.Time
	User, Location, Service UUID
}

// Slots computes the free slots of q, sorted by start, then user. Working
// hours are wall-clock times of each local date, so a daylight-saving day
// yields the same local starts as any other: a start whose local time does
// not exist that day yields no slot, an ambiguous one is taken once.
func Slots(q SlotQuery) []Slot {
	var out []Slot
	withFreeStarts(q, func(candidates []SlotCandidate, found []freeStart) {
		out = make([]Slot, len(found))
		for i, f := range found {
			c := candidates[f.candidate]
			at := time.Unix(f.at, 0).In(q.Zone)
			out[i] = Slot{Start: at, End: at.Add(time.Duration(c.DurationMinutes) * time.Minute), User: c.User, Location: q.Location, Service: q.Service}
		}
	})
	return out
}

// AppendSlotsJSON appends the answer of booking/slots for q to b:
// {"time_zone":…,"data":[{"start","end","user_id","location_id","service_id"}]},
// times with the zone's offset, rendered straight from the computation.
func AppendSlotsJSON(b []byte, q SlotQuery) []byte {
	withFreeStarts(q, func(candidates []SlotCandidate, found []freeStart) {
		b = slices.Grow(b, 64+len(found)*240)
		b = strconv.AppendQuote(append(b, `{"time_zone":`...), q.Zone.String())
		b = append(b, `,"data":[`...)
		for i, f := range found {
			if i > 0 {
				b = append(b, ',')
			}
			c := candidates[f.candidate]
			at := time.Unix(f.at, 0).In(q.Zone)
			b = at.AppendFormat(append(b, `{"start":"`...), time.RFC3339)
			b = at.Add(time.Duration(c.DurationMinutes)*time.Minute).AppendFormat(append(b, `","end":"`...), time.RFC3339)
			b = append(append(append(b, `","user_id":"`...), c.User...), `","location_id":"`...)
			b = append(append(append(b, q.Location...), `","service_id":"`...), q.Service...)
			b = append(b, `"}`...)
		}
		b = append(b, "]}"...)
	})
	return b
}

// freeStart is a free slot as computed: its Unix second and the index of its
// candidate. Pointer-free, so sorting moves 16 bytes and no write barrier.
type freeStart struct {
	at        int64
	candidate int
}

// startsPool keeps the free starts of earlier computations: a 31-day window
// has thousands, and a server computes many windows a second.
var startsPool = sync.Pool{New: func() any { return new([]freeStart) }}

// withFreeStarts computes the free starts of q, sorted by start, then user,
// and the candidates (in user order) their indexes refer to, and hands them
// to use; they are reused once use returns.
func withFreeStarts(q SlotQuery, use func(candidates []SlotCandidate, found []freeStart)) {
	p := startsPool.Get().(*[]freeStart)
	candidates, found := freeStarts(q, (*p)[:0])
	use(candidates, found)
	*p = found
	startsPool.Put(p)
}

// freeStarts appends the free starts of q to found.
func freeStarts(q SlotQuery, found []freeStart) ([]SlotCandidate, []freeStart) {
	earliest := q.Now.Add(time.Duration(q.NoticeMinutes) * time.Minute).Unix()
	busy := q.Busy
	if !slices.IsSortedFunc(busy, compareBusy) {
		busy = slices.SortedFunc(slices.Values(busy), compareBusy)
	}
	// Candidates in user order, so that the order of their indexes is that of their ids.
	candidates := slices.Clone(q.Candidates)
	slices.SortFunc(candidates, func(a, b SlotCandidate) int { return cmp.Compare(a.User, b.User) })
	taken := make([][]BusySpan, len(candidates)) // each candidate's spans, the same every day
	for i, c := range candidates {
		taken[i] = spansOf(busy, c.User)
	}
	step := max(q.StepMinutes, 1)
	// Day by day: every slot of a local date starts before those of the
	// next, so only each day's slots need sorting.
	for day := q.From.Time(); !day.After(q.To.Time()); day = day.AddDate(0, 0, 1) {
		weekday := weekdayNames[day.Weekday()]
		first := len(found)
		wall := wallClockOf(day, q.Zone)
		for i, c := range candidates {
			blocks := int64(c.DurationMinutes+q.BufferMinutes) * 60
			for _, w := range c.WorkingHours {
				if w.LocationID != q.Location || w.Weekday != weekday {
					continue
				}
				from, to := w.From.Minutes(), w.To.Minutes()
				endOfHours, _ := wall(to)
				end := endOfHours.Unix()
				for m := from; m < to; m += step {
					wt, exists := wall(m)
					t := wt.Unix()
					if !exists || t < earliest {
						continue
					}
					if t+blocks > end {
						break
					}
					if overlapsAbsence(c.Absences, wt, wt.Add(time.Duration(blocks)*time.Second)) || overlapsBusy(taken[i], t, t+blocks) {
						continue
					}
					found = append(found, freeStart{at: t, candidate: i})
				}
			}
		}
		slices.SortFunc(found[first:], func(a, b freeStart) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.candidate, b.candidate))
		})
	}
	return candidates, found
}

var weekdayNames = [...]string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// wallClockOf maps minutes past midnight of the civil date day to instants
// in zone, and tells whether that local time exists (false in a gap, where
// the instant is moved on by the gap, as time.Date does). A day without a
// change of offset is plain addition; only a changeover day asks the zone
// for every time.
func wallClockOf(day time.Time, zone *time.Location) func(minutes int) (time.Time, bool) {
	exact := func(minutes int) (time.Time, bool) {
		t := time.Date(day.Year(), day.Month(), day.Day(), 0, minutes, 0, 0, zone)
		h, m, _ := t.Clock()
		return t, (t.Day() == day.Day() || minutes >= 24*60) && h*60+m == minutes%(24*60)
	}
	midnight, ok := exact(0)
	next, _ := exact(24 * 60)
	_, before := midnight.Zone()
	_, after := next.Zone()
	if !ok || before != after || next.Sub(midnight) != 24*time.Hour {
		return exact
	}
	return func(minutes int) (time.Time, bool) { return midnight.Add(time.Duration(minutes) * time.Minute), true }
}

// longestSpan bounds how far before a slot an overlapping appointment may start.
const longestSpan = MaxAppointmentLength + 2*time.Hour + time.Minute

// spansOf is the run of user's spans in busy, sorted by compareBusy.
func spansOf(busy []BusySpan, user UUID) []BusySpan {
	lo, _ := slices.BinarySearchFunc(busy, user, func(s BusySpan, u UUID) int { return cmp.Compare(s.User, u) })
	hi := lo
	for hi < len(busy) && busy[hi].User == user {
		hi++
	}
	return busy[lo:hi]
}

// overlapsBusy reports whether [start, end) meets one of spans, one user's
// spans sorted by start.
func overlapsBusy(spans []BusySpan, start, end int64) bool {
	longest := int64(longestSpan / time.Second)
	i, _ := slices.BinarySearchFunc(spans, start-longest, func(s BusySpan, t int64) int { return cmp.Compare(s.From, t+1) })
	for ; i < len(spans) && spans[i].From < end; i++ {
		if spans[i].Until > start {
			return true
		}
	}
	return false
}

func overlapsAbsence(absences []Absence, start, end time.Time) bool {
	for _, a := range absences {
		if a.Start.Before(end) && a.End.After(start) {
			return true
		}
	}
	return false
}

// Minutes is the time of day as minutes past midnight; 24:00 is 1440.
func (t TimeOfDay) Minutes() int {
	if len(t) != 5 {
		return 0
	}
	h, _ := strconv.Atoi(string(t[:2]))
	m, _ := strconv.Atoi(string(t[3:]))
	return h*60 + m
}

// SlotWindow validates the from and to query parameters of booking/slots:
// local dates, from ≤ to, at most MaxSlotDays both counted.
func SlotWindow(from, to string) (Date, Date, error) {
	var errs FieldErrors
	f, ferr := ParseDate(from)
	t, terr := ParseDate(to)
	fok, tok := ferr == nil, terr == nil
	if !fok {
		errs.Add("from", "must be a date YYYY-MM-DD from 0001-01-01 to 9999-12-31")
	}
	if !tok {
		errs.Add("to", "must be a date YYYY-MM-DD from 0001-01-01 to 9999-12-31")
	}
	if fok && tok {
		switch days := int(t.Sub(f).Hours() / 24); {
		case days < 0:
			errs.Add("to", "must not be before from")
		case days >= MaxSlotDays:
			errs.Add("to", "must be at most "+strconv.Itoa(MaxSlotDays)+" days from from, both counted")
		}
	}
	return Date(from), Date(to), errs.Err()
}

// Duration is how long an appointment of service with user at location
// lasts: the live, active assignment's length (one naming the location
// first, then one for every location), else the service's.
func (c BookingCatalog) Duration(user, service, location UUID) int {
	general := 0
	for _, a := range c.Assignments {
		if a.UserID != user || a.ServiceID != service || !on(a.Active) || a.DurationMinutes == nil {
			continue
		}
		switch {
		case a.LocationID != nil && *a.LocationID == location:
			return *a.DurationMinutes
		case a.LocationID == nil:
			general = *a.DurationMinutes
		}
	}
	if general > 0 {
		return general
	}
	return c.Services[service].DurationMinutes
}
