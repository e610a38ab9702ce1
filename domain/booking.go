package domain

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// BookingRequest is the body of POST booking/appointments (docs/sections.md §1).
type BookingRequest struct {
	ServiceID  UUID             `json:"service_id" jsonschema:"required"`
	UserID     UUID             `json:"user_id" jsonschema:"required"`
	LocationID UUID             `json:"location_id" jsonschema:"required"`
	Start      DateTime         `json:"start" jsonschema:"required"`
	CustomerID *CustomerID      `json:"customer_id"`
	Customer   *BookingCustomer `json:"customer"`
	Note       *string          `json:"note" jsonschema:"maxLength=2000,format=text"`
}

// BookingCustomer is a new patient booking online: created with the
// appointment, never matched against existing customers.
type BookingCustomer struct {
	FirstName string  `json:"first_name" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
	LastName  string  `json:"last_name" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
	BirthDate Date    `json:"birth_date" jsonschema:"required"`
	Email     *string `json:"email" jsonschema:"format=email,maxLength=254"`
	Phone     *string `json:"phone" jsonschema:"format=phone"`
}

func (*BookingRequest) normalize(RuleContext) {}

func (b *BookingRequest) check(rc RuleContext, errs *FieldErrors) {
	switch {
	case b.CustomerID == nil && b.Customer == nil:
		errs.Add("customer_id", "or customer is required")
	case b.CustomerID != nil && b.Customer != nil:
		errs.Add("customer", "must not be given together with customer_id")
	case b.Customer != nil:
		if b.Customer.Email == nil && b.Customer.Phone == nil {
			errs.Add("customer.email", "or customer.phone is required")
		}
		if b.Customer.BirthDate < "1900-01-01" || b.Customer.BirthDate.After(rc.Today()) {
			errs.Add("customer.birth_date", "must lie between 1900-01-01 and today")
		}
	}
}

func (b *BookingRequest) refs() []Ref {
	if b.CustomerID == nil {
		return nil
	}
	return []Ref{customerRef(*b.CustomerID)}
}

func (b *BookingRequest) customer() *CustomerID { return b.CustomerID }

// BookingKind validates booking bodies like every other body.
var BookingKind = newKind[BookingRequest]("booking/appointments", 0, exampleBooking)

// Booking is a decoded booking request.
func Booking(o Object) *BookingRequest { return o.payload.(*BookingRequest) }

// NewCustomer is the customer a booking's new patient becomes, judged by the
// customers' own rules; its fields are named as the booking body names them.
func (b *BookingRequest) NewCustomer(rc RuleContext) (Object, error) {
	c := b.Customer
	birth := c.BirthDate
	obj, err := customersKind.validate(&CustomerData{FirstName: c.FirstName, LastName: c.LastName, BirthDate: &birth, Email: c.Email, Phone: c.Phone}, rc)
	return obj, PrefixFields(err, "customer")
}

// Appointment is the appointment a booking of offer o becomes: booked
// online, for customer, as long as the offer's service takes.
func (b *BookingRequest) Appointment(customer CustomerID, o Offer, rc RuleContext) (Object, error) {
	service, source := b.ServiceID, BookedOnline
	end := DateTime{b.Start.Add(time.Duration(o.DurationMinutes) * time.Minute)}
	return AppointmentsKind().validate(&Appointment{
		CustomerID: &customer, UserID: b.UserID, LocationID: b.LocationID, ServiceID: &service,
		Start: b.Start, End: &end, Note: b.Note, Source: &source,
	}, rc)
}

// PrefixFields names field errors of a nested object by their body path.
func PrefixFields(err error, prefix string) error {
	fe, ok := AsFieldErrors(err)
	if !ok {
		return err
	}
	out := make(FieldErrors, len(fe))
	for i, f := range fe {
		out[i] = FieldError{Field: prefix + "." + f.Field, Message: f.Message}
	}
	return out.Err()
}

// AppointmentsKind is the appointments section's kind.
func AppointmentsKind() *Kind { return KindOf("appointments") }

var exampleBooking = `{"service_id":"$SERVICE","user_id":"$USER","location_id":"$LOCATION","start":"2026-03-10T09:00:00+01:00",
"customer":{"first_name":"Anna","last_name":"Berger","birth_date":"1980-02-29","email":"anna.berger@example.at"},
"note":"First visit"}`

// BookingQuery narrows a booking list and pages it in id order.
type BookingQuery struct {
	Limit int
	// After is the last id of the previous page; "" starts at the beginning.
	After                   string
	Service, Location, User *UUID
}

// SlotRequest is the validated query of booking/slots.
type SlotRequest struct {
	Service, Location UUID
	User              *UUID
	From, To          Date
}

// Offered lists the ids of the bookable users, locations or services
// (section) among offers that match q's filters, in id order.
func Offered(offers []Offer, section string, q BookingQuery) []UUID {
	var out []UUID
	for _, o := range offers {
		if (q.Service != nil && o.Service != *q.Service) || (q.Location != nil && o.Location != *q.Location) ||
			(q.User != nil && o.User != *q.User) {
			continue
		}
		id := o.User
		switch section {
		case "locations":
			id = o.Location
		case "services":
			id = o.Service
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Offering is what the booking widget may show of an object: its id and
// the fields its section lists, in that order, each as stored (null where
// absent), nothing personal beyond a user's display name.
type Offering struct {
	ID     UUID
	Fields []OfferedField
}

// OfferedField is one field of an Offering: its name and its JSON value.
type OfferedField struct {
	Name  string
	Value json.RawMessage
}

// BookingView is the Offering of an object of section.
func BookingView(section string, id UUID, payload []byte) (Offering, error) {
	var fields []string
	switch section {
	case "users":
		fields = []string{"title", "display_name", "specialty"}
	case "locations":
		fields = []string{"name", "address", "phone"}
	case "services":
		fields = []string{"name", "description", "category", "duration_minutes", "price", "currency"}
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(payload, &all); err != nil {
		return Offering{}, err
	}
	o := Offering{ID: id, Fields: make([]OfferedField, len(fields))}
	for i, f := range fields {
		v, ok := all[f]
		if !ok {
			v = json.RawMessage("null")
		}
		o.Fields[i] = OfferedField{Name: f, Value: v}
	}
	return o, nil
}

// Append appends o to b as the booking lists answer it: {"id":…, then its fields}.
func (o Offering) Append(b []byte) []byte {
	b = strconv.AppendQuote(append(b, `{"id":`...), string(o.ID))
	for _, f := range o.Fields {
		b = append(append(append(append(b, ',', '"'), f.Name...), '"', ':'), f.Value...)
	}
	return append(b, '}')
}

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

// Minutes is the time of day as minutes past midnight; 24:00 is 1440.
func (t TimeOfDay) Minutes() int {
	if len(t) != 5 {
		return 0
	}
	h, _ := strconv.Atoi(string(t[:2]))
	m, _ := strconv.Atoi(string(t[3:]))
	return h*60 + m
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
