package domain

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Shape is what a kind's objects hang on, which decides its storage and filters.
type Shape int

const (
	// ShapeCustomer is the customers section: integer ids, the tenant's patients.
	ShapeCustomer Shape = iota + 1
	// ShapeRecord belongs to one customer: listed by ?customer_id=, kept in the records table.
	ShapeRecord
	// ShapeMasterData is company-wide (users, locations, billing documents), in the records table.
	ShapeMasterData
)

// RuleContext is what rules are judged against: the moment, and the
// company's zone, in which "today" and "the future" are read.
type RuleContext struct {
	Now  time.Time
	Zone *time.Location
}

// Today is the company's current civil date.
func (rc RuleContext) Today() Date { return DateOf(rc.Now, rc.Zone) }

// Payload is the body of one kind's objects: a plain struct whose tags state
// its field rules. The hooks add what tags cannot.
type Payload interface {
	// normalize sets defaults and server-computed fields.
	normalize(rc RuleContext)
	// check adds the rules a schema cannot state: checksums done by formats,
	// these are cross-field rules and dates judged against today.
	check(rc RuleContext, errs *FieldErrors)
	// refs names the objects the payload references, to be looked up in the company.
	refs() []Ref
	// customer is the customer the object belongs to; nil for customers themselves.
	customer() *CustomerID
}

// Kind is one generic section: a payload type and its schemas.
type Kind struct {
	Slug string
	// Name is the payload's name in the OpenAPI document.
	Name  string
	Shape Shape
	// Patch is true where PATCH (a JSON merge patch, validated whole) is offered.
	Patch bool
	// ReadOnly sections have no write endpoint: the operator's import writes them.
	ReadOnly bool
	// Calendar kinds (appointments) are listed by user, location and dates.
	Calendar bool
	// Hooks are what the store does beside keeping an object, on every write
	// and delete of the kind, in the write's transaction: the record path
	// runs them, so no adapter asks which kind it writes.
	Hooks []StoreHook
	// Immutable lists fields a PATCH may not change.
	Immutable []string
	// Unique is a field no two live objects of a company share ("" for none).
	Unique string
	// Counter is a field the use case fills with the company's next number
	// for the kind on create ("" for none).
	Counter string
	// OwnWrites kinds are written by a use case of their own, not the
	// generic create (their reads and document stay generic).
	OwnWrites bool
	// Filters are payload fields (strings) a list filters by, ?field=value.
	Filters []string
	// Actions are the kind's operations beyond the generic ones, as the
	// catalogue lists them (a use case of its own serves them).
	Actions []string
	// Example is a valid create body; $CUSTOMER, $USER and $DIAGNOSIS stand for ids of the company.
	Example string

	schemas    *Schemas
	newPayload func() Payload
	// observedRows reads an object's observed rows (observed, ObservedOf).
	observedRows func(payload []byte) []ObservedRow
}

// StoreHook names an effect of a kind's writes on the store (see Kind.Hooks).
// The store adapter implements each; a test may declare its own.
type StoreHook string

const (
	// HookCalendarSpan keeps an appointment's busy span beside it: written
	// with every write, gone with the delete.
	HookCalendarSpan StoreHook = "calendar-span"
	// HookCatalogVersion moves the company's booking catalogue version
	// (Company.CatalogVersion) with every write of the catalogue's sections.
	HookCatalogVersion StoreHook = "catalog-version"
	// HookObserved keeps an object's observed rows (ObservedOf) beside it:
	// written with every write, gone with the delete.
	HookObserved StoreHook = "observed"
)

// HasHook reports whether the kind's writes run hook.
func (k *Kind) HasHook(hook StoreHook) bool { return slices.Contains(k.Hooks, hook) }

// WithHooks is a copy of k under another slug whose writes also run hooks:
// the way a test declares a kind of its own on a real payload.
func (k *Kind) WithHooks(slug string, hooks ...StoreHook) *Kind {
	c := *k
	c.Slug, c.Hooks = slug, append(slices.Clone(k.Hooks), hooks...)
	return &c
}

// FilterProblem judges a list filter's value by its field's schema (an
// enumerated value, a UUID); "" when it may be asked for.
func (k *Kind) FilterProblem(field, value string) string {
	props, _ := k.schemas.Output["properties"].(map[string]any)
	p, _ := props[field].(map[string]any)
	if enum, ok := p["enum"].([]any); ok && !slices.Contains(enum, any(value)) {
		return "must be one of the field's values"
	}
	if p["format"] == "uuid" && !ValidObjectID(value) {
		return "must be " + FormatDescription("uuid")
	}
	return ""
}

// UniqueClash is the 422 of a write whose Unique field's value another
// live object of the company holds.
func (k *Kind) UniqueClash() error {
	return FieldErrors{{Field: k.Unique, Message: "is already another " + singular(k.Slug) + "'s in this company"}}.Err()
}

// Schemas of the kind's payload, for the OpenAPI document.
func (k *Kind) Schemas() *Schemas { return k.schemas }

// NewPayload is a new zero value of the kind's own payload type, a pointer
// (*Measurement for measurements): what a door decodes a stored payload
// into to read its fields by their Go names.
func (k *Kind) NewPayload() any { return k.newPayload() }

// HasCustomer reports whether the kind's objects name a customer: its lists then filter by ?customer_id=.
func (k *Kind) HasCustomer() bool {
	props, _ := k.schemas.Input["properties"].(map[string]any)
	_, ok := props["customer_id"]
	return ok
}

func newKind[T any, PT interface {
	*T
	Payload
}](slug string, shape Shape, example string) *Kind {
	idSchema := map[string]any{"type": "string", "format": "uuid"}
	if shape == ShapeCustomer {
		idSchema = map[string]any{"type": "integer", "minimum": 1, "maximum": MaxCustomerID}
	}
	s, err := reflectSchemas(reflect.TypeFor[T](), idSchema)
	if err != nil {
		panic(err) // the payload types are ours: a broken tag is a programming error
	}
	name := strings.TrimSuffix(reflect.TypeFor[T]().Name(), "Data")
	return &Kind{Slug: slug, Name: name, Shape: shape, Example: example, schemas: s, newPayload: func() Payload { return PT(new(T)) }}
}

// NumericIDs reports whether the kind's ids are customer numbers, which the
// store hands out, rather than UUIDs the service makes.
func (k *Kind) NumericIDs() bool { return k.Shape == ShapeCustomer }

// NewID is the id of an object about to be created: a new UUID, or "" where
// the store numbers the kind's objects.
func (k *Kind) NewID() string {
	if k.NumericIDs() {
		return ""
	}
	return NewObjectID()
}

// IDFromJSON reads an id as an import line spells it: a customer number from
// 1 to MaxCustomerID, or a canonical UUID string.
func (k *Kind) IDFromJSON(raw json.RawMessage) (string, bool) {
	if k.NumericIDs() {
		var n int64
		if json.Unmarshal(raw, &n) != nil || n < 1 || n > MaxCustomerID {
			return "", false
		}
		return strconv.FormatInt(n, 10), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !ValidObjectID(s) {
		return "", false
	}
	return s, true
}

// IDForm says what IDFromJSON takes, for an error message.
func (k *Kind) IDForm() string {
	if k.NumericIDs() {
		return "a customer number from 1 to " + strconv.FormatInt(MaxCustomerID, 10)
	}
	return "a UUID in canonical lower-case form"
}

// AppendID writes an id as the kind's JSON spells it.
func (k *Kind) AppendID(b []byte, id string) []byte { return appendID(b, id, k.NumericIDs()) }

// Object is a validated, normalized payload ready to store.
type Object struct {
	// JSON is the payload as answered: every field, null where absent.
	JSON     []byte
	Customer *CustomerID
	Refs     []Ref
	payload  Payload
}

// Decode validates a create body and normalizes it. Every failing field is
// reported at once, as *ValidationErrors.
func (k *Kind) Decode(body Document, rc RuleContext) (Object, error) {
	return k.decode(body, rc, false)
}

// required lists the create schema's required fields.
func (k *Kind) required() []string {
	var out []string
	list, _ := k.schemas.Input["required"].([]any)
	for _, r := range list {
		out = append(out, r.(string))
	}
	return out
}

// DecodeImport is Decode for the operator's import: the fields only the
// server sets through the API (a fee service's status, an illness
// notification's end) come with the data; computed ones are computed again.
func (k *Kind) DecodeImport(body []byte, rc RuleContext) (Object, error) {
	return k.decode(ParseDocument(body), rc, true)
}

func (k *Kind) decode(body Document, rc RuleContext, withServer bool, tolerate ...string) (Object, error) {
	p := k.newPayload()
	if err := k.schemas.decodeInput(body, p, withServer, tolerate...); err != nil {
		return Object{}, err
	}
	return k.validate(p, rc)
}

// validate judges a payload of k's type, decoded or built: its times in the
// company's zone, normalized, every cross-field rule checked.
func (k *Kind) validate(p Payload, rc RuleContext) (Object, error) {
	localize(reflect.ValueOf(p), rc.Zone)
	p.normalize(rc)
	var errs FieldErrors
	p.check(rc, &errs)
	if err := errs.Err(); err != nil {
		return Object{}, err
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return Object{}, err
	}
	return Object{JSON: raw, Customer: p.customer(), Refs: p.refs(), payload: p}, nil
}

// Merge applies a JSON merge patch (RFC 7386) to a stored payload and
// validates the result whole, as a create would be. Server fields and
// immutable fields may not be changed.
func (k *Kind) Merge(stored []byte, patch Document, rc RuleContext) (Object, error) {
	p, err := patch.object("the body must be one JSON merge patch object")
	if err != nil {
		return Object{}, err
	}
	var base map[string]any
	if err := json.Unmarshal(stored, &base); err != nil {
		return Object{}, err
	}
	var carry map[string]any
	if pp, ok := k.newPayload().(patcher); ok {
		if carry, err = pp.patchable(rc, base, p); err != nil {
			return Object{}, err
		}
	}
	var errs FieldErrors
	for _, f := range append(append([]string{"id", "created_at", "updated_at"}, k.schemas.server...), k.Immutable...) {
		if _, touched := p[f]; touched && !equalJSON(p[f], base[f]) {
			errs.Add(f, "cannot be changed")
		}
		delete(p, f)
	}
	if len(errs) > 0 {
		return Object{}, errs.Err()
	}
	for _, f := range k.schemas.server {
		delete(base, f)
	}
	// A required field the object was stored without (a customer the
	// operator created without a birth date) stays absent unless the patch
	// touches it: a PATCH answers for what it changes.
	var absent []string
	for _, f := range k.required() {
		if _, touched := p[f]; base[f] == nil && !touched {
			absent = append(absent, f)
		}
	}
	merged, err := json.Marshal(mergePatch(base, p))
	if err != nil {
		return Object{}, err
	}
	obj, err := k.decode(ParseDocument(merged), rc, false, absent...)
	if err != nil || carry == nil {
		return obj, err
	}
	obj.JSON, err = SetFields(obj.JSON, carry)
	return obj, err
}

// patcher is a payload whose PATCH depends on its stored state: it may refuse
// the change, and it carries server fields a PATCH may set.
type patcher interface {
	patchable(rc RuleContext, stored, patch map[string]any) (carry map[string]any, err error)
}

// mergePatch is RFC 7386: objects merge member by member, null removes, anything else replaces.
func mergePatch(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// localize turns every DateTime into the company's zone and every nil slice
// into an empty one: answers give instants in the company's offset and
// never a null list.
func localize(v reflect.Value, zone *time.Location) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			localize(v.Elem(), zone)
		}
	case reflect.Struct:
		if dt, ok := v.Addr().Interface().(*DateTime); ok {
			dt.Time = dt.In(zone)
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				localize(v.Field(i), zone)
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		}
		for i := range v.Len() {
			localize(v.Index(i), zone)
		}
	}
}

// Ref is a reference from a payload field to another object of the company.
type Ref struct {
	Field   string // body path, for the 422
	Section string // the referenced section's slug
	ID      string
	// SameCustomer requires the referenced object to belong to the payload's customer.
	SameCustomer bool
	// Rule, when set, judges the target further; a non-empty answer refuses it.
	Rule func(RefTarget) string
}

// RefTarget is what a store knows of a referenced, live object.
type RefTarget struct {
	Customer *CustomerID
	// Attrs are its stored fields (a record's payload, a file's columns).
	Attrs map[string]any
}

// CheckRefs judges refs against the targets found, by section and id: an
// absent target is missing (or another company's, which looks the same).
func CheckRefs(refs []Ref, customer *CustomerID, found map[string]map[string]RefTarget) error {
	var errs FieldErrors
	for _, r := range refs {
		t, ok := found[r.Section][r.ID]
		switch {
		case !ok:
			errs.Add(r.Field, "names no "+singular(r.Section)+" of this company")
		case r.SameCustomer && (customer == nil || t.Customer == nil || *t.Customer != *customer):
			errs.Add(r.Field, "must belong to the same customer")
		case r.Rule != nil:
			if msg := r.Rule(t); msg != "" {
				errs.Add(r.Field, msg)
			}
		}
	}
	return errs.Err()
}

func singular(section string) string {
	switch section {
	case "customers":
		return "customer"
	case "users":
		return "user"
	case "files":
		return "file"
	case "appointments":
		return "appointment"
	case "diagnoses":
		return "diagnosis"
	case "illness-notifications":
		return "illness notification"
	case "devices":
		return "device"
	case "service-assignments":
		return "service assignment"
	}
	return "object of " + section
}

// Singular names one object of the kind in messages ("device").
func (k *Kind) Singular() string { return singular(k.Slug) }

// AppendObject appends the answer for one object to b: the id, the payload's
// fields, then the envelope's version and times in UTC. payload is a JSON object.
// ObjectOverhead bounds what AppendObject adds to a payload: the id, the
// version and the two times (about 140 bytes), so that a page's buffer sized
// by it never grows while a page is written.
const ObjectOverhead = 192

func AppendObject(b []byte, id string, numericID bool, payload []byte, version int64, created, updated time.Time) []byte {
	b = appendID(append(b, `{"id":`...), id, numericID)
	if inner := bytes.TrimSpace(payload); len(inner) > 2 {
		b = append(b, ',')
		b = append(b, inner[1:len(inner)-1]...)
	}
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, version, 10)
	b = append(b, `,"created_at":"`...)
	b = created.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, `","updated_at":"`...)
	b = updated.UTC().AppendFormat(b, time.RFC3339)
	return append(b, `"}`...)
}

// appendID writes an id as JSON. Stored ids are canonical UUIDs or decimal
// customer numbers, never anything JSON would escape; anything else is quoted
// as a string, escapes and all.
func appendID(b []byte, id string, numeric bool) []byte {
	switch {
	case numeric:
		return append(b, id...)
	case ValidObjectID(id):
		return append(append(append(b, '"'), id...), '"')
	}
	return strconv.AppendQuote(b, id)
}

// AppendTombstone appends a deleted object as include_deleted lists it.
func AppendTombstone(b []byte, id string, numericID bool, deleted time.Time) []byte {
	b = appendID(append(b, `{"id":`...), id, numericID)
	b = append(b, `,"deleted":true,"deleted_at":"`...)
	b = deleted.UTC().AppendFormat(b, time.RFC3339)
	return append(b, `"}`...)
}

// Effect is a change a write makes to another object of the same company:
// fields set on its stored payload, in the same transaction.
type Effect struct {
	Section string
	ID      string
	Set     map[string]any
}

type effector interface{ effects(id string) []Effect }

// HasEffects reports whether writing the kind's objects changes others.
func (k *Kind) HasEffects() bool {
	_, ok := k.newPayload().(effector)
	return ok
}

// Effects are the changes creating the object under id makes elsewhere.
func (o Object) Effects(id string) []Effect {
	if e, ok := o.payload.(effector); ok {
		return e.effects(id)
	}
	return nil
}

// SetFields sets top-level members of a stored payload, keeping its field order.
func SetFields(payload []byte, set map[string]any) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	seen := map[string]bool{}
	write := func(k string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		seen[k] = true
		if nv, ok := set[k]; ok {
			err = write(k, nv)
		} else {
			err = write(k, v)
		}
		if err != nil {
			return nil, err
		}
	}
	for k, v := range set {
		if !seen[k] {
			if err := write(k, v); err != nil {
				return nil, err
			}
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ExampleIDs are the ids a kind's example refers to.
type ExampleIDs struct {
	Customer                                   CustomerID
	User, Diagnosis, Location, Service, Device string
}

// ExampleWith is the kind's example body with ids of one company.
func (k *Kind) ExampleWith(ids ExampleIDs) string {
	return strings.NewReplacer("$CUSTOMER", strconv.FormatInt(int64(ids.Customer), 10), "$USER", ids.User,
		"$DIAGNOSIS", ids.Diagnosis, "$LOCATION", ids.Location, "$SERVICE", ids.Service, "$DEVICE", ids.Device).Replace(k.Example)
}

// SampleIDs fill examples where no real objects stand behind them (documents, schemas).
var SampleIDs = ExampleIDs{Customer: 1042, User: "019bc0e2-1280-781f-a8e2-5d940ed90475",
	Diagnosis: "019cd6cf-68f8-70c6-a6a3-a4506513270e", Location: "019bc0e2-1668-7160-8999-50d836f675cc",
	Service: "019bc0e2-1a50-711d-ab0d-549b6f03675a", Device: "019bc0e2-1e38-7a4b-9c1d-3e5f7a9b1c2d"}

// Observed rows: what a search of Observations and reports (FHIR's
// Observation and DiagnosticReport `code` and `date`) compares, kept by the
// store beside each object of a section that declares HookObserved, so that
// the search is a condition of the query (docs/contract.md §15). A
// measurement is one row; a lab result is a row of its own (Row 0: the
// report, no code) and one per result (Row 1, 2, …), each when its sample
// was collected.

// ObservedRow is one observed row of an object.
type ObservedRow struct {
	Row  int
	Code string // the LOINC code, "" for none
	// From and Until are when it was measured as the range [From, Until)
	// its value spells (an instant: its second); both zero when unknown.
	From, Until time.Time
}

// ObservedOf are the observed rows of an object of kind, from its payload;
// none for a kind that keeps none or a payload that does not decode.
func ObservedOf(kind *Kind, payload []byte) []ObservedRow {
	if kind.observedRows == nil {
		return nil
	}
	return kind.observedRows(payload)
}
