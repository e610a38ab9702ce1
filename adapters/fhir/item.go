package fhir

import (
	"encoding/json"
	"strconv"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// item is one object of a feed as the door maps it: the stored object's
// envelope (id, version, times, patient) and its section's own value —
// the section's payload type (*domain.CustomerData, *domain.Measurement,
// …), a stored file (domain.File), or a report's row (rows.go). Mappings
// and matchers read the value's Go fields: a field renamed or removed in
// its section fails to compile here.
type item struct {
	id      string
	version int64
	created time.Time
	updated time.Time
	// patient is the customer the object is about, nil for none.
	patient *domain.CustomerID
	value   any
	// lazy holds a page's payload until decode: a list's items are decoded
	// by whoever maps them (an export on its rendering goroutines, not on
	// the one that reads the next page).
	lazy *lazyPayload
}

// lazyPayload is a stored payload of kind not decoded yet.
type lazyPayload struct {
	kind    *domain.Kind
	payload []byte
}

// decode decodes the item's payload into its kind's type, if it has not been.
func (it *item) decode() error {
	if it.lazy == nil {
		return nil
	}
	v := it.lazy.kind.NewPayload()
	if err := gojson.Unmarshal(it.lazy.payload, v); err != nil {
		return err
	}
	it.value, it.lazy = v, nil
	return nil
}

// decodeAll decodes the items that are not yet.
func decodeAll(items []item) error {
	for i := range items {
		if err := items[i].decode(); err != nil {
			return err
		}
	}
	return nil
}

// itemOf is a stored object of kind with its payload decoded into the
// kind's own type. The decoder is goccy/go-json: encoding/json's reflection
// would cost an export more than the rest of its work per row
// (BenchmarkExportRender).
func itemOf(kind *domain.Kind, o ports.StoredObject) (item, error) {
	it := lazyItem(kind, o)
	return it, it.decode()
}

// lazyItem is a stored object of kind whose payload is decoded later (decode).
func lazyItem(kind *domain.Kind, o ports.StoredObject) item {
	return item{id: o.ID, version: o.Version, created: o.CreatedAt, updated: o.UpdatedAt, patient: o.Customer,
		lazy: &lazyPayload{kind: kind, payload: o.Payload}}
}

// itemsOf are stored objects of kind as items, decoded.
func itemsOf(kind *domain.Kind, objs []ports.StoredObject) ([]item, error) {
	out := lazyItems(kind, objs)
	return out, decodeAll(out)
}

// lazyItems are stored objects of kind as items not decoded yet.
func lazyItems(kind *domain.Kind, objs []ports.StoredObject) []item {
	out := make([]item, len(objs))
	for i, o := range objs {
		out[i] = lazyItem(kind, o)
	}
	return out
}

// fileItem is a stored file as an item.
func fileItem(f domain.File) item {
	customer := f.CustomerID
	return item{id: f.ID.String(), version: f.Version, created: f.CreatedAt, updated: f.UpdatedAt, patient: &customer, value: f}
}

// stamp is an instant as the native API writes the times of an object:
// RFC 3339 in UTC, to the second.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// patientID is the patient's id as FHIR spells it ("" for none).
func (it item) patientID() string {
	if it.patient == nil {
		return ""
	}
	return strconv.FormatInt(int64(*it.patient), 10)
}

// opt is an optional text, "" for none.
func opt[T ~string](s *T) string {
	if s == nil {
		return ""
	}
	return string(*s)
}

// instant is a date-time as the section answers it, "" for none.
func instant(d *domain.DateTime) string {
	if d == nil {
		return ""
	}
	return d.Format(time.RFC3339)
}

// decimalOf is a native decimal as a JSON number, false for none.
func decimalOf(d *domain.Decimal) (json.Number, bool) {
	if d == nil {
		return "", false
	}
	if _, err := strconv.ParseFloat(string(*d), 64); err != nil {
		return "", false
	}
	return json.Number(*d), true
}

// isActive is an active flag; the sections' default is true.
func isActive(a *bool) bool { return a == nil || *a }
