// Holds docs/contract.md §9 The operator: a company erased (praxis admin company erase, the retention hold).

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
)

// companyRows walks the schema as an auditor would, by its own query: every
// table with a company_id column, and the company's rows in it, with a
// digest of those rows on PostgreSQL.
func companyRows(t *testing.T, db *bun.DB, company string) (counts map[string]int64, digests map[string]string) {
	t.Helper()
	ctx := context.Background()
	var tables []string
	q := `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'company_id'`
	if db.Dialect().Name() == dialect.SQLite {
		q = `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = 'company_id'`
	}
	if err := db.NewRaw(q).Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	counts, digests = map[string]int64{}, map[string]string{}
	id := uuid.MustParse(company)
	for _, table := range tables {
		var n int64
		if err := db.NewRaw("SELECT count(*) FROM ? WHERE company_id = ?", bun.Ident(table), id).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		counts[table] = n
		if db.Dialect().Name() == dialect.PG {
			var digest *string
			if err := db.NewRaw("SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM ? t WHERE company_id = ?", bun.Ident(table), id).
				Scan(ctx, &digest); err != nil {
				t.Fatal(err)
			}
			if digest != nil {
				digests[table] = *digest
			}
		}
	}
	var own int64
	if err := db.NewRaw("SELECT count(*) FROM companies WHERE id = ?", id).Scan(ctx, &own); err != nil {
		t.Fatal(err)
	}
	counts["companies"] = own
	return counts, digests
}

// storedObjects counts the company's objects in the server's file:// blob store.
func (s *server) storedObjects(company string) int {
	n := 0
	_ = filepath.WalkDir(filepath.Join(s.blobDir, company), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// settled leaves out the tables the webhook dispatcher writes on its own
// (its attempts at the tests' unreachable receivers).
func settled[V any](m map[string]V) map[string]V {
	out := maps.Clone(m)
	delete(out, "webhook_deliveries")
	delete(out, "webhook_endpoints")
	return out
}

// TestEraseCompany: two practices with data in most tables (patients,
// records, an appointment, a device order, a file, a webhook endpoint, a
// keyed write, clients, an invitation, audit events); a retention hold
// refuses the erasure of one; lifted, the erasure ends its tokens, rows and
// stored files — the command's proof and an independent walk of the schema
// and the blob store find nothing — leaves one record, answers the same
// when run again, and leaves the other practice's rows (their digests,
// on PostgreSQL) and its API answers as they were.
func TestEraseCompany(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		key, _ := webhook.NewKey()
		s := startServer(t, b, "PRAXIS_WEBHOOK_KEY="+key)
		fill := func() (practice, string) {
			p := newPractice(t, s)
			hooks := "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, everyScope()))
			for _, w := range []struct {
				section, body string
				headers       []string
			}{
				{"customers", `{"first_name":"Jakob","last_name":"Gruber","birth_date":"1975-06-01"}`, []string{"Idempotency-Key: " + uuid.NewString()}},
				{"appointments", p.example(domain.AppointmentsKind(), ""), nil},
				{"device-orders", p.example(domain.KindOf("device-orders"), ""), nil},
				{"measurements", p.example(domain.KindOf("measurements"), ""), nil},
			} {
				if r := p.post(t, w.section, w.body, w.headers...); r.status != http.StatusCreated {
					t.Fatalf("%s: %d %s", w.section, r.status, r.body)
				}
			}
			if r := s.request(t, http.MethodPost, endpointsPath, "application/json", `{"url":"https://integrator.example/hook","event_types":["*"]}`, hooks); r.status != http.StatusCreated {
				t.Fatalf("endpoint: %d %s", r.status, r.body)
			}
			if r := s.upload(t, "/api/gdt/upload", gdtHeaders(p.company, p.customer), filePart("befund.gdt", gdtFile(p.customer))); r.status != http.StatusOK {
				t.Fatalf("upload: %d %s", r.status, r.Message)
			}
			p.exported(t, p.kickOff(t, "$export"))
			s.praxis(t, nil, "admin", "staff", "invite", "--company", p.company.ID, "--email", "ordination@"+strings.ToLower(p.company.ID[:8])+".example", "--role", "admin", "--json")
			return p, hooks
		}
		a, _ := fill()
		other, otherHooks := fill()
		answers := func() []string {
			var out []string
			for _, path := range []string{"customers", "files", "appointments", "device-orders", "measurements"} {
				r := s.request(t, http.MethodGet, resource+path, "", "", otherHooks)
				if r.status != http.StatusOK {
					t.Fatalf("GET %s: %d %s", path, r.status, r.body)
				}
				out = append(out, string(r.body))
			}
			return out
		}
		db := s.openDB(t)
		defer db.Close()
		before, _ := companyRows(t, db, a.company.ID)
		filled := 0
		for _, n := range before {
			if n > 0 {
				filled++
			}
		}
		if filled < 15 {
			t.Errorf("the practice has rows in %d tables: the test fills too few to prove much: %v", filled, before)
		}
		t.Logf("the practice to erase has rows in %d of %d tables", filled, len(before))
		otherAnswers := answers() // audit events: before the rows are counted
		otherRows, otherDigests := companyRows(t, db, other.company.ID)

		// A hold to the end of tomorrow refuses; nothing changes.
		tomorrow := time.Now().AddDate(0, 0, 1).Format(time.DateOnly)
		var hold struct {
			HeldUntil string `json:"held_until"`
		}
		s.praxis(t, &hold, "admin", "company", "hold", "--company", a.company.ID, "--until", tomorrow, "--json")
		if hold.HeldUntil != tomorrow {
			t.Errorf("hold: %+v, want %s", hold, tomorrow)
		}
		erase := []string{"admin", "company", "erase", "--company", a.company.ID, "--confirm", a.company.ID, "--by", "Betrieb Huber", "--json"}
		if _, stderr, code := praxisIn(t, s.env, erase...); code != 1 || !strings.Contains(stderr, "held until "+tomorrow) {
			t.Errorf("erase under a hold: exit %d, %s", code, stderr)
		}
		if _, stderr, code := praxisIn(t, s.env, "admin", "company", "erase", "--company", a.company.ID, "--json"); code != 1 || !strings.Contains(stderr, "--confirm") {
			t.Errorf("erase without --confirm: exit %d, %s", code, stderr)
		}
		if now, _ := companyRows(t, db, a.company.ID); !maps.Equal(settled(now), settled(before)) {
			t.Errorf("a refused erasure changed rows: %v, want %v", now, before)
		}
		if r := a.get(t, "company"); r.status != http.StatusOK {
			t.Errorf("the held practice's token: %d %s", r.status, r.body)
		}
		s.praxis(t, &hold, "admin", "company", "hold", "--company", a.company.ID, "--json")
		if hold.HeldUntil != tomorrow {
			t.Errorf("hold shown: %+v, want %s", hold, tomorrow)
		}
		s.praxis(t, &hold, "admin", "company", "hold", "--company", a.company.ID, "--clear", "--json")
		if hold.HeldUntil != "" {
			t.Errorf("hold lifted: %+v", hold)
		}

		type erasure struct {
			ErasedAt    time.Time        `json:"erased_at"`
			ErasedBy    string           `json:"erased_by"`
			Rows        int64            `json:"rows_erased"`
			Objects     int64            `json:"objects_erased"`
			AuditSeq    int64            `json:"audit_head_seq"`
			AuditHash   string           `json:"audit_head_hash"`
			Remaining   map[string]int64 `json:"remaining_rows"`
			ObjectsLeft int64            `json:"remaining_objects"`
		}
		var got erasure
		s.praxis(t, &got, erase...)
		var want int64
		for _, n := range before {
			want += n
		}
		if got.ErasedBy != "Betrieb Huber" || got.Rows < want || got.Objects < 2 || got.AuditSeq == 0 || len(got.AuditHash) != 64 || got.ObjectsLeft != 0 {
			t.Errorf("erasure %+v; want %d rows, the upload and the export's files, the audit head", got, want)
		}
		if len(got.Remaining) != len(before) {
			t.Errorf("the command's proof walked %d tables, the test's %d", len(got.Remaining), len(before))
		}
		after, _ := companyRows(t, db, a.company.ID)
		for table, n := range after {
			if n != 0 || got.Remaining[table] != 0 {
				t.Errorf("%s: %d rows of the erased practice left (the proof said %d)", table, n, got.Remaining[table])
			}
		}
		if objects := s.storedObjects(a.company.ID); objects != 0 {
			t.Errorf("%d stored objects of the erased practice left", objects)
		}
		if r := a.get(t, "company"); r.status != http.StatusUnauthorized {
			t.Errorf("the erased practice's token: %d %s", r.status, r.body)
		}
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(a.company, a.customer), filePart("befund.gdt", gdtFile(a.customer))); r.status == http.StatusOK {
			t.Errorf("an upload to the erased practice: %d", r.status)
		}

		var again erasure
		s.praxis(t, &again, erase...)
		if !again.ErasedAt.Equal(got.ErasedAt) || again.Rows != got.Rows || again.Objects != got.Objects {
			t.Errorf("erasing again: %+v, want the first record %+v", again, got)
		}

		rows, digests := companyRows(t, db, other.company.ID)
		if !maps.Equal(settled(rows), settled(otherRows)) || !maps.Equal(settled(digests), settled(otherDigests)) {
			t.Errorf("the other practice's rows changed: %v → %v", otherRows, rows)
		}
		if got := answers(); fmt.Sprint(got) != fmt.Sprint(otherAnswers) {
			t.Errorf("the other practice's answers changed:\n%v\n%v", otherAnswers, got)
		}
		raw, _ := json.Marshal(got)
		t.Logf("erasure: %s", raw)
	})
}
