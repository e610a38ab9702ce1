// Holds docs/contract.md §10 Releases and deprecation.

package test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
)

// TestAPILifecycle: the release is named on the document and every answer;
// the notes are served as JSON (checked against their schema in the
// document) and as an Atom feed a real parser reads; walking every
// operation of the document, only the deprecated one answers Deprecation,
// Sunset and Link; its calls are counted per client, in the store and the
// metrics.
func TestAPILifecycle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		c := s.newCompany(t, 1<<20)
		cl := s.newClient(t, c, "")
		token := s.tokenFor(t, cl)
		auth := "Authorization: Bearer " + token

		list := s.request(t, http.MethodGet, "/api/oauth/v2/releases", "", "")
		var releases struct {
			Current string `json:"current"`
			Data    []struct {
				Date    string `json:"date"`
				Summary string `json:"summary"`
				Changes []struct {
					Kind   string `json:"kind"`
					Sunset string `json:"sunset"`
				} `json:"changes"`
			} `json:"data"`
		}
		if err := json.Unmarshal(list.body, &releases); err != nil || len(releases.Data) < 2 {
			t.Fatalf("releases: %v %s", err, list.body)
		}
		info := documentOf(t, s).doc["info"].(map[string]any)
		if releases.Current != releases.Data[0].Date || info["version"] != releases.Current || list.header.Get("Praxis-Api-Release") != releases.Current {
			t.Errorf("current %s, newest %s, info.version %v, header %q: want one release", releases.Current, releases.Data[0].Date,
				info["version"], list.header.Get("Praxis-Api-Release"))
		}
		one := s.request(t, http.MethodGet, "/api/oauth/v2/releases/"+releases.Current, "", "")
		if one.status != http.StatusOK || !bytes.Contains(one.body, []byte(releases.Data[0].Summary)) {
			t.Errorf("one release: %d %s", one.status, one.body)
		}
		if r := s.request(t, http.MethodGet, "/api/oauth/v2/releases/2001-01-01", "", ""); r.status != http.StatusNotFound {
			t.Errorf("a release that never was: %d", r.status)
		}

		atom := s.requestUndocumented(t, http.MethodGet, "/api/oauth/v2/releases.atom", "", "")
		feed, err := gofeed.NewParser().ParseString(string(atom.body))
		if err != nil {
			t.Fatalf("the Atom feed does not parse: %v\n%s", err, atom.body)
		}
		if feed.FeedType != "atom" || len(feed.Items) != len(releases.Data) || !strings.Contains(feed.Items[0].Title, releases.Current) ||
			feed.Items[0].UpdatedParsed == nil || !strings.HasPrefix(feed.Items[0].Link, s.url+"/api/oauth/v2/releases/") {
			t.Errorf("feed %s with %d entries (want %d), first %q updated %v link %q", feed.FeedType, len(feed.Items), len(releases.Data),
				feed.Items[0].Title, feed.Items[0].UpdatedParsed, feed.Items[0].Link)
		}

		// Every operation of the document, called with a token of every scope.
		deprecated := "GET /api/oauth/v2/resource/company"
		var announced []string
		for path, item := range documentOf(t, s).doc["paths"].(map[string]any) {
			for method := range item.(map[string]any) {
				if method == "parameters" {
					continue
				}
				target := strings.NewReplacer("{id}", "019cd6df-a538-78f7-9da1-494c73cf256d", "{date}", releases.Current).Replace(path)
				r := s.requestUndocumented(t, strings.ToUpper(method), target, "application/json", "{}", auth)
				if r.header.Get("Praxis-Api-Release") != releases.Current {
					t.Errorf("%s %s: no Praxis-Api-Release", method, path)
				}
				if r.header.Get("Deprecation") != "" {
					announced = append(announced, strings.ToUpper(method)+" "+path)
					if !strings.HasPrefix(r.header.Get("Deprecation"), "@") || r.header.Get("Sunset") == "" ||
						!strings.Contains(r.header.Get("Link"), `rel="deprecation"`) {
						t.Errorf("%s %s: Deprecation %q Sunset %q Link %q", method, path, r.header.Get("Deprecation"), r.header.Get("Sunset"), r.header.Get("Link"))
					}
				}
			}
		}
		sort.Strings(announced)
		if strings.Join(announced, ",") != deprecated {
			t.Errorf("answers with Deprecation: %v, want only %s", announced, deprecated)
		}
		company := s.getCompany(t, token).decode(t)
		if company["storage_quota_bytes"] != company["storage_quota"] || company["storage_used_bytes"] != company["storage_used"] {
			t.Errorf("the replacements differ from the deprecated fields: %v", company)
		}

		var counts struct {
			Data []struct {
				ClientID  string `json:"client_id"`
				Operation string `json:"operation"`
				Calls     int64  `json:"calls"`
			} `json:"data"`
		}
		// The server adds its counts to the database every 5 seconds.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(250 * time.Millisecond) {
			s.praxis(t, &counts, "admin", "deprecations", "--company", c.ID, "--json")
			if len(counts.Data) > 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(counts.Data) != 1 || counts.Data[0].ClientID != cl.ID || counts.Data[0].Operation != deprecated || counts.Data[0].Calls != 2 {
			t.Errorf("admin deprecations: %+v, want 2 calls of %s by %s", counts.Data, deprecated, cl.ID)
		}
		metrics := s.requestUndocumented(t, http.MethodGet, "/metrics", "", "")
		if !bytes.Contains(metrics.body, []byte(`praxis_api_deprecated_calls_total{operation="GET /api/oauth/v2/resource/company"`)) {
			t.Error("no praxis_api_deprecated_calls_total for the company profile in /metrics")
		}
		if bytes.Contains(metrics.body, []byte(cl.ID)) {
			t.Error("a client id reached the metrics")
		}
	})
}
