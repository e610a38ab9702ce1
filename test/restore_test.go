// Holds docs/contract.md §6 Import and export: one practice restored to a
// point in time (praxis admin company restore).

package test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

// pointInTime takes a copy of a server's database as it is when mark is
// called; side answers the copy's URL (made then, for a backup's restore).
type pointInTime struct {
	mark func(t *testing.T, s *server)
	side func(t *testing.T, s *server) string
}

// sqliteCopy is the embedded mode's backup: VACUUM INTO a file beside it,
// while the server runs.
func sqliteCopy() pointInTime {
	var path string
	return pointInTime{
		mark: func(t *testing.T, s *server) {
			path = filepath.Join(t.TempDir(), "praxis-at-t.db")
			db := s.openDB(t)
			defer db.Close()
			if _, err := db.ExecContext(context.Background(), "VACUUM INTO ?", path); err != nil {
				t.Fatal(err)
			}
		},
		side: func(*testing.T, *server) string { return "sqlite:" + path },
	}
}

// pgBackRest is PostgreSQL's: a cluster of the test's own archiving its
// WAL with pgBackRest and a full backup taken before the test writes; mark
// notes the time, side restores the backup to that time (--type=time) on
// a side instance and promotes it, as docs/commands.md shows the operator.
type pgBackRest struct {
	pg       *privatePostgres
	bin      string
	conf     string
	target   string
	sideDirs []string
}

func startBackedUpPostgres(t *testing.T) (*pgBackRest, string) {
	t.Helper()
	bin := needTool(t, "pgbackrest")
	if os.Geteuid() != 0 {
		t.Skip("the point-in-time restore runs its own cluster as the postgres user: it needs root")
	}
	b := &pgBackRest{bin: bin}
	var url string
	b.pg, url = startPostgresWith(t, func(dir string) []string {
		b.conf = filepath.Join(dir, "pgbackrest.conf")
		return []string{"wal_level = replica", "archive_mode = on",
			fmt.Sprintf("archive_command = '%s --config=%s --stanza=praxis archive-push %%p'", bin, b.conf)}
	})
	dir := b.pg.dir
	conf := fmt.Sprintf("[global]\nrepo1-path=%s/repo\nlog-path=%s\nlock-path=%s/lock\nspool-path=%s/spool\nlog-level-console=warn\nlog-level-file=off\nstart-fast=y\n"+
		"repo1-retention-full=1\n\n[praxis]\npg1-path=%s/data\npg1-port=%s\npg1-socket-path=%s\npg1-user=postgres\n", dir, dir, dir, dir, dir, b.pg.port, dir)
	if err := os.WriteFile(b.conf, []byte(conf), 0o644); err != nil { //nolint:gosec // read by the postgres user
		t.Fatal(err)
	}
	b.run(t, "stanza-create")
	b.run(t, "backup", "--type=full")
	return b, url
}

func (b *pgBackRest) run(t *testing.T, args ...string) {
	t.Helper()
	full := append([]string{"-u", "postgres", "--", b.bin, "--config=" + b.conf, "--stanza=praxis"}, args...)
	if out, err := exec.Command("runuser", full...).CombinedOutput(); err != nil {
		t.Fatalf("pgbackrest %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (b *pgBackRest) pointInTime() pointInTime {
	return pointInTime{
		mark: func(t *testing.T, s *server) {
			db := s.openDB(t)
			defer db.Close()
			if err := db.NewRaw("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'").Scan(context.Background(), &b.target); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the writes after T commit after it
		},
		side: func(t *testing.T, _ *server) string {
			b.run(t, "check") // switches the WAL and waits for it to be archived: T lies within the archive
			side := &privatePostgres{dir: filepath.Join(b.pg.dir, fmt.Sprintf("side%d", len(b.sideDirs))), pgCtl: b.pg.pgCtl, host: "127.0.0.1"}
			b.sideDirs = append(b.sideDirs, side.dir)
			_, side.port, _ = strings.Cut(testenv.FreeAddr(t), ":")
			if out, err := exec.Command("runuser", "-u", "postgres", "--", "mkdir", "-m", "700", side.dir, filepath.Join(side.dir, "data")).CombinedOutput(); err != nil {
				t.Fatalf("mkdir: %v %s", err, out)
			}
			b.run(t, "restore", "--type=time", "--target="+b.target, "--target-action=promote", "--pg1-path="+filepath.Join(side.dir, "data"))
			// The side instance archives nothing into production's repository.
			auto, err := os.OpenFile(filepath.Join(side.dir, "data", "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = fmt.Fprintln(auto, "archive_mode = off")
			_ = auto.Close()
			side.start(t)
			t.Cleanup(func() { side.stop(t) })
			url := "postgres://postgres@127.0.0.1:" + side.port + "/postgres?sslmode=disable"
			eventually(t, 60*time.Second, "the side instance is promoted", func() bool {
				db, err := sqlstore.Open(url)
				if err != nil {
					return false
				}
				defer db.Close()
				inRecovery := true
				return db.NewRaw("SELECT pg_is_in_recovery()").Scan(context.Background(), &inRecovery) == nil && !inRecovery
			})
			return url
		},
	}
}

// TestRestoreCompany: a practice's day of appointments deleted, a patient
// renamed and an open device order cancelled after T; restored from a copy
// of the database at T (on PostgreSQL, pgBackRest's point-in-time restore
// of a backup) the appointments come back and the patient's name with them
// — as new versions the sync feed lists after a client's cursor and a
// webhook receiver gets — while what was made since T stays, an
// appointment whose time was booked since and the order are reported, not
// written; a dry run writes nothing; every row of another practice
// (its digests on PostgreSQL) is untouched; a copy that is no praxis
// database, a company the copy does not hold and an unknown section are
// refused.
func TestRestoreCompany(t *testing.T) {
	t.Parallel()
	for _, run := range []struct {
		name  string
		start func(t *testing.T) (backend, pointInTime)
	}{
		{"embedded", func(*testing.T) (backend, pointInTime) { return backends[0], sqliteCopy() }},
		{"postgres", func(t *testing.T) (backend, pointInTime) {
			b, url := startBackedUpPostgres(t)
			return backend{"postgres", func(*testing.T) string { return url }, func(t *testing.T) string { return testenv.RedisURL(t) }}, b.pointInTime()
		}},
	} {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel()
			b, copyAt := run.start(t)
			restoreDrill(t, b, copyAt)
		})
	}
}

func restoreDrill(t *testing.T, b backend, copyAt pointInTime) {
	s := startServer(t, b, webhookEnv(t, "1")...)
	p, other := newPractice(t, s), newPractice(t, s)
	admin := s.tokenFor(t, s.newClient(t, p.company, everyScope()))
	rcv := newReceiver(t)
	rcv.trust(t, s.register(t, admin, rcv.srv.URL, "*").Secret)
	appointment := func(p practice, at string) string {
		body := fmt.Sprintf(`{"customer_id":%d,"user_id":%q,"location_id":%q,"service_id":%q,"start":"2027-03-10T%s:00+01:00","end":"2027-03-10T%s:30+01:00","note":null}`,
			p.customer, p.doctor, p.location, p.service, at, at[:3]+"2"+at[4:])
		r := p.post(t, "appointments", body)
		if r.status != http.StatusCreated {
			t.Fatalf("appointment at %s: %d %s", at, r.status, r.body)
		}
		return fmt.Sprint(r.decode(t)["id"])
	}
	// The day: 08:00 is deleted by an import after T, the rest cancelled.
	day := []string{appointment(p, "09:00"), appointment(p, "10:00"), appointment(p, "11:00"), appointment(p, "08:00")}
	jakob := s.create(t, admin, "customers", `{"first_name":"Jakob","last_name":"Gruber","birth_date":"1975-06-01"}`)
	order := s.create(t, admin, "device-orders", p.example(domain.KindOf("device-orders"), ""))
	appointment(other, "09:00")

	copyAt.mark(t, s)

	for _, id := range day[:3] {
		if r := p.post(t, "appointments/"+id+"/cancel", `{"reason":"customer_request","note":"storniert"}`); r.status != http.StatusOK {
			t.Fatalf("cancel %s: %d %s", id, r.status, r.body)
		}
	}
	deletion := filepath.Join(t.TempDir(), "delete.ndjson")
	if err := os.WriteFile(deletion, []byte(`{"section":"appointments","id":"`+day[3]+`","deleted":true}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.praxis(t, nil, "admin", "import", "--company", p.company.ID, deletion)
	if r := s.requestUndocumented(t, http.MethodPatch, resource+"customers/"+jakob, "application/merge-patch+json", `{"last_name":"Gruber-Huber"}`, p.auth); r.status != http.StatusOK {
		t.Fatalf("rename: %d %s", r.status, r.body)
	}
	if r := p.post(t, "device-orders/"+order+"/cancel", ""); r.status != http.StatusOK {
		t.Fatalf("cancel the order: %d %s", r.status, r.body)
	}
	booked := appointment(p, "09:00") // into the time freed at 9
	lena := s.create(t, admin, "customers", `{"first_name":"Lena","last_name":"Wagner","birth_date":"1990-05-17"}`)
	appointment(other, "10:00") // the other practice's day goes on
	// Where a sync client stands before the restore: at the end of the feed.
	p.listed(t, "appointments", booked)
	next := fmt.Sprint(p.get(t, "appointments?limit=100").decode(t)["next_cursor"])

	source := copyAt.side(t, s)
	db := s.openDB(t)
	defer db.Close()
	otherBefore, otherDigests := companyRows(t, db, other.company.ID)
	type report struct {
		Recreated map[string]int `json:"recreated"`
		Reverted  map[string]int `json:"reverted"`
		Unchanged int            `json:"unchanged"`
		Conflicts []struct {
			Section, ID, Reason string
		} `json:"conflicts"`
		DryRun bool `json:"dry_run"`
	}
	restore := []string{"admin", "company", "restore", "--from", source, "--company", p.company.ID, "--json"}
	check := func(r report, dry bool) {
		t.Helper()
		if !maps.Equal(r.Recreated, map[string]int{"appointments": 1}) || !maps.Equal(r.Reverted, map[string]int{"appointments": 2, "customers": 1}) || r.DryRun != dry {
			t.Errorf("restore (dry %v): %+v", dry, r)
		}
		got := map[string]string{}
		for _, c := range r.Conflicts {
			got[c.Section+" "+c.ID] = c.Reason
		}
		if len(got) != 2 || !strings.Contains(got["appointments "+day[0]], "booked since by appointment "+booked) ||
			!strings.Contains(got["device-orders "+order], "was open at the time and is cancelled now") {
			t.Errorf("conflicts (dry %v): %v", dry, got)
		}
	}
	var dry report
	s.praxis(t, &dry, append(restore, "--dry-run")...)
	check(dry, true)
	if r := p.get(t, "appointments/"+day[3]); r.status != http.StatusNotFound {
		t.Errorf("after the dry run: %d %s", r.status, r.body)
	}
	// Another process's import of the practice holds its lease: the restore
	// and another import are refused (a dry run needs none); once that lease
	// has run out, the restore takes it over.
	lease := map[string]any{"company_id": p.company.ID, "holder": "praxis-7 pid 41 9f3c", "purpose": "import",
		"acquired_at": time.Now().UnixMilli(), "expires_at": time.Now().Add(time.Minute).UnixMilli()}
	if _, err := db.NewInsert().Model(&lease).TableExpr("company_leases").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{restore, {"admin", "import", "--company", p.company.ID, deletion}} {
		if _, stderr, code := praxisIn(t, s.env, args...); code != 1 || !strings.Contains(stderr, "another import of company "+p.company.ID+" is running (praxis-7 pid 41 9f3c") {
			t.Errorf("%v while another holds the lease: exit %d, %s", args[:3], code, stderr)
		}
	}
	s.praxis(t, &dry, append(restore, "--dry-run")...)
	check(dry, true)
	if _, err := db.NewUpdate().TableExpr("company_leases").Set("expires_at = ?", time.Now().Add(-time.Second).UnixMilli()).
		Where("holder = ?", "praxis-7 pid 41 9f3c").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	var done report
	s.praxis(t, &done, restore...)
	check(done, false)
	if n, err := db.NewSelect().TableExpr("company_leases").Where("company_id = ?", p.company.ID).Count(context.Background()); err != nil || n != 0 {
		t.Errorf("leases left after the restore: %d %v", n, err)
	}

	// Each restored object is at version 3: made, changed (cancelled or
	// deleted) after T, restored.
	for _, id := range day[1:] {
		r := p.get(t, "appointments/"+id)
		if r.status != http.StatusOK {
			t.Fatalf("restored appointment %s: %d %s", id, r.status, r.body)
		}
		if a := r.decode(t); a["version"] != 3.0 || a["status"] != "booked" {
			t.Errorf("appointment %s: version %v, status %v, want 3 and booked", id, a["version"], a["status"])
		}
	}
	if status := p.get(t, "appointments/"+day[0]).decode(t)["status"]; status != "cancelled" {
		t.Errorf("the appointment whose time was booked since: %v", status)
	}
	if r := p.get(t, "appointments/"+booked); r.status != http.StatusOK {
		t.Errorf("the appointment booked since: %d", r.status)
	}
	if name := p.get(t, "customers/"+jakob).decode(t)["last_name"]; name != "Gruber" {
		t.Errorf("the renamed patient: %v", name)
	}
	if r := p.get(t, "customers/"+lena); r.status != http.StatusOK {
		t.Errorf("the patient made since T: %d", r.status)
	}
	if status := p.get(t, "device-orders/"+order).decode(t)["status"]; status != "cancelled" {
		t.Errorf("the order: %v", status)
	}
	// The sync client following its cursor gets both back as changes.
	eventually(t, 10*time.Second, "the feed after the client's cursor lists the restored objects", func() bool {
		var ids []string
		for _, o := range p.get(t, "appointments?cursor="+next).decode(t)["data"].([]any) {
			ids = append(ids, fmt.Sprint(o.(map[string]any)["id"]))
		}
		return slices.Contains(ids, day[1]) && slices.Contains(ids, day[2]) && slices.Contains(ids, day[3]) && !slices.Contains(ids, day[0])
	})
	eventually(t, 20*time.Second, "the receiver gets the restored appointments", func() bool {
		seen := map[string]bool{}
		for _, e := range rcv.received() {
			if e.Data.Section == "appointments" && e.Data.Version == 3 {
				seen[e.Data.ID] = true
			}
		}
		return seen[day[1]] && seen[day[2]] && seen[day[3]]
	})
	// Running it again finds nothing left to do.
	var again report
	s.praxis(t, &again, restore...)
	if len(again.Recreated)+len(again.Reverted) != 0 || len(again.Conflicts) != 2 {
		t.Errorf("a second restore: %+v", again)
	}
	// One event, the operator's, naming the patients it reached (a dry run
	// and a restore with nothing to do write none).
	events, _ := s.auditEvents(t, admin, "")
	var restores []auditEvent
	for _, e := range events {
		if e.Action == "restore" {
			restores = append(restores, e)
		}
	}
	if len(restores) != 1 || restores[0].Agent.Type != "operator" || restores[0].Outcome.Status != http.StatusOK ||
		!slices.Contains(restores[0].Customers, mustInt(t, jakob)) || !slices.Contains(restores[0].Customers, p.customer) {
		t.Errorf("restore events: %+v", restores)
	}
	otherAfter, otherDigestsAfter := companyRows(t, db, other.company.ID)
	if !maps.Equal(settled(otherAfter), settled(otherBefore)) || !maps.Equal(settled(otherDigestsAfter), settled(otherDigests)) {
		t.Errorf("the other practice's rows changed: %v, want %v", otherAfter, otherBefore)
	}

	// Refusals: nothing written.
	newcomer := s.newCompany(t, 1<<20)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", source, "--company", newcomer.ID}, "the source holds no company " + newcomer.ID},
		{[]string{"--from", source, "--company", "0190a5e0-0000-7000-8000-000000000000"}, "no company 0190a5e0-0000-7000-8000-000000000000 here"},
		{[]string{"--from", source, "--company", p.company.ID, "--sections", "appointments,nonsense"}, `"nonsense" names no section`},
		{[]string{"--from", notPraxis(t, source), "--company", p.company.ID}, "holds no praxis schema"},
	} {
		if _, stderr, code := praxisIn(t, s.env, append([]string{"admin", "company", "restore"}, c.args...)...); code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("restore %v: exit %d, %s", c.args, code, stderr)
		}
	}
}

// notPraxis answers the URL of a database beside source that holds no praxis schema.
func notPraxis(t *testing.T, source string) string {
	t.Helper()
	if path, ok := strings.CutPrefix(source, "sqlite:"); ok {
		empty := filepath.Join(filepath.Dir(path), "empty.db")
		db, err := sqlstore.Open("sqlite:" + empty)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), "CREATE TABLE notes (body text)"); err != nil {
			t.Fatal(err)
		}
		return "sqlite:" + empty
	}
	db, err := sqlstore.Open(source)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), "CREATE DATABASE empty"); err != nil {
		t.Fatal(err)
	}
	return strings.Replace(source, "/postgres?", "/empty?", 1)
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
