package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	reflector "github.com/invopop/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// A payload's struct tags are the one statement of its field rules. They are
// read twice: reflected into a JSON schema that validates every request
// (reporting each failing field at once), and into the OpenAPI document.
// What a schema cannot say (checksums, dates against today, rules across
// fields) each payload states in Check.

// Schemas is a payload type's reflected schemas.
type Schemas struct {
	// Input is the schema of a create body: server fields left out, every object closed.
	Input map[string]any
	// Output is the answered object: every field present, the optional ones nullable.
	Output map[string]any
	server []string
	valid  *jsonschema.Schema
	// full is the schema with the server fields: the operator's import carries them.
	full *jsonschema.Schema
}

var reflect_ = reflector.Reflector{RequiredFromJSONSchemaTags: true, DoNotReference: true, ExpandedStruct: true}

// reflectSchemas builds the schemas of payload type t; idSchema is the schema
// of the answer's id (a UUID, or a customer number).
func reflectSchemas(t reflect.Type, idSchema map[string]any) (*Schemas, error) {
	raw, err := json.Marshal(reflect_.ReflectFromType(t))
	if err != nil {
		return nil, err
	}
	var input map[string]any
	if err := json.Unmarshal(raw, &input); err != nil {
		return nil, err
	}
	// No $id: the document holds the input and the output schema of every
	// kind, and JSON Schema validators refuse two schemas of one $id.
	delete(input, "$schema")
	delete(input, "$id")
	server := serverFields(t)
	full := deepCopy(input)
	output := deepCopy(input)
	props, _ := input["properties"].(map[string]any)
	for _, f := range server {
		delete(props, f)
	}
	input["required"] = without(input["required"], server)

	outProps, _ := output["properties"].(map[string]any)
	nullableOptional(output)
	all := []any{"id"}
	for name := range orderedKeys(outProps) {
		all = append(all, name)
	}
	for _, f := range answerNullableFields(t) {
		if p, ok := outProps[f].(map[string]any); ok {
			outProps[f] = map[string]any{"anyOf": []any{p, map[string]any{"type": "null"}}}
		}
	}
	newProps := map[string]any{"id": idSchema}
	for k, v := range outProps {
		newProps[k] = v
	}
	newProps["version"] = map[string]any{"type": "integer", "minimum": 1,
		"description": "moves by one with every change of this object; its ETag is the same number in quotes"}
	all = append(all, "version")
	for _, f := range []string{"created_at", "updated_at"} {
		newProps[f] = map[string]any{"type": "string", "format": "date-time"}
		all = append(all, f)
	}
	output["properties"] = newProps
	output["required"] = all

	c := newCompiler()
	if err := c.AddResource("mem:///input.json", deepCopy(input)); err != nil {
		return nil, err
	}
	if err := c.AddResource("mem:///full.json", full); err != nil {
		return nil, err
	}
	valid, err := c.Compile("mem:///input.json")
	if err != nil {
		return nil, fmt.Errorf("compile schema of %s: %w", t, err)
	}
	fullValid, err := c.Compile("mem:///full.json")
	if err != nil {
		return nil, fmt.Errorf("compile schema of %s: %w", t, err)
	}
	return &Schemas{Input: input, Output: output, server: server, valid: valid, full: fullValid}, nil
}

// nullableOptional makes every property that is not required nullable, and
// every property required, at every depth: an answer carries every field,
// null when it has no value.
func nullableOptional(s map[string]any) {
	if items, ok := s["items"].(map[string]any); ok {
		nullableOptional(items)
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return
	}
	req := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, n := range r {
			req[n.(string)] = true
		}
	}
	all := []any{}
	for name := range orderedKeys(props) {
		p := props[name].(map[string]any)
		nullableOptional(p)
		if !req[name] && p["type"] != "array" {
			props[name] = map[string]any{"anyOf": []any{p, map[string]any{"type": "null"}}}
		}
		all = append(all, name)
	}
	s["required"] = all
}

// orderedKeys iterates a map's keys in sorted order, so documents are stable.
func orderedKeys(m map[string]any) func(func(string) bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return func(yield func(string) bool) {
		for _, k := range keys {
			if !yield(k) {
				return
			}
		}
	}
}

func without(required any, drop []string) []any {
	list, _ := required.([]any)
	out := []any{}
	for _, r := range list {
		if !slices.Contains(drop, r.(string)) {
			out = append(out, r)
		}
	}
	return out
}

// serverFields lists the top-level JSON names tagged `server:"true"`.
func serverFields(t reflect.Type) []string { return taggedFields(t, "server", "true") }

// answerNullableFields lists the top-level JSON names tagged
// `answer:"nullable"`: required on create, but null in the answer for an
// object stored without them (the operator and the import may omit them).
func answerNullableFields(t reflect.Type) []string { return taggedFields(t, "answer", "nullable") }

// taggedFields lists the top-level JSON names whose tag key is value.
func taggedFields(t reflect.Type, key, value string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, taggedFields(f.Type, key, value)...)
			continue
		}
		if f.Tag.Get(key) == value {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out = append(out, name)
		}
	}
	return out
}

func deepCopy(v map[string]any) map[string]any {
	b, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// Document is a write's body as a door read it: one JSON value, decoded
// (numbers as written, json.Number), not yet judged; or why it could not be
// read (ErrMalformedJSON). A use case judges it (Kind.Decode, Kind.Merge) in
// the write's own order, so that a body that is no JSON is refused where it
// always was: after the write's other refusals (a missing object, a stale
// version, a reused key). Judging takes the value apart: judge a Document once.
type Document struct {
	value any
	err   error
}

// ParseDocument reads a JSON body.
func ParseDocument(body []byte) Document {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return Document{err: ErrMalformedJSON}
	}
	return Document{value: v}
}

// DocumentOf is fields as a body: how a door that builds its write itself
// (a form of the settings site, a FHIR resource) hands it over.
func DocumentOf(fields any) Document {
	raw, err := json.Marshal(fields)
	if err != nil {
		return Document{err: err}
	}
	return ParseDocument(raw)
}

// object is the document's JSON object; refusal says what the body must be
// when it is another value.
func (d Document) object(refusal string) (map[string]any, error) {
	if d.err != nil {
		return nil, d.err
	}
	obj, ok := d.value.(map[string]any)
	if !ok {
		return nil, FieldErrors{{"", refusal}}.Err()
	}
	return obj, nil
}

// decodeInput validates body against the schemas and decodes it into dst.
// A body that is not one JSON object, a server field, and every schema
// failure are reported together as field errors; a body that is no JSON at
// all is ErrMalformedJSON. tolerate names fields whose absence is not an
// error (a PATCH of an object stored without them).
func (s *Schemas) decodeInput(body Document, dst any, withServer bool, tolerate ...string) error {
	obj, err := body.object("the body must be one JSON object")
	if err != nil {
		return err
	}
	var errs FieldErrors
	schema := s.full
	if !withServer {
		schema = s.valid
		for _, f := range append([]string{"id", "version", "created_at", "updated_at"}, s.server...) {
			if v, ok := obj[f]; ok && v != nil {
				errs.Add(f, "is set by the server")
			}
			delete(obj, f)
		}
	}
	stripNulls(obj)
	if err := schema.Validate(obj); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		var found FieldErrors
		collect(ve, &found)
		for _, e := range found {
			if e.Message != "is required" || !slices.Contains(tolerate, e.Field) {
				errs = append(errs, e)
			}
		}
	}
	if len(errs) > 0 {
		return errs.Err()
	}
	integral(obj)
	clean, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(clean, dst); err != nil {
		return unmarshalFailure(err)
	}
	return nil
}

// integral writes every integral JSON number as the integer it denotes
// (1.0 and 1e2 are 1 and 100, as JSON Schema 2020-12 reads them), so that
// Go's decoder takes them into integer fields. A fractional number stays as
// it is; where an integer is wanted the schema has refused it already.
func integral(v any) any {
	switch v := v.(type) {
	case json.Number:
		return wholeNumber(v)
	case map[string]any:
		for k, e := range v {
			v[k] = integral(e)
		}
	case []any:
		for i, e := range v {
			v[i] = integral(e)
		}
	}
	return v
}

// wholeNumber is n as an integer literal when it is one within int64, else n.
func wholeNumber(n json.Number) json.Number {
	if !strings.ContainsAny(string(n), ".eE") {
		return n
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return n
	}
	return json.Number(strconv.FormatInt(int64(f), 10))
}

// unmarshalFailure names the field Go's decoder could not take a valid
// value into (a number beyond the field's range): a 422, never a 500.
func unmarshalFailure(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "body"
		}
		return FieldErrors{{field, "must be " + describeGoType(te.Type.Kind())}}.Err()
	}
	return err
}

func describeGoType(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number within the field's range"
	case reflect.Float32, reflect.Float64:
		return "a number within the field's range"
	}
	return "of the field's type"
}

// stripNulls drops null members of every object: on create, null means absent.
func stripNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			stripNulls(e)
		}
	case []any:
		for _, e := range v {
			stripNulls(e)
		}
	}
}

// collect turns the validator's error tree into field errors.
func collect(ve *jsonschema.ValidationError, errs *FieldErrors) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collect(c, errs)
		}
		return
	}
	at := bodyPath(ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			errs.Add(join(at, m), "is required")
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			errs.Add(join(at, p), "is not a field of this object")
		}
	default:
		errs.Add(at, ruleMessage(ve.ErrorKind))
	}
}

// ruleMessage states the broken rule without the value that broke it.
func ruleMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "must be of type " + strings.Join(k.Want, " or ")
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.Format:
		return "must be " + FormatDescription(k.Want)
	case *kind.Pattern:
		if k.Want == `\S` {
			return "must not be blank"
		}
		return "must match " + k.Want
	case *kind.MinLength:
		return "must have at least " + plural(k.Want, "character", "characters")
	case *kind.MaxLength:
		return "must have at most " + plural(k.Want, "character", "characters")
	case *kind.Minimum:
		return "must be at least " + ratString(k.Want)
	case *kind.Maximum:
		return "must be at most " + ratString(k.Want)
	case *kind.MinItems:
		return "must have at least " + plural(k.Want, "item", "items")
	case *kind.MaxItems:
		return "must have at most " + plural(k.Want, "item", "items")
	case *kind.UniqueItems:
		return "must not repeat an item"
	}
	return "is invalid"
}
