package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
	"github.com/praxis-health/praxis/ports/porttest"
	"github.com/praxis-health/praxis/test/testenv"
)

func TestRepositoriesSQLite(t *testing.T) {
	t.Parallel()
	porttest.RunRepositorySuite(t, func(t *testing.T) porttest.Repositories {
		return repositories(t, "sqlite:"+filepath.Join(t.TempDir(), "praxis.db"))
	})
}

func TestRepositoriesPostgres(t *testing.T) {
	t.Parallel()
	porttest.RunRepositorySuite(t, func(t *testing.T) porttest.Repositories {
		return repositories(t, testenv.PostgresURL(t))
	})
}

func repositories(t *testing.T, url string) porttest.Repositories {
	t.Helper()
	return repositoriesOn(migrated(t, url))
}

func migrated(t *testing.T, url string) *bun.DB {
	t.Helper()
	db, err := sqlstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := sqlstore.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	// Migrating twice is a no-op: replicas and the Helm hook may both run it.
	if err := sqlstore.Migrate(context.Background(), db); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	return db
}

func repositoriesOn(db *bun.DB) porttest.Repositories {
	return porttest.Repositories{
		Tx:        sqlstore.NewTransactor(db),
		Companies: sqlstore.NewCompanyRepository(db),
		Customers: sqlstore.NewCustomerRepository(db),
		Files:     sqlstore.NewFileRepository(db),
		Clients:   sqlstore.NewClientRepository(db),

		Deprecated:   sqlstore.NewDeprecatedCalls(db),
		AssertionIDs: sqlstore.NewAssertionIDs(db),
		Exports:      sqlstore.NewExportJobs(db),
		Erasures:     sqlstore.NewErasures(db),
	}
}

func TestRecordStoreSQLite(t *testing.T) {
	t.Parallel()
	porttest.RunRecordStoreSuite(t, func(t *testing.T) porttest.RecordRepositories {
		return recordRepositories(t, "sqlite:"+filepath.Join(t.TempDir(), "praxis.db"))
	})
}

func TestRecordStorePostgres(t *testing.T) {
	t.Parallel()
	porttest.RunRecordStoreSuite(t, func(t *testing.T) porttest.RecordRepositories {
		return recordRepositories(t, testenv.PostgresURL(t))
	})
}

func TestPatientIndexBackfillSQLite(t *testing.T) {
	t.Parallel()
	patientIndexBackfill(t, "sqlite:"+filepath.Join(t.TempDir(), "praxis.db"))
}

func TestPatientIndexBackfillPostgres(t *testing.T) {
	t.Parallel()
	patientIndexBackfill(t, testenv.PostgresURL(t))
}

// patientIndexBackfill runs the backfill's suite on one database, whose
// customers of a company it marks unindexed as an upgrade finds them.
func patientIndexBackfill(t *testing.T, url string) {
	db := migrated(t, url)
	repos := porttest.RecordRepositories{Repositories: repositoriesOn(db), Records: sqlstore.NewRecordStore(db), DeviceOrders: sqlstore.NewDeviceOrderStore(db)}
	porttest.RunPatientIndexBackfill(t, func(*testing.T) porttest.RecordRepositories { return repos }, func(t *testing.T, company domain.CompanyID, ids ...string) {
		among := func(column string) string { // every customer of company, or those among ids
			if len(ids) == 0 {
				return "TRUE"
			}
			return column + " IN (" + strings.Join(ids, ",") + ")" // customer numbers, digits only
		}
		if _, err := db.NewUpdate().Table("customers").Set("search_version = 0").Set("search_family = NULL").
			Where("company_id = ?", uuid.UUID(company)).Where(among("id")).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The words: in the row on PostgreSQL, rows of customer_words on SQLite.
		var err error
		if db.Dialect().Name() == dialect.PG {
			_, err = db.NewUpdate().Table("customers").Set("search_words = NULL").Where("company_id = ?", uuid.UUID(company)).
				Where(among("id")).Exec(context.Background())
		} else {
			_, err = db.NewDelete().Table("customer_words").Where("company_id = ?", uuid.UUID(company)).
				Where(among("customer_id")).Exec(context.Background())
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}

func recordRepositories(t *testing.T, url string) porttest.RecordRepositories {
	t.Helper()
	db := migrated(t, url)
	return porttest.RecordRepositories{Repositories: repositoriesOn(db), Records: sqlstore.NewRecordStore(db), DeviceOrders: sqlstore.NewDeviceOrderStore(db)}
}

// TestPostgresRefusesOverlappingOnlineBookings: the exclusion constraint
// beneath the booking's own check. Two online bookings of one user that
// overlap by their buffer are refused by the database; a practice's
// appointment over them, or another user's, is not.
func TestPostgresRefusesOverlappingOnlineBookings(t *testing.T) {
	t.Parallel()
	db := migrated(t, testenv.PostgresURL(t))
	repos := repositoriesOn(db)
	store, tx, ctx := sqlstore.NewRecordStore(db), sqlstore.NewTransactor(db), context.Background()
	company, _, err := domain.NewCompany("Praxis", "", domain.PlanPro, 1000, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := repos.Companies.Create(ctx, company); err != nil {
		t.Fatal(err)
	}
	service := domain.NewObjectID()
	users := []string{domain.NewObjectID(), domain.NewObjectID()}
	location := domain.NewObjectID()
	insert := func(kind, id, payload string) error {
		return tx.InTx(ctx, func(ctx context.Context) error {
			_, err := store.Insert(ctx, company.ID, domain.KindOf(kind), ports.StoredObject{ID: id, Payload: []byte(payload), CreatedAt: time.Now()})
			return err
		})
	}
	if err := insert("services", service, `{"name":"Check-up","duration_minutes":20,"buffer_after_minutes":10}`); err != nil {
		t.Fatal(err)
	}
	appointment := func(user, start, end, source string) error {
		return insert("appointments", domain.NewObjectID(), fmt.Sprintf(`{"title":"x","user_id":%q,"location_id":%q,"service_id":%q,"start":%q,"end":%q,"status":"booked","source":%q}`,
			user, location, service, start, end, source))
	}
	if err := appointment(users[0], "2026-03-10T09:00:00+01:00", "2026-03-10T09:20:00+01:00", domain.BookedOnline); err != nil {
		t.Fatal(err)
	}
	// 09:25 lies inside the first booking's buffer (until 09:30).
	if err := appointment(users[0], "2026-03-10T09:25:00+01:00", "2026-03-10T09:45:00+01:00", domain.BookedOnline); !errors.Is(err, domain.ErrSlotUnavailable) {
		t.Errorf("an overlapping online booking: %v, want ErrSlotUnavailable", err)
	}
	for _, c := range []struct{ user, start, end, source string }{
		{users[0], "2026-03-10T09:30:00+01:00", "2026-03-10T09:50:00+01:00", domain.BookedOnline}, // after the buffer
		{users[1], "2026-03-10T09:00:00+01:00", "2026-03-10T09:20:00+01:00", domain.BookedOnline}, // another user
		{users[0], "2026-03-10T09:00:00+01:00", "2026-03-10T10:00:00+01:00", domain.BookedByAPI},  // the practice overbooks
	} {
		if err := appointment(c.user, c.start, c.end, c.source); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// forEachDialect runs fn on a migrated database of each dialect, SQLite and
// PostgreSQL, in parallel.
func forEachDialect(t *testing.T, fn func(t *testing.T, db *bun.DB)) {
	for name, url := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "praxis.db") },
		"postgres": func(t *testing.T) string { return testenv.PostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, migrated(t, url(t)))
		})
	}
}

func TestAuditLog(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		porttest.RunAuditLogSuite(t, func(*testing.T) porttest.AuditRepositories {
			return porttest.AuditRepositories{
				Repositories: repositoriesOn(db),
				Audit:        sqlstore.NewAuditLog(db),
				Replica:      sqlstore.NewAuditLog(db),
				Corrupt: func(t *testing.T, company domain.CompanyID, seq int64) {
					auditBlock(t, db, company, seq, func(events []byte) []byte {
						at := bytes.Index(events, []byte(`"id":"`)) + len(`"id":"`)
						events[at] ^= 0x01 // one hex digit of the event's id: still JSON, no longer the event sealed
						return events
					})
				},
				Remove: func(t *testing.T, company domain.CompanyID, seq int64) {
					for _, table := range []string{"audit_blocks"} {
						if _, err := db.NewDelete().TableExpr(table).Where("company_id = ?", uuid.UUID(company)).
							Where("first_seq = ?", seq).Exec(context.Background()); err != nil {
							t.Fatal(err)
						}
					}
				},
			}
		})
	})
}

// A customer met once in each of 90 segments (more than a query's growing
// batches of segments read before their largest) is found whole, in
// order, in pages of any size.
func TestAuditFindsACustomerAcrossManySegments(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		ctx, log := context.Background(), sqlstore.NewAuditLog(db)
		company, anna := auditCompany(t, db)
		var want []string
		for range 90 {
			events := make([]audit.Event, 1024) // one segment a block
			for i := range events {
				events[i] = audit.New(time.Now())
				events[i].Agent, events[i].Action, events[i].Section = audit.Agent{Type: audit.AgentClient, ID: "pc_one"}, audit.ActionRead, "customers"
			}
			events[1000].CustomerIDs = []domain.CustomerID{anna}
			want = append(want, events[1000].ID)
			if err := log.Append(ctx, company, events); err != nil {
				t.Fatal(err)
			}
		}
		for _, limit := range []int{7, 100} {
			got := porttest.AuditEventIDs(t, log, company, audit.Query{Customer: &anna, Limit: limit})
			if !slices.Equal(got, want) {
				t.Errorf("%d a page: %d events, want %d in order", limit, len(got), len(want))
			}
		}
	})
}

// auditCompany creates a company and one customer of it.
func auditCompany(t *testing.T, db *bun.DB) (domain.CompanyID, domain.CustomerID) {
	t.Helper()
	repos := repositoriesOn(db)
	company, _ := porttest.NewCompany(t, repos, "Praxis", 1000)
	return company.ID, porttest.NewCustomer(t, repos, company.ID, 0).ID
}

// A sweep removes the customer index of every segment whose blocks all
// went, and keeps that of a segment partly kept: what it names is the
// retention's too.
func TestAuditSweepRemovesTheIndexOfSweptSegments(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		ctx, log := context.Background(), sqlstore.NewAuditLog(db)
		company, anna := auditCompany(t, db)
		event := func(at time.Time) audit.Event {
			e := audit.New(at)
			e.Agent, e.Action, e.Section = audit.Agent{Type: audit.AgentClient, ID: "pc_one"}, audit.ActionRead, "customers"
			e.CustomerIDs = []domain.CustomerID{anna}
			return e
		}
		// 21 old appends of 100 (seqs 1..2100: the last begins at 2001, in
		// the second segment), then a recent one (2101..2101).
		old := time.Now().Add(-4 * 365 * 24 * time.Hour)
		for range 21 {
			events := make([]audit.Event, 100)
			for i := range events {
				events[i] = event(old)
			}
			if err := log.Append(ctx, company, events); err != nil {
				t.Fatal(err)
			}
		}
		if err := log.Append(ctx, company, []audit.Event{event(time.Now())}); err != nil {
			t.Fatal(err)
		}
		segments := func() []int64 {
			var s []int64
			if err := db.NewSelect().TableExpr("audit_customer_segments").Column("segment").Where("company_id = ?", uuid.UUID(company)).
				OrderExpr("segment").Scan(ctx, &s); err != nil {
				t.Fatal(err)
			}
			return s
		}
		if got := fmt.Sprint(segments()); got != "[0 1 2]" {
			t.Fatalf("segments before the sweep: %s", got)
		}
		if n, err := log.Sweep(ctx, company, time.Now().Add(-3*365*24*time.Hour)); err != nil || n != 2100 {
			t.Fatalf("sweep: %d, %v", n, err)
		}
		if got := fmt.Sprint(segments()); got != "[1 2]" {
			t.Errorf("segments after the sweep: %s, want [1 2]", got)
		}
	})
}

// Verification holds the index beside the chain: a block's times moved a
// year back, or a customer's segment row removed, hide events from
// queries while the chain itself is intact — verify names the event.
func TestAuditVerifyHoldsTheIndex(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		ctx, log := context.Background(), sqlstore.NewAuditLog(db)
		company, anna := auditCompany(t, db)
		now := time.Now()
		for range 3 {
			if err := log.Append(ctx, company, readsOf(anna, now, now)); err != nil {
				t.Fatal(err)
			}
		}
		verify := func() error {
			n, err := verifyTrail(t, log, company)
			if err == nil && n != 6 {
				t.Fatalf("verified %d events, want 6", n)
			}
			return err
		}
		if err := verify(); err != nil {
			t.Fatalf("an untouched trail: %v", err)
		}
		var first, last time.Time
		if err := db.NewSelect().TableExpr("audit_blocks").Column("first_at", "last_at").Where("company_id = ?", uuid.UUID(company)).
			Where("first_seq = ?", 3).Scan(ctx, &first, &last); err != nil {
			t.Fatal(err)
		}
		setTimes := func(from, to time.Time) {
			t.Helper()
			if _, err := db.NewUpdate().TableExpr("audit_blocks").Set("first_at = ?", from.UTC()).Set("last_at = ?", to.UTC()).
				Where("company_id = ?", uuid.UUID(company)).Where("first_seq = ?", 3).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		setTimes(first.AddDate(-1, 0, 0), last.AddDate(-1, 0, 0))
		if err := verify(); err == nil || !strings.Contains(err.Error(), "event 3 is indexed under the times") {
			t.Errorf("a block's times moved a year back: %v", err)
		}
		setTimes(first, last)
		if err := verify(); err != nil {
			t.Fatalf("the times put back: %v", err)
		}
		if _, err := db.NewDelete().TableExpr("audit_customer_segments").Where("company_id = ?", uuid.UUID(company)).
			Where("customer_id = ?", int64(anna)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := verify(); err == nil || !strings.Contains(err.Error(), "event 1 is not indexed under one of the customers") {
			t.Errorf("the customer's index rows removed: %v", err)
		}
	})
}

// A group commit's events need not be in time order: the block's times
// bound them all, so a query by time finds each; a block sealed before
// (its first and last event's times) is mended by the migration, which
// verify then passes.
func TestAuditBlockTimesBoundTheirEvents(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		ctx, log := context.Background(), sqlstore.NewAuditLog(db)
		company, anna := auditCompany(t, db)
		base := time.Now().UTC().Truncate(time.Millisecond)
		events := readsOf(anna, base.Add(time.Second), base, base.Add(500*time.Millisecond))
		if err := log.Append(ctx, company, events); err != nil {
			t.Fatal(err)
		}
		verify := func() error {
			_, err := verifyTrail(t, log, company)
			return err
		}
		if err := verify(); err != nil {
			t.Fatalf("events out of time order in one block: %v", err)
		}
		early := base.Add(-time.Millisecond)
		until := base.Add(time.Millisecond)
		if got := porttest.AuditEventIDs(t, log, company, audit.Query{From: &early, To: &until, Limit: 10}); len(got) != 1 || got[0] != events[1].ID {
			t.Errorf("the earliest event by its time: %v", got)
		}
		// As blocks were sealed before: the first and the last event's times.
		if _, err := db.NewUpdate().TableExpr("audit_blocks").Set("first_at = ?", events[0].Time).Set("last_at = ?", events[2].Time).
			Where("company_id = ?", uuid.UUID(company)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := verify(); err == nil {
			t.Fatal("verify passes a block whose times hide an event")
		}
		dir := "sqlite"
		if db.Dialect().Name() == dialect.PG {
			dir = "postgres"
		}
		mend, err := os.ReadFile(filepath.Join("migrations", dir, "20261126000200_audit_block_times.tx.up.sql"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(mend)); err != nil {
			t.Fatalf("the migration's repair: %v", err)
		}
		if err := verify(); err != nil {
			t.Errorf("after the migration's repair: %v", err)
		}
		if got := porttest.AuditEventIDs(t, log, company, audit.Query{From: &early, To: &until, Limit: 10}); len(got) != 1 {
			t.Errorf("the earliest event by its time after the repair: %v", got)
		}
	})
}

// readsOf is one read of customer's data at each time, as a client's.
func readsOf(customer domain.CustomerID, at ...time.Time) []audit.Event {
	events := make([]audit.Event, len(at))
	for i, t := range at {
		events[i] = audit.New(t)
		events[i].Agent, events[i].Action, events[i].Section = audit.Agent{Type: audit.AgentClient, ID: "pc_one"}, audit.ActionRead, "customers"
		events[i].CustomerIDs = []domain.CustomerID{customer}
	}
	return events
}

// verifyTrail verifies company's whole chain as `praxis admin audit verify` does.
func verifyTrail(t *testing.T, log *sqlstore.AuditLog, company domain.CompanyID) (int64, error) {
	t.Helper()
	ctx := context.Background()
	from, head, err := log.Chain(ctx, company)
	if err != nil {
		t.Fatal(err)
	}
	return audit.Verify(company, from, head, func(fn func(audit.Sealed) error) error { return log.Walk(ctx, company, head.Seq, fn) })
}

// auditBlock changes the stored events of the block that begins at seq.
func auditBlock(t *testing.T, db *bun.DB, company domain.CompanyID, seq int64, change func([]byte) []byte) {
	t.Helper()
	var events []byte
	q := db.NewSelect().TableExpr("audit_blocks").Column("events").Where("company_id = ?", uuid.UUID(company)).Where("first_seq = ?", seq)
	if err := q.Scan(context.Background(), &events); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewUpdate().TableExpr("audit_blocks").Set("events = ?", change(events)).Where("company_id = ?", uuid.UUID(company)).
		Where("first_seq = ?", seq).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestWebhooks(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		porttest.RunWebhookSuite(t, func(*testing.T) porttest.WebhookRepositories {
			return porttest.WebhookRepositories{Repositories: repositoriesOn(db), Records: sqlstore.NewRecordStore(db),
				Endpoints: sqlstore.NewWebhookEndpoints(db), Feed: sqlstore.NewChangeFeed(db)}
		})
	})
}

func TestStaff(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		porttest.RunStaffSuite(t, func(*testing.T) porttest.StaffRepositories {
			return porttest.StaffRepositories{Repositories: repositoriesOn(db), Staff: sqlstore.NewStaff(db)}
		})
	})
}

// TestReadinessWantsWrites: /readyz's database check fails on a database
// that answers but takes no writes, as a standby does (a ping passes
// there), and passes on one that takes them.
func TestReadinessWantsWrites(t *testing.T) {
	t.Parallel()
	url := testenv.PostgresURL(t)
	db := migrated(t, url)
	ctx := context.Background()
	if err := (sqlstore.HealthCheck{DB: db}).Check(ctx); err != nil {
		t.Fatalf("a primary: %v", err)
	}
	var name string
	if err := db.NewRaw("SELECT current_database()").Scan(ctx, &name); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ALTER DATABASE "+name+" SET default_transaction_read_only = on"); err != nil {
		t.Fatal(err)
	}
	readOnly, err := sqlstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = readOnly.Close() }()
	if err := readOnly.PingContext(ctx); err != nil {
		t.Fatalf("the read-only database does not answer a ping: %v", err)
	}
	if err := (sqlstore.HealthCheck{DB: readOnly}).Check(ctx); !errors.Is(err, sqlstore.ErrReadOnly) {
		t.Errorf("a read-only database: %v, want ErrReadOnly", err)
	}
	lite := migrated(t, "sqlite:"+filepath.Join(t.TempDir(), "praxis.db"))
	if err := (sqlstore.HealthCheck{DB: lite}).Check(ctx); err != nil {
		t.Errorf("SQLite: %v", err)
	}
}
