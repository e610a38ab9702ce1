package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/patientmatch"
	"github.com/praxis-health/praxis/ports"
)

// Records serves every generic section of the table: the routes of a kind
// are derived from its row, never written per section.
type Records struct{ records ports.Records }

// NewRecords serves records.
func NewRecords(records ports.Records) *Records { return &Records{records: records} }

func (h *Records) Register(r fiber.Router) {
	for _, k := range domain.Kinds() {
		read, write := requireScope(domain.ReadScope(k.Slug)), requireScope(domain.WriteScope(k.Slug))
		base := "/" + k.Slug
		r.Get(base, read, h.list(k))
		if k == domain.CustomersKind() { // matching a patient (docs/contract.md §15)
			r.Post(base+"/match", read, h.match)
		}
		if !k.ReadOnly && !k.OwnWrites {
			r.Post(base, write, h.create(k))
		}
		r.Get(base+"/:id", read, h.get(k))
		if k.Patch {
			r.Patch(base+"/:id", write, h.patch(k))
		}
	}
}

func (h *Records) list(k *domain.Kind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if c.Request().URI().QueryArgs().Has("ids") {
			return h.batch(c, k)
		}
		q, err := kindListQuery(c, k)
		if err != nil {
			return err
		}
		if q.IncludeCustomers, err = includeParam(c); err != nil {
			return err
		}
		if q.IncludeCustomers && !customersReadable(c) {
			return nil
		}
		page, err := h.records.List(c.UserContext(), grantOf(c), k, q)
		if err != nil {
			return err
		}
		return writePageTotal(c, ports.AppendObjects(nil, k, page.Items), page.Next.Encode(), page.HasMore,
			customersOf(q.IncludeCustomers, page.Customers), page.Total)
	}
}

// batch answers ?ids=: the objects asked for, in the order asked, and the
// ids not found in the company, in the list's shape (writeBatch).
func (h *Records) batch(c *fiber.Ctx, k *domain.Kind) error {
	q, err := batchQuery(c, k)
	if err != nil {
		return err
	}
	if q.IncludeCustomers && !customersReadable(c) {
		return nil
	}
	b, err := h.records.Batch(c.UserContext(), grantOf(c), k, q)
	if err != nil {
		return err
	}
	return writeBatch(c, ports.AppendObjects(nil, k, b.Items), b.NotFound, customersOf(q.IncludeCustomers, b.Customers))
}

// customersOf are the customers of a page or a batch as a JSON array, when
// they were asked for (include=customer); nil otherwise.
func customersOf(asked bool, customers []ports.StoredObject) []byte {
	if !asked {
		return nil
	}
	return ports.AppendObjects(nil, domain.CustomersKind(), customers)
}

func (h *Records) get(k *domain.Kind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		obj, err := h.records.Get(c.UserContext(), grantOf(c), k, c.Params("id"))
		if err != nil {
			return err
		}
		if done, err := notModified(c, obj.Version); done || err != nil {
			return err
		}
		return sendVersioned(c, fiber.StatusOK, obj.JSON(k), obj.Version)
	}
}

func (h *Records) create(k *domain.Kind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return created(c, objectOf(k), func(body []byte, key *ports.IdempotencyKey) (ports.WrittenObject, error) {
			return h.records.Create(c.UserContext(), grantOf(c), k, domain.ParseDocument(body), key)
		})
	}
}

// match answers POST customers/match: the patients the body's may be.
func (h *Records) match(c *fiber.Ctx) error {
	return created(c, matchesOf, func(body []byte, key *ports.IdempotencyKey) (ports.Written[[]ports.Match], error) {
		req, err := patientmatch.ParseRequest(body)
		if err != nil {
			return ports.Written[[]ports.Match]{}, err
		}
		return h.records.MatchOnce(c.UserContext(), grantOf(c), req, key)
	})
}

// matchesOf renders a match's candidates, which carry no version.
func matchesOf(m []ports.Match) ([]byte, int64, error) { return ports.AppendMatches(nil, m), 0, nil }

// created serves a POST that makes something from a JSON body: the body
// and its Idempotency-Key read, the use case's answer rendered and sent with
// its ETag and Location.
func created[T any](c *fiber.Ctx, render func(T) ([]byte, int64, error), create func(body []byte, key *ports.IdempotencyKey) (ports.Written[T], error)) error {
	body, err := jsonBody(c)
	if err != nil {
		return err
	}
	key, err := idempotencyKey(c, body)
	if err != nil {
		return err
	}
	resp, err := create(body, key)
	if err != nil {
		return err
	}
	return sendWritten(c, resp, render)
}

func (h *Records) patch(k *domain.Kind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		body, err := jsonBody(c)
		if err != nil {
			return err
		}
		w, err := writeOf(c, body)
		if err != nil {
			return err
		}
		resp, err := h.records.Patch(c.UserContext(), grantOf(c), k, c.Params("id"), domain.ParseDocument(body), w)
		if err != nil {
			return err
		}
		return sendWritten(c, resp, objectOf(k))
	}
}

func sendJSON(c *fiber.Ctx, status int, body []byte) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(status).Send(body)
}
