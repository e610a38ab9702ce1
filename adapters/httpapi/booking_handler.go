package httpapi

import (
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/slots"
	"github.com/praxis-health/praxis/ports"
)

// BookingSection is the booking widget's section, and the one step of
// appointments that is not the generic record path: cancel.
type BookingSection struct {
	booking      ports.Booking
	appointments ports.Appointments
}

// NewBookingSection serves booking and appointment cancellation.
func NewBookingSection(booking ports.Booking, appointments ports.Appointments) *BookingSection {
	return &BookingSection{booking: booking, appointments: appointments}
}

// bookingFilters are the filters each booking list takes (docs/sections.md §1).
var bookingFilters = map[string][]string{
	"users":     {"service_id", "location_id"},
	"locations": {"service_id", "user_id"},
	"services":  {"user_id", "location_id"},
}

func (h *BookingSection) Register(r fiber.Router) {
	read, write := requireScope(domain.ReadScope("booking")), requireScope(domain.WriteScope("booking"))
	for _, section := range []string{"users", "locations", "services"} {
		r.Get("/booking/"+section, read, h.offered(section))
	}
	r.Get("/booking/slots", read, h.slots)
	r.Post("/booking/appointments", write, h.book)
	r.Post("/appointments/:id/cancel", requireScope(domain.WriteScope("appointments")), h.cancel)
}

func (h *BookingSection) offered(section string) fiber.Handler {
	filters := bookingFilters[section]
	return func(c *fiber.Ctx) error {
		var errs domain.FieldErrors
		onlyParams(c, append([]string{"limit", "cursor"}, filters...), &errs)
		q := domain.BookingQuery{Limit: limitParam(c, &errs)}
		if v := c.Query("cursor"); v != "" {
			cur, err := domain.ParseCursor(v)
			if err != nil || (cur.ID != "" && !domain.ValidObjectID(cur.ID)) {
				errs.Add("cursor", "is not a cursor this API handed out")
			}
			q.After = cur.ID
		}
		q.Service, q.Location, q.User = uuidParam(c, "service_id", &errs), uuidParam(c, "location_id", &errs), uuidParam(c, "user_id", &errs)
		if err := errs.Err(); err != nil {
			return err
		}
		page, err := h.booking.Offered(c.UserContext(), grantOf(c), section, q)
		if err != nil {
			return err
		}
		data := []byte{'['}
		for i, o := range page.Items {
			if i > 0 {
				data = append(data, ',')
			}
			data = o.Append(data)
		}
		return writePage(c, append(data, ']'), page.Next.Encode(), page.HasMore, nil)
	}
}

func (h *BookingSection) slots(c *fiber.Ctx) error {
	var errs domain.FieldErrors
	onlyParams(c, []string{"service_id", "location_id", "user_id", "from", "to"}, &errs)
	for _, p := range []string{"service_id", "location_id", "from", "to"} {
		if c.Query(p) == "" {
			errs.Add(p, "is required")
		}
	}
	service, location, user := uuidParam(c, "service_id", &errs), uuidParam(c, "location_id", &errs), uuidParam(c, "user_id", &errs)
	var q domain.SlotRequest
	if c.Query("from") != "" && c.Query("to") != "" {
		from, to, err := slots.Window(c.Query("from"), c.Query("to"))
		if fe, ok := domain.AsFieldErrors(err); ok {
			errs = append(errs, fe...)
		}
		q.From, q.To = from, to
	}
	if err := errs.Err(); err != nil {
		return err
	}
	q.Service, q.Location, q.User = *service, *location, user
	buf := slotBuffers.Get().(*[]byte)
	defer slotBuffers.Put(buf)
	return h.booking.Slots(c.UserContext(), grantOf(c), q, func(sq slots.Query) error {
		*buf = slots.AppendJSON((*buf)[:0], sq)
		// SetBody copies into fasthttp's pooled body buffer, so the answer
		// (hundreds of KiB for a month) is built in a reused buffer and
		// costs the garbage collector nothing.
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		c.Status(fiber.StatusOK).Response().SetBody(*buf)
		return nil
	})
}

// slotBuffers hold the slot answers while they are built.
var slotBuffers = sync.Pool{New: func() any { return new([]byte) }}

func (h *BookingSection) book(c *fiber.Ctx) error {
	return created(c, objectOf(domain.AppointmentsKind()), func(body []byte, key *ports.IdempotencyKey) (ports.WrittenObject, error) {
		return h.booking.Book(c.UserContext(), grantOf(c), domain.ParseDocument(body), key)
	})
}

func (h *BookingSection) cancel(c *fiber.Ctx) error {
	body, err := jsonBody(c)
	if err != nil {
		return err
	}
	w, err := writeOf(c, body)
	if err != nil {
		return err
	}
	resp, err := h.appointments.Cancel(c.UserContext(), grantOf(c), c.Params("id"), domain.ParseDocument(body), w)
	if err != nil {
		return err
	}
	return sendWritten(c, resp, objectOf(domain.AppointmentsKind()))
}
