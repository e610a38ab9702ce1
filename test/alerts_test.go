// Holds docs/contract.md §5 Operations (the chart's alerts and dashboard against a real server's metrics).

package test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/teststorage"
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
// the metrics table of docs/operators/observability.md. Every alert has its
// runbook, docs/operators/runbooks/<alert>.md, and its runbook_url points there.
func TestAlertsAndDashboardReadRealSeries(t *testing.T) {
	t.Parallel()
	rules := alertRules(t)
	readme, err := os.ReadFile("../docs/operators/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]string{} // family → where
	alerts := len(rules)
	for _, r := range rules {
		for _, n := range promQL(t, r.Alert, r.Expr) {
			used[family(n)] = r.Alert
		}
		runbook := "docs/operators/runbooks/" + r.Alert + ".md"
		text, err := os.ReadFile("../" + runbook)
		if err != nil || !strings.HasPrefix(string(text), "# "+r.Alert+"\n") ||
			r.Annotations["runbook_url"] != "https://github.com/praxis-health/praxis/blob/main/"+runbook {
			t.Errorf("%s: no runbook (%s, runbook_url %q)", r.Alert, runbook, r.Annotations["runbook_url"])
		}
		if r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
			t.Errorf("%s: severity and summary are required", r.Alert)
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
	raw, err := os.ReadFile("../charts/praxis/files/dashboard.json")
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
			t.Errorf("%s reads %s, which the server does not serve and docs/operators/observability.md does not name", where, name)
		}
	}
	t.Logf("%d alerts and %d panels read %d series families; %d checked against the live /metrics", alerts, len(dash.Panels), len(used), live)
	if live < 4 {
		t.Errorf("only %d of the %d families read were checked against the live /metrics", live, len(used))
	}
}

// series keeps successive /metrics scrapes in a Prometheus TSDB, each at a
// time the test chooses, for Prometheus's own PromQL engine to evaluate the
// chart's alerts on — what `promtool test rules` does, with real scrapes in
// place of written series.
type series struct {
	t      *testing.T
	db     *teststorage.TestStorage
	engine *promql.Engine
	rules  []alertRule
}

// alertRule is one alert of the chart's PrometheusRule.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// alertRules reads the chart's alerts (charts/praxis/files/alerts.yaml).
func alertRules(t *testing.T) []alertRule {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	raw, err := os.ReadFile("../charts/praxis/files/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	var rules []alertRule
	for _, g := range file.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

func newSeries(t *testing.T) *series {
	s := &series{t: t, db: teststorage.New(t), rules: alertRules(t),
		engine: promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: 10 * time.Second, LookbackDelta: 5 * time.Minute})}
	t.Cleanup(func() { _ = s.engine.Close() })
	return s
}

// scrape reads the server's /metrics and stores every sample at `at`.
func (s *series) scrape(srv *server, at time.Time) {
	s.t.Helper()
	text := srv.requestUndocumented(s.t, http.MethodGet, "/metrics", "", "").body
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		s.t.Fatal(err)
	}
	app := s.db.Appender(context.Background())
	add := func(name string, m *dto.Metric, v float64, extra ...string) {
		b := labels.NewBuilder(labels.EmptyLabels()).Set(model.MetricNameLabel, name)
		for _, l := range m.GetLabel() {
			b.Set(l.GetName(), l.GetValue())
		}
		for i := 0; i+1 < len(extra); i += 2 {
			b.Set(extra[i], extra[i+1])
		}
		if _, err := app.Append(0, b.Labels(), at.UnixMilli(), v); err != nil {
			s.t.Fatal(err)
		}
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					add(name+"_bucket", m, float64(b.GetCumulativeCount()), "le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))
				}
				add(name+"_bucket", m, float64(h.GetSampleCount()), "le", "+Inf")
				add(name+"_count", m, float64(h.GetSampleCount()))
				add(name+"_sum", m, h.GetSampleSum())
			}
		}
	}
	if err := app.Commit(); err != nil {
		s.t.Fatal(err)
	}
}

// firing answers the alerts whose expression has a result at `at` (their
// `for:` aside).
func (s *series) firing(at time.Time) []string {
	s.t.Helper()
	var names []string
	for _, r := range s.rules {
		q, err := s.engine.NewInstantQuery(context.Background(), s.db, nil, r.Expr, at)
		if err != nil {
			s.t.Fatalf("%s: %v", r.Alert, err)
		}
		res := q.Exec(context.Background())
		if res.Err != nil {
			s.t.Fatalf("%s: %v", r.Alert, res.Err)
		}
		if v, err := res.Vector(); err != nil {
			s.t.Fatalf("%s: %v", r.Alert, err)
		} else if len(v) > 0 {
			names = append(names, r.Alert)
		}
		q.Close()
	}
	slices.Sort(names)
	return names
}

// TestAlertsFireOnRealSeries evaluates every alert with Prometheus's engine
// on scrapes of a real server (embedded database, a Redis of its own), one
// a minute on the series' clock: silent through healthy traffic with its
// usual refusals; PraxisSecretGuessing once an address guesses secrets;
// PraxisDependencyUnavailable and PraxisHighErrorRatio once Redis is gone.
func TestAlertsFireOnRealSeries(t *testing.T) {
	t.Parallel()
	redis, addr := startRedis(t)
	b := backend{"embedded+redis", backends[0].databaseURL, func(*testing.T) string { return "redis://" + addr + "/0" }}
	s := startServer(t, b, "PRAXIS_AUTH_MAX_FAILURES=2")
	c := s.newCompany(t, 1<<20)
	customer := s.newCustomer(t, c)
	cl := s.newClient(t, c, "")
	token := s.tokenFor(t, cl)
	wrongSecret := gdtHeaders(company{ID: c.ID, Secret: "wrong"}, customer)

	ser := newSeries(t)
	clock := time.Now().Truncate(time.Minute)

	// A request that really took a second or more (a loaded test machine)
	// makes PraxisHighLatency right, not wrong: the server's time is within
	// the client's.
	var slowest time.Duration
	timed := func(fn func()) {
		began := time.Now()
		fn()
		slowest = max(slowest, time.Since(began))
	}
	tick := func() time.Time {
		clock = clock.Add(time.Minute)
		timed(func() { ser.scrape(s, clock) })
		return clock
	}
	check := func(when string, at time.Time, want ...string) {
		t.Helper()
		got := ser.firing(at)
		if slowest >= time.Second {
			got = slices.DeleteFunc(got, func(a string) bool { return a == "PraxisHighLatency" })
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: firing %v, want %v", when, got, want)
		}
	}

	var at time.Time
	for range 6 {
		s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("befund.pdf", pdfOfSize(100)))
		s.upload(t, "/api/gdt/upload", wrongSecret, filePart("befund.pdf", pdfOfSize(100)))
		timed(func() { s.getCompany(t, token) })
		timed(func() { s.getCompany(t, "not-a-token") })
		timed(func() { s.tokenFor(t, cl) })
		at = tick()
	}
	check("healthy traffic", at)

	for range 30 {
		s.upload(t, "/api/gdt/upload", wrongSecret, filePart("befund.pdf", pdfOfSize(100)))
	}
	tick()
	check("an address guessing upload secrets", tick(), "PraxisSecretGuessing")

	redis.kill()
	for range 2 {
		for range 40 {
			timed(func() {
				if r := s.getCompany(t, token); r.status != http.StatusServiceUnavailable {
					t.Fatalf("with Redis gone: %d", r.status)
				}
			})
		}
		at = tick()
	}
	check("Redis gone", at, "PraxisDependencyUnavailable", "PraxisHighErrorRatio", "PraxisSecretGuessing")
}
