package test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"
)

// promQL parses a chart expression and answers the series it reads.
func promQL(t *testing.T, where, expr string) []string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %v\n%s", where, err, expr)
		return nil
	}
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if v, ok := n.(*parser.VectorSelector); ok && v.Name != "" {
			names = append(names, v.Name)
		}
		return nil
	})
	return names
}

// family is the metric family a series belongs to: a histogram's _bucket,
// _count and _sum are its family's.
func family(series string) string {
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if f, ok := strings.CutSuffix(series, suffix); ok {
			return f
		}
	}
	return series
}

// TestAlertsAndDashboardReadRealSeries: every expression of the chart's
// alerts and dashboard parses as PromQL and reads a series the server
// really serves at /metrics — those traffic makes here, read from a running
// server; the failure counters, which no healthy run increments, must be in
// the README's metrics table. Every alert has its runbook in the README.
func TestAlertsAndDashboardReadRealSeries(t *testing.T) {
	t.Parallel()
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	raw, err := os.ReadFile("../charts/praxis/files/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]string{} // family → where
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts++
			for _, n := range promQL(t, r.Alert, r.Expr) {
				used[family(n)] = r.Alert
			}
			anchor := strings.ToLower(r.Alert)
			if !strings.HasSuffix(r.Annotations["runbook_url"], "#"+anchor) || !strings.Contains(string(readme), "#### "+r.Alert+"\n") {
				t.Errorf("%s: no runbook (README section %q, runbook_url %q)", r.Alert, "#### "+r.Alert, r.Annotations["runbook_url"])
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s: severity and summary are required", r.Alert)
			}
		}
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	raw, err = os.ReadFile("../charts/praxis/files/dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			// $job is the dashboard's variable: any job for the parser.
			for _, n := range promQL(t, p.Title, strings.ReplaceAll(target.Expr, "$job", ".*")) {
				used[family(n)] = p.Title
			}
		}
	}
	if alerts < 6 || len(dash.Panels) < 8 {
		t.Fatalf("%d alerts, %d panels", alerts, len(dash.Panels))
	}

	// A server with traffic of every kind a healthy run has.
	s, c, customer := withPatient(t, backends[0], 1<<20)
	s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("befund.pdf", pdfOfSize(100)))
	s.upload(t, "/api/gdt/upload", gdtHeaders(company{ID: c.ID, Secret: "wrong"}, customer), filePart("befund.pdf", pdfOfSize(100)))
	cl := s.newClient(t, c, "")
	s.getCompany(t, s.tokenFor(t, cl))
	s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(oauthClient{ID: cl.ID, Secret: "wrong"}))
	time.Sleep(100 * time.Millisecond)
	metrics := string(s.requestUndocumented(t, http.MethodGet, "/metrics", "", "").body)
	served := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllStringSubmatch(metrics, -1) {
		served[m[1]] = true
	}
	live := 0
	for name, where := range used {
		switch {
		case served[name]:
			live++
		case strings.Contains(string(readme), "`"+name+"`") && strings.HasPrefix(name, "praxis_"):
			// documented, and only counted when something fails or happens (webhooks, audit failures)
		default:
			t.Errorf("%s reads %s, which the server does not serve and the README does not name", where, name)
		}
	}
	t.Logf("%d alerts and %d panels read %d series families; %d checked against the live /metrics", alerts, len(dash.Panels), len(used), live)
	if live < 4 {
		t.Errorf("only %d of the %d families read were checked against the live /metrics", live, len(used))
	}
}
