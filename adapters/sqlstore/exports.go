package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/bulk"
	"github.com/praxis-health/praxis/ports"
)

// ExportJobs keeps the FHIR Bulk Data exports and the names of their files.
type ExportJobs struct{ db *bun.DB }

var _ ports.ExportJobs = (*ExportJobs)(nil)

// NewExportJobs returns the store of db.
func NewExportJobs(db *bun.DB) *ExportJobs { return &ExportJobs{db: db} }

type exportRow struct {
	bun.BaseModel `bun:"table:fhir_exports,alias:fhir_exports"`

	CompanyID       uuid.UUID  `bun:"company_id,pk"`
	ID              uuid.UUID  `bun:"id,pk"`
	ClientID        string     `bun:"client_id"`
	Scopes          string     `bun:"scopes"`
	Patients        bool       `bun:"patients"`
	Types           string     `bun:"types"`
	Since           *time.Time `bun:"since"`
	SinceCut        int64      `bun:"since_cut"`
	Cut             int64      `bun:"cut"`
	TransactionTime time.Time  `bun:"transaction_time"`
	Request         string     `bun:"request"`
	State           string     `bun:"state"`
	Progress        string     `bun:"progress"`
	Error           string     `bun:"error"`
	Attempts        int        `bun:"attempts"`
	LeaseOwner      *string    `bun:"lease_owner"`
	LeaseUntil      *time.Time `bun:"lease_until"`
	CreatedAt       time.Time  `bun:"created_at"`
	CompletedAt     *time.Time `bun:"completed_at"`
	ExpiresAt       time.Time  `bun:"expires_at"`
}

type exportFileRow struct {
	bun.BaseModel `bun:"table:fhir_export_files,alias:fhir_export_files"`

	CompanyID uuid.UUID `bun:"company_id,pk"`
	ExportID  uuid.UUID `bun:"export_id"`
	Name      string    `bun:"name,pk"`
	Type      string    `bun:"type"`
	Count     int64     `bun:"count"`
	Seq       int       `bun:"seq"`
}

func rowOfExport(j bulk.Job) exportRow {
	r := exportRow{
		CompanyID: uuid.UUID(j.Company), ID: j.ID, ClientID: string(j.Client), Scopes: j.Scopes.String(),
		Patients: j.Patients, Types: strings.Join(j.Types, ","), Since: utcPtr(j.Since), SinceCut: j.SinceCut, Cut: j.Cut,
		TransactionTime: j.TransactionTime.UTC(), Request: j.Request, State: string(j.State), Progress: j.Progress,
		Error: j.Error, Attempts: j.Attempts, CreatedAt: j.CreatedAt.UTC(), CompletedAt: utcPtr(j.CompletedAt),
		ExpiresAt: j.ExpiresAt.UTC(),
	}
	if j.Owner != "" {
		r.LeaseOwner, r.LeaseUntil = &j.Owner, utcPtr(&j.LeaseUntil)
	}
	return r
}

func (r exportRow) job() bulk.Job {
	j := bulk.Job{
		ID: r.ID, Company: domain.CompanyID(r.CompanyID), Client: domain.ClientID(r.ClientID),
		Patients: r.Patients, Since: r.Since, SinceCut: r.SinceCut, Cut: r.Cut, TransactionTime: r.TransactionTime,
		Request: r.Request, State: bulk.State(r.State), Progress: r.Progress, Error: r.Error,
		Attempts: r.Attempts, CreatedAt: r.CreatedAt, CompletedAt: r.CompletedAt, ExpiresAt: r.ExpiresAt,
	}
	for s := range strings.FieldsSeq(r.Scopes) {
		j.Scopes = append(j.Scopes, domain.Scope(s))
	}
	if r.Types != "" {
		j.Types = strings.Split(r.Types, ",")
	}
	if r.LeaseOwner != nil {
		j.Owner = *r.LeaseOwner
	}
	if r.LeaseUntil != nil {
		j.LeaseUntil = *r.LeaseUntil
	}
	return j
}

func (s *ExportJobs) Horizon(ctx context.Context) (int64, error) {
	db := conn(ctx, s.db)
	var edge int64
	var err error
	if db.Dialect().Name() == dialect.PG {
		// Every transaction below the snapshot's xmin has ended, and every
		// later one is stamped above it (changes.go).
		err = acrossCompanies(db, "the change clock is one for all companies").
			NewRaw("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint").Scan(ctx, &edge)
	} else {
		// One writer at a time: the clock's value is the last committed stamp.
		err = acrossCompanies(db, "the change clock is one for all companies").
			NewRaw("SELECT value + 1 FROM change_clock").Scan(ctx, &edge)
	}
	return edge, translate(err)
}

func (s *ExportJobs) Create(ctx context.Context, job bulk.Job) error {
	return translate(inTx(ctx, s.db, func(ctx context.Context, tx bun.IDB) error {
		// The client's exports are counted under a lock on the client, so
		// that two kick-offs at once cannot both pass the bound.
		q := tenantOf(tx, job.Company).Select("oauth_clients").Column("id").Where("id = ?", string(job.Client))
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		var id string
		if err := q.Scan(ctx, &id); err != nil {
			return err
		}
		active, err := tenantOf(tx, job.Company).SelectModel((*exportRow)(nil)).Where("client_id = ?", string(job.Client)).
			Where("state IN (?)", bun.List([]string{string(bulk.Accepted), string(bulk.Running)})).Count(ctx)
		if err != nil {
			return err
		}
		if active >= bulk.MaxActive {
			return bulk.ErrTooManyJobs
		}
		row := rowOfExport(job)
		_, err = tx.NewInsert().Model(&row).Exec(ctx)
		return err
	}))
}

func (s *ExportJobs) Get(ctx context.Context, company domain.CompanyID, id uuid.UUID) (bulk.Job, error) {
	db := conn(ctx, s.db)
	var row exportRow
	if err := tenantOf(db, company).SelectModel(&row).Where("id = ?", id).Scan(ctx); err != nil {
		return bulk.Job{}, translate(err)
	}
	job := row.job()
	var files []exportFileRow
	if err := tenantOf(db, company).SelectModel(&files).Where("export_id = ?", id).OrderExpr("seq").Scan(ctx); err != nil {
		return bulk.Job{}, translate(err)
	}
	for _, f := range files {
		job.Files = append(job.Files, bulk.File{Type: f.Type, Name: f.Name, Count: f.Count})
	}
	return job, nil
}

func (s *ExportJobs) CutAt(ctx context.Context, company domain.CompanyID, t time.Time) (int64, bool, error) {
	var cuts []int64
	err := tenantOf(conn(ctx, s.db), company).SelectModel((*exportRow)(nil)).Column("cut").
		Where("completed_at IS NOT NULL").Where("transaction_time = ?", t.UTC().Truncate(time.Microsecond)).
		OrderExpr("cut").Limit(1).Scan(ctx, &cuts)
	if err != nil || len(cuts) == 0 {
		return 0, false, translate(err)
	}
	return cuts[0], true, nil
}

func (s *ExportJobs) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration) (*bulk.Job, error) {
	db := conn(ctx, s.db)
	next := acrossCompanies(db, "a replica takes the oldest waiting export of any company").NewSelect().TableExpr("fhir_exports").Column("id").
		Where("state IN (?)", bun.List([]string{string(bulk.Accepted), string(bulk.Running)})).
		Where("(lease_until IS NULL OR lease_until < ?)", now.UTC()).OrderExpr("created_at").Limit(1)
	if db.Dialect().Name() == dialect.PG {
		next = next.For("UPDATE SKIP LOCKED")
	}
	var rows []exportRow
	_, err := acrossCompanies(db, "a replica takes the oldest waiting export of any company").NewUpdate().Model((*exportRow)(nil)).
		Set("lease_owner = ?", owner).Set("lease_until = ?", now.Add(lease).UTC()).
		Set("state = ?", string(bulk.Running)).Set("attempts = attempts + 1").
		Where("id IN (?)", next).Returning("*").Exec(ctx, &rows)
	if err != nil || len(rows) == 0 {
		return nil, translate(err)
	}
	job := rows[0].job()
	return &job, nil
}

func (s *ExportJobs) Save(ctx context.Context, job bulk.Job, owner string) error {
	return translate(inTx(ctx, s.db, func(ctx context.Context, tx bun.IDB) error {
		row := rowOfExport(job)
		err := affectedOne(tenantOf(tx, job.Company).Update("fhir_exports").
			Set("state = ?", row.State).Set("progress = ?", row.Progress).Set("error = ?", row.Error).
			Set("lease_until = ?", row.LeaseUntil).Set("completed_at = ?", row.CompletedAt).Set("expires_at = ?", row.ExpiresAt).
			Where("id = ?", job.ID).Where("lease_owner = ?", owner).
			Where("state = ?", string(bulk.Running)).Exec(ctx))
		if err != nil {
			return err
		}
		// The files are written whole each time: a run started again
		// begins with none.
		if _, err := tenantOf(tx, job.Company).Delete("fhir_export_files").Where("export_id = ?", job.ID).Exec(ctx); err != nil {
			return err
		}
		if len(job.Files) == 0 {
			return nil
		}
		files := make([]exportFileRow, len(job.Files))
		for i, f := range job.Files {
			files[i] = exportFileRow{CompanyID: row.CompanyID, ExportID: job.ID, Name: f.Name, Type: f.Type, Count: f.Count, Seq: i}
		}
		_, err = tx.NewInsert().Model(&files).Exec(ctx)
		return err
	}))
}

func (s *ExportJobs) Delete(ctx context.Context, company domain.CompanyID, id uuid.UUID) ([]string, error) {
	var names []string
	err := inTx(ctx, s.db, func(ctx context.Context, tx bun.IDB) error {
		if err := affectedOne(tenantOf(tx, company).Update("fhir_exports").Set("state = ?", string(bulk.Deleted)).
			Set("lease_owner = NULL").Set("lease_until = NULL").
			Where("id = ?", id).Where("state <> ?", string(bulk.Deleted)).Exec(ctx)); err != nil {
			return err
		}
		if err := tenantOf(tx, company).Select("fhir_export_files").Column("name").Where("export_id = ?", id).Scan(ctx, &names); err != nil {
			return err
		}
		_, err := tenantOf(tx, company).Delete("fhir_export_files").Where("export_id = ?", id).Exec(ctx)
		return err
	})
	return names, translate(err)
}

func (s *ExportJobs) Expired(ctx context.Context, now time.Time) ([]bulk.Job, error) {
	db := conn(ctx, s.db)
	if _, err := acrossCompanies(db, "every replica sweeps the expired exports of every company").NewDelete().Model((*exportRow)(nil)).
		Where("state IN (?)", bun.List([]string{string(bulk.Deleted), string(bulk.Failed)})).
		Where("expires_at < ?", now.Add(-bulk.JobMemory).UTC()).Exec(ctx); err != nil {
		return nil, translate(err)
	}
	var rows []exportRow
	err := acrossCompanies(db, "every replica sweeps the expired exports of every company").NewSelect().Model(&rows).
		Where("state = ?", string(bulk.Completed)).Where("expires_at < ?", now.UTC()).OrderExpr("expires_at").Limit(100).Scan(ctx)
	if err != nil {
		return nil, translate(err)
	}
	jobs := make([]bulk.Job, len(rows))
	for i, r := range rows {
		jobs[i] = r.job()
	}
	return jobs, nil
}
