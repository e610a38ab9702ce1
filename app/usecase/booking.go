package usecase

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/slots"
	"github.com/praxis-health/praxis/ports"
)

// Booking serves the booking widget: what may be booked, the free slots,
// and the booking itself, which re-checks its slot inside the inserting
// transaction so that one slot is never booked twice.
type Booking struct {
	recordWriter
	calendar ports.Calendar
	catalogs *catalogCache
}

var _ ports.Booking = (*Booking)(nil)

// NewBooking wires the booking use case.
func NewBooking(store ports.RecordStore, keys ports.IdempotencyStore, tx ports.Transactor, companies ports.CompanyRepository,
	audits *Auditor, calendar ports.Calendar) *Booking {
	return &Booking{recordWriter: newRecordWriter(store, keys, tx, companies, audits), calendar: calendar, catalogs: &catalogCache{byCompany: map[domain.CompanyID]cachedCatalog{}}}
}

// maxCachedCatalogs bounds the catalogue cache; past it, it starts empty again.
const maxCachedCatalogs = 1000

// catalogCache keeps each company's decoded booking catalogue with the
// catalogue version it was read at or after. Every write to a catalogue
// section moves the version in its own transaction, so an entry whose
// version is the company's current one is never older than the database.
type catalogCache struct {
	mu        sync.Mutex
	byCompany map[domain.CompanyID]cachedCatalog
}

type cachedCatalog struct {
	version int64
	cat     domain.BookingCatalog
	raw     map[string]map[domain.UUID][]byte
}

// catalog returns the company's catalogue, read again only when its version
// moved. The maps returned are shared: callers only read them.
func (b *Booking) catalog(ctx context.Context, company domain.Company) (domain.BookingCatalog, map[string]map[domain.UUID][]byte, error) {
	c := b.catalogs
	c.mu.Lock()
	e, ok := c.byCompany[company.ID]
	c.mu.Unlock()
	if ok && e.version == company.CatalogVersion {
		return e.cat, e.raw, nil
	}
	cat, raw, err := catalog(ctx, b.store, company.ID) // read after the version: at least that new
	if err != nil {
		return cat, raw, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byCompany) >= maxCachedCatalogs {
		clear(c.byCompany)
	}
	if e, ok := c.byCompany[company.ID]; !ok || e.version < company.CatalogVersion {
		c.byCompany[company.ID] = cachedCatalog{version: company.CatalogVersion, cat: cat, raw: raw}
	}
	return cat, raw, nil
}

// catalog reads the company's master data: users, locations, services and assignments.
func catalog(ctx context.Context, store ports.RecordStore, company domain.CompanyID) (domain.BookingCatalog, map[string]map[domain.UUID][]byte, error) {
	c := domain.BookingCatalog{Users: map[domain.UUID]domain.User{}, Locations: map[domain.UUID]domain.Location{},
		Services: map[domain.UUID]domain.Service{}}
	raw := map[string]map[domain.UUID][]byte{}
	sections := domain.CatalogSections
	kinds := make([]*domain.Kind, len(sections))
	for i, s := range sections {
		kinds[i] = domain.KindOf(s)
	}
	all, err := store.All(ctx, company, kinds...)
	if err != nil {
		return c, nil, err
	}
	for i, section := range sections {
		objs := all[i]
		raw[section] = make(map[domain.UUID][]byte, len(objs))
		for _, o := range objs {
			id := domain.UUID(o.ID)
			raw[section][id] = o.Payload
			var err error
			switch section {
			case "users":
				var u domain.User
				err = json.Unmarshal(o.Payload, &u)
				c.Users[id] = u
			case "locations":
				var l domain.Location
				err = json.Unmarshal(o.Payload, &l)
				c.Locations[id] = l
			case "services":
				var s domain.Service
				err = json.Unmarshal(o.Payload, &s)
				c.Services[id] = s
			default:
				var a domain.ServiceAssignment
				err = json.Unmarshal(o.Payload, &a)
				c.Assignments = append(c.Assignments, a)
			}
			if err != nil {
				return c, nil, err
			}
		}
	}
	return c, raw, nil
}

// Offered lists the bookable users, locations or services, one page in id order.
func (b *Booking) Offered(ctx context.Context, grant domain.Grant, section string, q domain.BookingQuery) (ports.OfferedPage, error) {
	company, err := b.companies.Get(ctx, grant.CompanyID)
	if err != nil {
		return ports.OfferedPage{}, err
	}
	cat, raw, err := b.catalog(ctx, company)
	if err != nil {
		return ports.OfferedPage{}, err
	}
	ids := domain.Offered(cat.Offers(), section, q)
	start, _ := slices.BinarySearch(ids, domain.UUID(q.After))
	if q.After != "" && start < len(ids) && ids[start] == domain.UUID(q.After) {
		start++
	}
	ids = ids[start:]
	more := len(ids) > q.Limit
	if more {
		ids = ids[:q.Limit]
	}
	out := ports.OfferedPage{Items: make([]domain.Offering, len(ids)), Next: domain.Cursor{ID: q.After}, HasMore: more}
	for i, id := range ids {
		if out.Items[i], err = domain.BookingView(section, id, raw[section][id]); err != nil {
			return ports.OfferedPage{}, err
		}
		out.Next.ID = string(id)
	}
	return out, nil
}

// Slots gathers what the free slots of q depend on and hands it to answer,
// which computes them (domain.Slots) or renders them as it computes them
// (slots.AppendJSON); the appointments it holds are reused once
// answer returns.
func (b *Booking) Slots(ctx context.Context, grant domain.Grant, q domain.SlotRequest, answer func(slots.Query) error) error {
	company, rc, err := b.company(ctx, grant.CompanyID)
	if err != nil {
		return err
	}
	cat, _, err := b.catalog(ctx, company)
	if err != nil {
		return err
	}
	buf := busyBuffers.Get().(*[]slots.Busy)
	defer busyBuffers.Put(buf)
	sq, err := b.slotQuery(ctx, grant.CompanyID, cat, q, rc, company.BookingNoticeMinutes, (*buf)[:0])
	*buf = sq.Busy
	if err != nil {
		return err
	}
	return answer(sq)
}

// slotQuery gathers what the slots of q depend on: the offers of the
// service at the location (422 naming the parameter that offers none), the
// users' working hours and absences, and their appointments around the
// window, appended to dst.
func (b *Booking) slotQuery(ctx context.Context, company domain.CompanyID, cat domain.BookingCatalog, q domain.SlotRequest,
	rc domain.RuleContext, notice int, dst []slots.Busy) (slots.Query, error) {
	matched, err := matchOffers(cat.Offers(), q.Service, q.Location, q.User)
	if err != nil {
		return slots.Query{}, err
	}
	svc := cat.Services[q.Service]
	sq := slots.Query{From: q.From, To: q.To, Zone: rc.Zone, Now: rc.Now, NoticeMinutes: notice, Service: q.Service,
		Location: q.Location, StepMinutes: deref(svc.SlotStepMinutes, 15), BufferMinutes: deref(svc.BufferAfterMinutes, 0)}
	users := make([]domain.UUID, 0, len(matched))
	for _, o := range matched {
		u := cat.Users[o.User]
		sq.Candidates = append(sq.Candidates, slots.Candidate{User: o.User, DurationMinutes: o.DurationMinutes,
			WorkingHours: u.WorkingHours, Absences: u.Absences})
		users = append(users, o.User)
	}
	from, until := q.From.Time().AddDate(0, 0, -2), q.To.Time().AddDate(0, 0, 3) // wider than any zone's offset and any span
	busy, err := b.calendar.Busy(ctx, company, users, from, until, dst)
	sq.Busy = busy
	return sq, err
}

// busyBuffers hold the appointment spans of slot queries while they run:
// hundreds for a month of a busy practice, at every widget's request.
var busyBuffers = sync.Pool{New: func() any { return new([]slots.Busy) }}

func deref(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// Book books the slot the body asks for, with a new customer if it brings
// one, all in one transaction with its Idempotency-Key: the slot is checked
// again inside it, after a lock on the user's calendar, and on PostgreSQL
// the database refuses an overlapping online booking besides.
func (b *Booking) Book(ctx context.Context, grant domain.Grant, body domain.Document, key *ports.IdempotencyKey) (ports.WrittenObject, error) {
	company, rc, err := b.company(ctx, grant.CompanyID)
	if err != nil {
		return ports.WrittenObject{}, err
	}
	req, err := domain.BookingKind.Decode(body, rc)
	if err != nil {
		return ports.WrittenObject{}, err
	}
	booking := domain.Booking(req)
	appointments := domain.AppointmentsKind()
	return idempotently(ctx, &b.writeOnce, grant, key, rc.Now, keptObjects(appointments), func(ctx context.Context) (ports.WrittenObject, error) {
		if err := b.checkRefs(ctx, grant.CompanyID, req); err != nil {
			return ports.WrittenObject{}, err
		}
		offer, err := b.freeSlot(ctx, company, booking, rc)
		if err != nil {
			return ports.WrittenObject{}, err
		}
		customer, err := b.customerOf(ctx, grant.CompanyID, booking, rc)
		if err != nil {
			return ports.WrittenObject{}, err
		}
		obj, err := booking.Appointment(customer, offer, rc)
		if err != nil {
			return ports.WrittenObject{}, err
		}
		stored, err := b.store.Insert(ctx, grant.CompanyID, appointments,
			ports.StoredObject{ID: appointments.NewID(), Customer: &customer, Payload: obj.JSON, CreatedAt: rc.Now})
		if err != nil {
			return ports.WrittenObject{}, err
		}
		audit.Touch(ctx, customer)
		audit.Created(ctx, stored.ID)
		return answer(domain.OutcomeCreated, appointments.Slug+"/"+stored.ID, stored), nil
	})

}

// freeSlot checks, inside the booking's transaction and after a lock on
// the user's calendar, that the slot asked for is still free, and answers
// the offer it is booked under.
func (b *Booking) freeSlot(ctx context.Context, company domain.Company, booking *domain.BookingRequest, rc domain.RuleContext) (domain.Offer, error) {
	if err := b.calendar.Lock(ctx, company.ID, booking.UserID); err != nil {
		return domain.Offer{}, err
	}
	cat, _, err := catalog(ctx, b.store, company.ID)
	if err != nil {
		return domain.Offer{}, err
	}
	offers, err := matchOffers(cat.Offers(), booking.ServiceID, booking.LocationID, &booking.UserID)
	if err != nil {
		return domain.Offer{}, err
	}
	offer := offers[0]
	day := domain.DateOf(booking.Start.Time, rc.Zone)
	sq, err := b.slotQuery(ctx, company.ID, cat,
		domain.SlotRequest{Service: offer.Service, Location: offer.Location, User: &offer.User, From: day, To: day},
		rc, company.BookingNoticeMinutes, nil)
	if err != nil {
		return domain.Offer{}, err
	}
	if !slices.ContainsFunc(slots.Free(sq), func(s slots.Slot) bool { return s.Start.Equal(booking.Start.Time) }) {
		return domain.Offer{}, domain.ErrSlotUnavailable
	}
	return offer, nil
}

// matchOffers keeps the offers of service at location (and of user, when
// given); none is a 422 on the first of them that offers nothing.
func matchOffers(offers []domain.Offer, service, location domain.UUID, user *domain.UUID) ([]domain.Offer, error) {
	var matched []domain.Offer
	field := "service_id"
	for _, o := range offers {
		if o.Service != service {
			continue
		}
		field = "location_id"
		if o.Location != location {
			continue
		}
		field = "user_id"
		if user == nil || o.User == *user {
			matched = append(matched, o)
		}
	}
	if len(matched) == 0 {
		return nil, domain.FieldErrors{{Field: field, Message: "names nothing bookable online with the other parameters"}}.Err()
	}
	return matched, nil
}

// customerOf is the booking's existing customer, or the new one it brings,
// created here in the booking's transaction.
func (b *Booking) customerOf(ctx context.Context, company domain.CompanyID, booking *domain.BookingRequest, rc domain.RuleContext) (domain.CustomerID, error) {
	if booking.CustomerID != nil {
		return *booking.CustomerID, nil
	}
	obj, err := booking.NewCustomer(rc)
	if err != nil {
		return 0, err
	}
	customers := domain.KindOf("customers")
	stored, err := b.store.Insert(ctx, company, customers, ports.StoredObject{ID: customers.NewID(), Payload: obj.JSON, CreatedAt: rc.Now})
	if err != nil {
		return 0, err
	}
	id, ok := domain.ParseCustomerPathID(stored.ID)
	if !ok {
		return 0, domain.ErrInvalid
	}
	return id, nil
}
