// Holds docs/contract.md §4 The resource API (no bad input answers 5xx).

package test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// badValues replace one field of a valid body: wrong types, nulls, huge,
// deep and broken strings, far dates, numbers no field holds.
var badValues = []string{
	`null`, `true`, `0`, `-1`, `1.0`, `1e2`, `1.5`, `1e400`, `12345678901234567890`, `"x"`, `""`, `{}`, `[]`, `[null]`, `{"zz":1}`,
	`"` + strings.Repeat("ü", 50_000) + `"`, `"a\u0000b"`, "\"\xff\xfe\"", `"0000-01-01"`, `"99999-12-31"`, `"0000-01-01T00:00:00Z"`,
	`"2026-02-30"`, `"9999-12-31T23:59:59-01:00"`, strings.Repeat("[", 3000) + strings.Repeat("]", 3000),
}

// badBodies replace a whole body.
var badBodies = []string{``, `null`, `[]`, `"text"`, `{`, `{"a":1}{`, "\xff\xfe", `{"a":1,"a":2}`, strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000),
	`{"` + strings.Repeat("k", 70_000) + `":1}`}

// badParams mutate a list's or an operation's query.
var badParams = []string{"limit=0", "limit=-1", "limit=501", "limit=abc", "limit=1e2", "limit=1&limit=2", "cursor=xyz", "cursor=" + url.QueryEscape("eyJ2IjoxLCJjIjotMX0"),
	"cursor=" + strings.Repeat("A", 5000), "updated_since=0000-01-01T00:00:00Z", "updated_since=yesterday", "updated_since=10000-01-01T00:00:00Z",
	"include_deleted=yes", "customer_id=0", "customer_id=-5", "customer_id=99999999999", "customer_id=1.0", "user_id=NOT-A-UUID",
	"from=0000-01-01", "to=2026-13-01", "from=2026-03-01&to=2025-03-01", "nope=1", "%ff=1", "limit=%00",
	"updated_since=2026-01-01T00:00:00%2B24:00", "ids=", "ids=,", "ids=abc", "ids=0", "ids=" + strings.Repeat("1,", 101) + "1",
	"ids=" + url.QueryEscape("019BC0E2-1280-781F-A8E2-5D940ED90475"), "ids=1&limit=5", "ids=1&cursor=x", "include=customer&ids=%00",
	"include=everything", "include="}

// badConditions are If-Match and If-None-Match values no answer's ETag is.
var badConditions = []string{`3`, `"x"`, `""`, `"0"`, `"-1"`, `W/"1"`, `W/x`, `"1`, `"1" "2"`, `*,"1"`, `"99999999999999999999"`,
	strings.Repeat(`"1",`, 30) + `"1"`}

// badIDs stand in a path's {id}.
var badIDs = []string{"0", "-1", "99999999999", "1.0", "abc", strings.Repeat("9", 500), "019BC0E2-1280-781F-A8E2-5D940ED90475", "%00", "%ff", "..%2f..%2fetc"}

// TestBadInputNeverAnswers5xx: every operation of the served document,
// with bodies, parameters and ids mutated per schema, answers in its
// documented shape (each reply is checked against the document) and never
// 5xx; and a refused request stores nothing: afterwards each section holds
// its seeded object plus exactly what the 2xx creates made.
func TestBadInputNeverAnswers5xx(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, unlimitedRates)
		c := s.newCompany(t, 1<<20)
		file, ids := practiceFile(t)
		s.praxis(t, nil, "admin", "import", "--company", c.ID, file)
		auth := "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, c, sectionScopes()))
		ex := domain.ExampleIDs{Customer: 5000, User: ids["users"], Diagnosis: ids["diagnoses"], Location: ids["locations"], Service: ids["services"], Device: ids["devices"]}
		doc := documentOf(t, s).doc
		created := map[string]int{}
		requests := 0
		send := func(method, path, contentType, body string, headers ...string) reply {
			t.Helper()
			requests++
			r := s.request(t, method, path, contentType, body, append(headers, auth)...)
			if r.status >= 500 {
				t.Errorf("%s %s (%.80q): %d %s", method, path, body, r.status, r.body)
			}
			return r
		}
		paths := make([]string, 0, len(doc["paths"].(map[string]any)))
		for p := range doc["paths"].(map[string]any) {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, path := range paths {
			if !strings.HasPrefix(path, resource) {
				continue // the token and upload doors have fuzz targets of their own (make fuzz)
			}
			slug := strings.SplitN(strings.TrimPrefix(path, resource), "/", 2)[0]
			k := domain.KindOf(slug)
			for method := range doc["paths"].(map[string]any)[path].(map[string]any) {
				method = strings.ToUpper(method)
				if method != http.MethodGet && method != http.MethodPost && method != http.MethodPatch && method != http.MethodDelete {
					continue // a path item's shared parameters
				}
				concrete := path
				if strings.Contains(path, "{id}") {
					for _, id := range badIDs {
						send(method, strings.Replace(path, "{id}", id, 1), "application/json", `{}`)
					}
					id := ids[slug]
					if id == "" { // no object of this section is seeded (files): an id of none
						id = domain.NewObjectID()
					}
					concrete = strings.Replace(path, "{id}", id, 1)
				}
				// Conditions: a GET of one object reads If-None-Match, a write If-Match.
				for _, v := range badConditions[:len(badConditions)*boolToInt(strings.Contains(path, "{id}"))] {
					header := "If-Match: " + v
					if method == http.MethodGet {
						header = "If-None-Match: " + v
					}
					send(method, concrete, "application/json", `{}`, header)
				}
				switch method {
				case http.MethodGet:
					for _, q := range badParams {
						send(method, concrete+"?"+q, "", "")
					}
				case http.MethodPost, http.MethodPatch:
					if strings.Contains(path, "/files") {
						continue // multipart: TestFilesSection and the upload fuzz targets
					}
					for _, body := range badBodies {
						send(method, concrete, "application/json", body)
					}
					for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
						send(method, concrete, ct, `{}`)
					}
					// Oversized (413) and chunked bodies (no Content-Length).
					send(method, concrete, "application/json", `{"text":"`+strings.Repeat("x", 2<<20)+`"}`)
					for _, body := range []string{`{}`, `{"customer_id":`, strings.Repeat(" ", 3<<20)} {
						requests++
						r := chunked(t, s, method, concrete, body, auth)
						if r.status >= 500 {
							t.Errorf("%s %s chunked (%.40q): %d %s", method, concrete, body, r.status, r.body)
						}
					}
					if k == nil || strings.Count(concrete, "/") != strings.Count(resource+slug, "/")+boolToInt(method == http.MethodPatch) {
						continue
					}
					var valid map[string]json.RawMessage
					if err := json.Unmarshal([]byte(k.ExampleWith(ex)), &valid); err != nil {
						t.Fatal(err)
					}
					fields := append(sortedKeys(valid), "zz_not_a_field")
					for _, field := range fields {
						for _, v := range append(badValues, "") {
							body := mutate(valid, field, v)
							if r := send(method, concrete, "application/json", body); r.status == http.StatusCreated && method == http.MethodPost {
								created[slug]++
							}
						}
					}
				}
			}
		}
		// make fuzz: more requests, each field of a valid body given random
		// JSON of random depth (PRAXIS_BAD_INPUT_RANDOM requests, the seed logged).
		if n, _ := strconv.Atoi(os.Getenv("PRAXIS_BAD_INPUT_RANDOM")); n > 0 {
			seed := time.Now().UnixNano()
			t.Logf("random bad input: %d requests, seed %d", n, seed)
			rng := rand.New(rand.NewPCG(uint64(seed), 0))
			kinds := domain.Kinds()
			for range n {
				k := kinds[rng.IntN(len(kinds))]
				if k.ReadOnly {
					continue
				}
				var valid map[string]json.RawMessage
				if err := json.Unmarshal([]byte(k.ExampleWith(ex)), &valid); err != nil {
					t.Fatal(err)
				}
				fields := sortedKeys(valid)
				body := mutate(valid, fields[rng.IntN(len(fields))], randomJSON(rng, 3))
				if r := send(http.MethodPost, resource+k.Slug, "application/json", body); r.status == http.StatusCreated {
					created[k.Slug]++
				}
			}
		}
		// Nothing but the 2xx creates was stored.
		for _, k := range domain.Kinds() {
			n := 0
			for next := ""; ; {
				r := s.request(t, http.MethodGet, resource+k.Slug+"?limit=500"+next, "", "", auth)
				page := r.decode(t)
				data, ok := page["data"].([]any)
				if !ok {
					t.Fatalf("list %s: %d %s", k.Slug, r.status, r.body)
				}
				n += len(data)
				if page["has_more"] != true {
					break
				}
				next = "&cursor=" + url.QueryEscape(page["next_cursor"].(string))
			}
			if want := 1 + created[k.Slug]; n != want {
				t.Errorf("%s holds %d objects, want the seeded one and %d created", k.Slug, n, created[k.Slug])
			}
		}
		t.Logf("%d bad requests, %d of them created an object", requests, sum(created))
	})
}

// chunked sends body without a Content-Length (chunked transfer encoding)
// and checks the answer against the document.
func chunked(t *testing.T, s *server, method, path, body, auth string) reply {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, io.NopCloser(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	name, value, _ := strings.Cut(auth, ": ")
	req.Header.Set(name, value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s chunked: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, body: raw}
	documentOf(t, s).check(t, method, path, r)
	return r
}

// randomJSON is a random JSON value: any type, nested up to depth.
func randomJSON(rng *rand.Rand, depth int) string {
	choices := 8
	if depth == 0 {
		choices = 6
	}
	switch rng.IntN(choices) {
	case 0:
		return "null"
	case 1:
		return strconv.FormatBool(rng.IntN(2) == 0)
	case 2:
		return strconv.FormatInt(rng.Int64N(1<<40)-1<<39, 10)
	case 3:
		return strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64)
	case 4:
		return badValues[rng.IntN(len(badValues))]
	case 5:
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return strconv.Quote(string(b))
	case 6:
		items := make([]string, rng.IntN(4))
		for i := range items {
			items[i] = randomJSON(rng, depth-1)
		}
		return "[" + strings.Join(items, ",") + "]"
	default:
		items := make([]string, rng.IntN(4))
		for i := range items {
			items[i] = strconv.Quote(fmt.Sprint("f", rng.IntN(5))) + ":" + randomJSON(rng, depth-1)
		}
		return "{" + strings.Join(items, ",") + "}"
	}
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func sortedKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mutate writes valid with field set to the raw JSON v (removed when v is empty).
func mutate(valid map[string]json.RawMessage, field, v string) string {
	parts := make([]string, 0, len(valid)+1)
	for _, k := range sortedKeys(valid) {
		if k != field {
			parts = append(parts, fmt.Sprintf("%q:%s", k, valid[k]))
		}
	}
	if v != "" {
		parts = append(parts, fmt.Sprintf("%q:%s", field, v))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
