package fhir

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/valyala/fastjson"
)

// object is one native object as the resource API answers it, read in
// place from its JSON (fastjson): a field is looked up by its name when a
// mapping or a search reads it, and nothing else is decoded. Decoding every
// object into a map[string]any cost an export more than the rest of its
// work together. The zero object has no fields. Reading a field may
// unescape it in place: one goroutine reads an object.
type object struct{ v *fastjson.Value }

// fieldRead, when a test sets it, hears the name of every field read
// (TestEveryFieldReadIsAnswered holds them to what the sections answer).
var fieldRead func(name string)

// field is the value of a field, nil when absent.
func (o object) field(name string) *fastjson.Value {
	if fieldRead != nil {
		fieldRead(name)
	}
	if o.v == nil {
		return nil
	}
	return o.v.Get(name)
}

// has tells whether o has the field, null or not.
func (o object) has(name string) bool { return o.field(name) != nil }

// obj is the object a field holds; the zero object for anything else.
func (o object) obj(name string) object {
	if f := o.field(name); f != nil && f.Type() == fastjson.TypeObject {
		return object{f}
	}
	return object{}
}

// elements are the values of an array field, none for anything else.
func (o object) elements(name string) []*fastjson.Value {
	f := o.field(name)
	if f == nil || f.Type() != fastjson.TypeArray {
		return nil
	}
	all, _ := f.Array()
	return all
}

// items are the objects of an array field (other elements left out).
func (o object) items(name string) []object {
	all := o.elements(name)
	out := make([]object, 0, len(all))
	for _, x := range all {
		if x.Type() == fastjson.TypeObject {
			out = append(out, object{x})
		}
	}
	return out
}

// str is a string field of o, "" when absent, null or not a string.
func str(o object, name string) string {
	f := o.field(name)
	if f == nil || f.Type() != fastjson.TypeString {
		return ""
	}
	b, _ := f.StringBytes()
	return string(b) // a copy: the object's bytes are the parser's
}

// strs are the non-empty strings of an array field.
func strs(o object, name string) []string {
	all := o.elements(name)
	out := make([]string, 0, len(all))
	for _, x := range all {
		if b, err := x.StringBytes(); err == nil && len(b) > 0 {
			out = append(out, string(b))
		}
	}
	return out
}

// number is a number field as written, "" for none.
func number(o object, name string) json.Number {
	f := o.field(name)
	if f == nil || f.Type() != fastjson.TypeNumber {
		return ""
	}
	return json.Number(f.MarshalTo(nil))
}

// decimal reads a native decimal (a JSON string or number) as a JSON number.
func decimal(o object, name string) (json.Number, bool) {
	s := str(o, name)
	if s == "" {
		s = number(o, name).String()
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return "", false
	}
	return json.Number(s), true
}

// ref is the id a reference field holds, a number or a string ("" for none).
func ref(o object, name string) string {
	if n := number(o, name); n != "" {
		return n.String()
	}
	return str(o, name)
}

// idOf is o's id as FHIR spells it: a customer number in decimal, else the uuid.
func idOf(o object) string { return ref(o, "id") }

// active is the active field; the sections' default is true.
func active(o object) bool {
	f := o.field("active")
	return f == nil || f.Type() != fastjson.TypeFalse
}

// decodeObjects reads a native JSON array of objects, numbers kept as
// written. Each call has a parser of its own: the objects stay valid as
// long as they are held.
func decodeObjects(data []byte) ([]object, error) {
	var p fastjson.Parser
	return arrayOf(&p, data)
}

// decodeObject reads one native object.
func decodeObject(data []byte) (object, error) {
	var p fastjson.Parser
	v, err := p.ParseBytes(data)
	if err != nil {
		return object{}, err
	}
	if v.Type() != fastjson.TypeObject {
		return object{}, errNotObject
	}
	return object{v}, nil
}

// parsers are reused by withObjects, whose objects do not outlive it.
var parsers fastjson.ParserPool

// withObjects reads a native JSON array of objects with a pooled parser
// and hands them to f: they are valid only while f runs.
func withObjects(data []byte, f func([]object) error) error {
	p := parsers.Get()
	defer parsers.Put(p)
	objs, err := arrayOf(p, data)
	if err != nil {
		return err
	}
	return f(objs)
}

// arrayOf parses data with p as an array of objects.
func arrayOf(p *fastjson.Parser, data []byte) ([]object, error) {
	v, err := p.ParseBytes(data)
	if err != nil {
		return nil, err
	}
	all, err := v.Array()
	if err != nil {
		return nil, err
	}
	out := make([]object, len(all))
	for i, x := range all {
		if x.Type() != fastjson.TypeObject {
			return nil, errNotObject
		}
		out[i] = object{x}
	}
	return out, nil
}

// errNotObject: the native answer was not what its door writes.
var errNotObject = errors.New("a native answer holds something other than objects")
