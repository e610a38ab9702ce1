// Package slots computes the free starts of booking/slots: a pure function
// of the candidates' working hours, absences and busy spans in a window of
// local dates (docs/contract.md, booking), kept apart from the catalogue
// that says who offers what (domain.BookingCatalog).
package slots

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// MaxDays is the longest window booking/slots answers, both dates counted.
const MaxDays = 31

// Query is everything the free slots of one service at one location
// depend on; Free is a pure function of it.
type Query struct {
	From, To      domain.Date
	Zone          *time.Location
	Now           time.Time
	NoticeMinutes int
	Service       domain.UUID
	Location      domain.UUID
	StepMinutes   int
	BufferMinutes int
	Candidates    []Candidate
	// Busy are the candidates' active appointments at any location, each
	// blocking [start, end + its service's buffer). Sorted by user, then
	// From, as the calendar lists them, they are used as they are;
	// otherwise a sorted copy is.
	Busy []Busy
}

// Busy is [From, Until) in Unix seconds during which User is taken: a
// non-cancelled appointment at any location plus its service's buffer.
type Busy struct {
	User        domain.UUID
	From, Until int64
}

// BusyOf is the span a blocks in whole seconds: a fraction of a second past
// its end still blocks that second.
func BusyOf(a domain.AppointmentSpan) Busy {
	until := a.BlockedUntil.Unix()
	if a.BlockedUntil.Nanosecond() > 0 {
		until++
	}
	return Busy{User: a.User, From: a.Start.Unix(), Until: until}
}

// compareBusy orders spans by user, then start.
func compareBusy(a, b Busy) int {
	return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.From, b.From))
}

// Candidate is a user who offers the service at the location.
type Candidate struct {
	User            domain.UUID
	DurationMinutes int
	WorkingHours    []domain.WorkingTime
	Absences        []domain.Absence
}

// Slot is one bookable start.
type Slot struct {
	Start, End              time.Time
	User, Location, Service domain.UUID
}

// Free computes the free slots of q, sorted by start, then user. Working
// hours are wall-clock times of each local date, so a daylight-saving day
// yields the same local starts as any other: a start whose local time does
// not exist that day yields no slot, an ambiguous one is taken once.
func Free(q Query) []Slot {
	var out []Slot
	withFreeStarts(q, func(candidates []Candidate, found []freeStart) {
		out = make([]Slot, len(found))
		for i, f := range found {
			c := candidates[f.candidate]
			at := time.Unix(f.at, 0).In(q.Zone)
			out[i] = Slot{Start: at, End: at.Add(time.Duration(c.DurationMinutes) * time.Minute), User: c.User, Location: q.Location, Service: q.Service}
		}
	})
	return out
}

// AppendJSON appends the answer of booking/slots for q to b:
// {"time_zone":…,"data":[{"start","end","user_id","location_id","service_id"}]},
// times with the zone's offset, rendered straight from the computation.
func AppendJSON(b []byte, q Query) []byte {
	withFreeStarts(q, func(candidates []Candidate, found []freeStart) {
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
func withFreeStarts(q Query, use func(candidates []Candidate, found []freeStart)) {
	p := startsPool.Get().(*[]freeStart)
	candidates, found := freeStarts(q, (*p)[:0])
	use(candidates, found)
	*p = found
	startsPool.Put(p)
}

// freeStarts appends the free starts of q to found.
func freeStarts(q Query, found []freeStart) ([]Candidate, []freeStart) {
	earliest := q.Now.Add(time.Duration(q.NoticeMinutes) * time.Minute).Unix()
	busy := q.Busy
	if !slices.IsSortedFunc(busy, compareBusy) {
		busy = slices.SortedFunc(slices.Values(busy), compareBusy)
	}
	// Candidates in user order, so that the order of their indexes is that of their ids.
	candidates := slices.Clone(q.Candidates)
	slices.SortFunc(candidates, func(a, b Candidate) int { return cmp.Compare(a.User, b.User) })
	taken := make([][]Busy, len(candidates)) // each candidate's spans, the same every day
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
const longestSpan = domain.MaxAppointmentLength + 2*time.Hour + time.Minute

// spansOf is the run of user's spans in busy, sorted by compareBusy.
func spansOf(busy []Busy, user domain.UUID) []Busy {
	lo, _ := slices.BinarySearchFunc(busy, user, func(s Busy, u domain.UUID) int { return cmp.Compare(s.User, u) })
	hi := lo
	for hi < len(busy) && busy[hi].User == user {
		hi++
	}
	return busy[lo:hi]
}

// overlapsBusy reports whether [start, end) meets one of spans, one user's
// spans sorted by start.
func overlapsBusy(spans []Busy, start, end int64) bool {
	longest := int64(longestSpan / time.Second)
	i, _ := slices.BinarySearchFunc(spans, start-longest, func(s Busy, t int64) int { return cmp.Compare(s.From, t+1) })
	for ; i < len(spans) && spans[i].From < end; i++ {
		if spans[i].Until > start {
			return true
		}
	}
	return false
}

func overlapsAbsence(absences []domain.Absence, start, end time.Time) bool {
	for _, a := range absences {
		if a.Start.Before(end) && a.End.After(start) {
			return true
		}
	}
	return false
}

// Window validates the from and to query parameters of booking/slots:
// local dates, from ≤ to, at most MaxDays both counted.
func Window(from, to string) (domain.Date, domain.Date, error) {
	var errs domain.FieldErrors
	f, ferr := domain.ParseDate(from)
	t, terr := domain.ParseDate(to)
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
		case days >= MaxDays:
			errs.Add("to", "must be at most "+strconv.Itoa(MaxDays)+" days from from, both counted")
		}
	}
	return domain.Date(from), domain.Date(to), errs.Err()
}
