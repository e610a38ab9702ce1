package fhir

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/slots"
)

// Slots are computed, not stored: the free starts the booking API offers
// for a Schedule (a service assignment: who offers which service, and
// where) in a window of dates. A Slot's id is its schedule's, its start
// and its location's, so the same free start has the same id in every
// search. Searches page by window: the next link is the window after.

// slotWindowDays is a search's window when start names no end.
const slotWindowDays = 7

// slotParams are the Slot search's parameters.
var slotParams = []searchParam{
	{name: "schedule", kind: "reference", doc: "Schedule/{id}: required"},
	{name: "start", kind: "date", doc: "the window: ge/gt and lt/le a date (default: the practice's today and the six days after; at most 31 days)"},
	{name: "status", kind: "token", doc: "free (the only status a computed slot has)"},
}

// slotID is a slot's id: schedule, start (Unix seconds) and the last
// eight hex digits of its location (56 characters).
func slotID(schedule string, start time.Time, location string) string {
	return schedule + "." + strconv.FormatInt(start.Unix(), 10) + "." + location[len(location)-8:]
}

// parseSlotID reads a slot's schedule and start from its id.
func parseSlotID(id string) (schedule string, start time.Time, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 3 || !domain.ValidObjectID(parts[0]) || len(parts[2]) != 8 {
		return "", time.Time{}, false
	}
	unix, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || unix < 0 {
		return "", time.Time{}, false
	}
	return parts[0], time.Unix(unix, 0).UTC(), true
}

// slotWindow reads the start parameters as a window of dates, from and to both counted.
func slotWindow(values []string, today time.Time) (from, to time.Time, err error) {
	from, to = today, time.Time{}
	bad := invalidParam("start", "start takes dates (YYYY-MM-DD) with ge, gt, lt, le or eq: the window of the slots")
	for _, v := range values {
		prefix, date := "eq", v
		if len(v) > 2 && v[0] >= 'a' && v[0] <= 'z' {
			prefix, date = v[:2], v[2:]
		}
		d, perr := time.Parse(time.DateOnly, date)
		if perr != nil {
			return from, to, bad
		}
		switch prefix {
		case "ge":
			from = d
		case "gt":
			from = d.AddDate(0, 0, 1)
		case "le":
			to = d
		case "lt":
			to = d.AddDate(0, 0, -1)
		case "eq":
			from, to = d, d
		default:
			return from, to, bad
		}
	}
	if to.IsZero() {
		to = from.AddDate(0, 0, slotWindowDays-1)
	}
	if days := int(to.Sub(from).Hours() / 24); days < 0 || days >= slots.MaxDays {
		return from, to, invalidParam("start", "the window of slots must end after it starts and hold at most "+strconv.Itoa(slots.MaxDays)+" days")
	}
	return from, to, nil
}

// slotSearch answers the free slots of a schedule in a window, in start
// order, with a next link to the window after.
func (s *Server) slotSearch(c *fiber.Ctx) error {
	grant := httpkit.GrantOf(c)
	var schedule string
	var starts []string
	var bad error
	c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) {
		switch name, value := string(k), string(v); {
		case bad != nil:
		case name == "schedule" && schedule == "":
			id, ok := referenceID("Schedule", value)
			if !ok {
				bad = invalidParam(name, "schedule must be Schedule/{id}")
			}
			schedule = id
		case name == "start":
			starts = append(starts, value)
		case name == "status" && value == "free":
		case name == "_count": // a window is one page
		default:
			bad = invalidParam(name, strconv.Quote(name)+" is not a Slot search parameter (schedule, start, status=free)")
		}
	})
	if bad != nil {
		return bad
	}
	if schedule == "" {
		return invalidParam("schedule", "a Slot search names its Schedule: schedule=Schedule/{id}")
	}
	today, err := s.today(c, grant)
	if err != nil {
		return err
	}
	from, to, err := slotWindow(starts, today)
	if err != nil {
		return err
	}
	slots, err := s.freeSlots(c, grant, schedule, from, to)
	if err != nil {
		return err
	}
	self := s.base(c) + "/Slot"
	entries := make([]any, 0, len(slots))
	for _, sl := range slots {
		entries = append(entries, entry(self, sl, "match"))
	}
	days := int(to.Sub(from).Hours()/24) + 1
	next := self + "?schedule=Schedule/" + schedule + "&start=ge" + to.AddDate(0, 0, 1).Format(time.DateOnly) +
		"&start=le" + to.AddDate(0, 0, days).Format(time.DateOnly)
	b := bundle(c, self, entries, "")
	b["link"] = append(b["link"].([]any), map[string]any{"relation": "next", "url": next})
	return send(c, b)
}

// today is the practice's date today (its zone's), as a date at UTC
// midnight like the window's dates.
func (s *Server) today(c *fiber.Ctx, grant domain.Grant) (time.Time, error) {
	company, err := s.profiles.Profile(c.UserContext(), grant.CompanyID)
	if err != nil {
		return time.Time{}, err
	}
	zone, err := time.LoadLocation(company.TimeZone)
	if err != nil {
		zone, _ = time.LoadLocation(domain.DefaultTimeZone)
	}
	y, m, d := time.Now().In(zone).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
}

// slotRead answers one slot, if it is still free.
func (s *Server) slotRead(c *fiber.Ctx, id string) error {
	schedule, start, ok := parseSlotID(id)
	if !ok {
		return domain.ErrNotFound
	}
	day := start.Truncate(24 * time.Hour)
	// The schedule's local dates around the start's UTC date hold it.
	slots, err := s.freeSlots(c, httpkit.GrantOf(c), schedule, day.AddDate(0, 0, -1), day.AddDate(0, 0, 1))
	if err != nil {
		return err
	}
	for _, sl := range slots {
		if sl.ID == id {
			return send(c, sl)
		}
	}
	return &outcomeError{status: fiber.StatusNotFound, code: "not-found", reason: "not-found", text: "no such free slot: it may have been booked"}
}

// freeSlots computes the free slots of a schedule between two dates.
func (s *Server) freeSlots(c *fiber.Ctx, grant domain.Grant, schedule string, from, to time.Time) ([]slotResource, error) {
	if err := grant.Require(domain.ReadScope("booking")); err != nil {
		return nil, err
	}
	rt := resourceByName("Schedule")
	it, err := s.views.of(rt).get(c.UserContext(), grant, schedule)
	if err != nil {
		return nil, err
	}
	a := it.value.(*domain.ServiceAssignment)
	user, service := a.UserID, a.ServiceID
	locations := []domain.UUID{}
	if a.LocationID != nil {
		locations = append(locations, *a.LocationID)
	} else {
		// Offered at every location of the user's: the ones that offer it.
		page, err := s.booking.Offered(c.UserContext(), grant, "locations", domain.BookingQuery{Limit: 100, User: &user, Service: &service})
		if err != nil {
			return nil, err
		}
		for _, l := range page.Items {
			locations = append(locations, l.ID)
		}
	}
	type free struct {
		at   time.Time
		slot slotResource
	}
	var found []free
	for _, loc := range locations {
		var open []slots.Slot
		err := s.booking.Slots(c.UserContext(), grant, domain.SlotRequest{Service: service, Location: loc, User: &user,
			From: domain.Date(from.Format(time.DateOnly)), To: domain.Date(to.Format(time.DateOnly))},
			func(sq slots.Query) error { open = slots.Free(sq); return nil })
		if errors.Is(err, domain.ErrInvalid) {
			continue // the assignment offers nothing there (inactive, or not bookable online): no free slot
		} else if err != nil {
			return nil, err
		}
		for _, f := range open {
			found = append(found, free{at: f.Start, slot: slotResource{head: head{ResourceType: "Slot", ID: slotID(schedule, f.Start, string(loc))},
				Schedule: reference{Reference: "Schedule/" + schedule}, Status: "free", Start: f.Start.Format(time.RFC3339), End: f.End.Format(time.RFC3339)}})
		}
	}
	// In time order; at one start, in id order (the locations').
	slices.SortFunc(found, func(x, y free) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return strings.Compare(x.slot.ID, y.slot.ID)
	})
	out := make([]slotResource, len(found))
	for i, f := range found {
		out[i] = f.slot
	}
	return out, nil
}
