// Helpers: every answer validated against the served OpenAPI document.

package test

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// apiDocument is the served OpenAPI document, for checking that every answer
// a black-box test receives is one the document describes.
type apiDocument struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
	paths    []docPath
}

type docPath struct {
	template string
	match    *regexp.Regexp
}

const docURL = "mem:///openapi.json"

var (
	servedDoc     *apiDocument
	servedDocOnce sync.Once
	servedDocErr  error
)

// documentOf loads the document s serves, once per test binary: it is built from code, the same for every server.
func documentOf(t *testing.T, s *server) *apiDocument {
	t.Helper()
	servedDocOnce.Do(func() {
		resp, err := http.Get(s.url + "/api/oauth/v2/openapi.json")
		if err != nil {
			servedDocErr = err
			return
		}
		defer resp.Body.Close()
		raw, err := jsonschema.UnmarshalJSON(resp.Body)
		if err != nil {
			servedDocErr = err
			return
		}
		d := &apiDocument{doc: raw.(map[string]any), compiler: jsonschema.NewCompiler(), schemas: map[string]*jsonschema.Schema{}}
		d.compiler.DefaultDraft(jsonschema.Draft2020)
		d.compiler.AssertFormat() // as strict as Ajv with ajv-formats: a date-time must be one
		if err := d.compiler.AddResource(docURL, raw); err != nil {
			servedDocErr = err
			return
		}
		for p := range d.doc["paths"].(map[string]any) {
			re := "^" + regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`) + "$"
			d.paths = append(d.paths, docPath{template: p, match: regexp.MustCompile(re)})
		}
		servedDoc = d
	})
	if servedDocErr != nil {
		t.Fatalf("load the served OpenAPI document: %v", servedDocErr)
	}
	return servedDoc
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// operation finds the documented operation of method and path; exact paths before templates.
func (d *apiDocument) operation(method, path string) (string, map[string]any) {
	paths := d.doc["paths"].(map[string]any)
	best := ""
	for _, p := range d.paths {
		if p.match.MatchString(path) && (best == "" || !strings.Contains(p.template, "{")) {
			best = p.template
		}
	}
	if best == "" {
		return "", nil
	}
	op, _ := paths[best].(map[string]any)[strings.ToLower(method)].(map[string]any)
	return best, op
}

// check fails t when an answer is not one the document describes: an
// undocumented path, method or status, or a body its schema refuses.
func (d *apiDocument) check(t *testing.T, method, path string, r reply) {
	t.Helper()
	template, op := d.operation(method, path)
	if op == nil {
		t.Errorf("OpenAPI: %s %s is not documented", method, path)
		return
	}
	status := strconv.Itoa(r.status)
	responses := op["responses"].(map[string]any)
	resp, ok := responses[status].(map[string]any)
	pointer := "#/paths/" + pointerEscape(template) + "/" + strings.ToLower(method) + "/responses/" + status
	if !ok {
		t.Errorf("OpenAPI: %s %s answered %d, which is not documented (%s)", method, path, r.status, r.body)
		return
	}
	if ref, ok := resp["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/responses/")
		resp = d.doc["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
		pointer = ref
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 || len(r.body) == 0 {
		return
	}
	mediaType, _, _ := mime.ParseMediaType(r.header.Get("Content-Type"))
	entry, ok := content[mediaType].(map[string]any)
	if !ok {
		entry, ok = content["*/*"].(map[string]any) // any type: the bytes of a file
	}
	if !ok {
		t.Errorf("OpenAPI: %s %s %d answered %s, documented %v", method, path, r.status, mediaType, docKeys(content))
		return
	}
	if _, ok := entry["schema"]; !ok {
		return // documented as a media type only (the document itself)
	}
	schema, err := d.schema(pointer + "/content/" + pointerEscape(mediaType) + "/schema")
	if err != nil {
		t.Errorf("OpenAPI: schema of %s %s %d: %v", method, path, r.status, err)
		return
	}
	body, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
	if err != nil {
		t.Errorf("OpenAPI: %s %s %d: the body is not JSON: %q", method, path, r.status, r.body)
		return
	}
	if err := schema.Validate(body); err != nil {
		t.Errorf("OpenAPI: %s %s %d: the body does not match the document: %v\n%s", method, path, r.status, err, r.body)
	}
}

func (d *apiDocument) schema(pointer string) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.schemas[pointer]; ok {
		return s, nil
	}
	s, err := d.compiler.Compile(docURL + pointer)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", pointer, err)
	}
	d.schemas[pointer] = s
	return s, nil
}

func docKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
