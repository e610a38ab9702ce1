package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

type companyRow struct {
	bun.BaseModel `bun:"table:companies"`

	ID               uuid.UUID  `bun:"id,pk"`
	Name             string     `bun:"name"`
	TimeZone         string     `bun:"time_zone"`
	Plan             string     `bun:"plan"`
	StorageQuota     int64      `bun:"storage_quota"`
	StorageUsed      int64      `bun:"storage_used"`
	BookingNotice    int        `bun:"booking_notice_minutes"`
	UploadSecretHash []byte     `bun:"upload_secret_hash"`
	ExternalRef      *string    `bun:"external_ref"`
	CatalogVersion   int64      `bun:"catalog_version"`
	DisabledAt       *time.Time `bun:"disabled_at"`
	RetentionHold    *string    `bun:"retention_hold"`
	CreatedAt        time.Time  `bun:"created_at"`
	UpdatedAt        time.Time  `bun:"updated_at"`
}

func (r companyRow) toDomain() (domain.Company, error) {
	plan, err := domain.ParsePlan(r.Plan)
	if err != nil {
		return domain.Company{}, err
	}
	c := domain.Company{
		ID: domain.CompanyID(r.ID), Name: r.Name, TimeZone: r.TimeZone, Plan: plan,
		StorageQuota: r.StorageQuota, StorageUsed: r.StorageUsed, UploadSecretHash: r.UploadSecretHash,
		BookingNoticeMinutes: r.BookingNotice, CatalogVersion: r.CatalogVersion, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if r.ExternalRef != nil {
		c.ExternalRef = *r.ExternalRef
	}
	c.DisabledAt = utcPtr(r.DisabledAt)
	if r.RetentionHold != nil {
		c.RetentionHold = domain.Date(*r.RetentionHold)
	}
	return c, nil
}

// CompanyRepository is the bun ports.CompanyRepository.
type CompanyRepository struct{ db *bun.DB }

var _ ports.CompanyRepository = (*CompanyRepository)(nil)

// NewCompanyRepository returns the repository of db.
func NewCompanyRepository(db *bun.DB) *CompanyRepository { return &CompanyRepository{db: db} }

func (r *CompanyRepository) Create(ctx context.Context, c domain.Company) error {
	row := companyRow{
		ID: uuid.UUID(c.ID), Name: c.Name, TimeZone: c.TimeZone, Plan: c.Plan.String(),
		StorageQuota: c.StorageQuota, StorageUsed: c.StorageUsed, UploadSecretHash: c.UploadSecretHash,
		BookingNotice: c.BookingNoticeMinutes, ExternalRef: optional(c.ExternalRef), DisabledAt: c.DisabledAt,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
	_, err := conn(ctx, r.db).NewInsert().Model(&row).Exec(ctx)
	return translate(err)
}

func (r *CompanyRepository) Get(ctx context.Context, id domain.CompanyID) (domain.Company, error) {
	var row companyRow
	if hot(r.db) {
		err := scanHot(ctx, r.db, "company", func(tn tenant) hotQuery { return tn.SelectOwn((*companyRow)(nil)) }, id, nil, &row)
		if err != nil {
			return domain.Company{}, translate(err)
		}
		return row.toDomain()
	}
	return row.read(ctx, tenantOf(conn(ctx, r.db), id).SelectOwn(&row))
}

func (r *CompanyRepository) FindByExternalRef(ctx context.Context, ref string) (domain.Company, error) {
	if ref == "" {
		return domain.Company{}, domain.ErrNotFound
	}
	var row companyRow
	q := acrossCompanies(conn(ctx, r.db), "an operator's resource names its company by reference").NewSelect().Model(&row)
	return row.read(ctx, q.Where("external_ref = ?", ref))
}

// read scans the company q selects into row.
func (row *companyRow) read(ctx context.Context, q *bun.SelectQuery) (domain.Company, error) {
	if err := q.Scan(ctx); err != nil {
		return domain.Company{}, translate(err)
	}
	return row.toDomain()
}

func (r *CompanyRepository) UpdateSettings(ctx context.Context, c domain.Company) error {
	res, err := tenantOf(conn(ctx, r.db), c.ID).UpdateOwn().
		Set("name = ?", c.Name).
		Set("time_zone = ?", c.TimeZone).
		Set("plan = ?", c.Plan.String()).
		Set("storage_quota = ?", c.StorageQuota).
		Set("updated_at = ?", c.UpdatedAt.UTC()).Exec(ctx)
	return affectedOne(res, err)
}

// Disable keeps the first time when run again.
func (r *CompanyRepository) Disable(ctx context.Context, id domain.CompanyID, at time.Time) error {
	res, err := tenantOf(conn(ctx, r.db), id).UpdateOwn().
		Set("disabled_at = COALESCE(disabled_at, ?)", at.UTC()).Exec(ctx)
	return affectedOne(res, err)
}

func (r *CompanyRepository) SetRetentionHold(ctx context.Context, id domain.CompanyID, until domain.Date) error {
	res, err := tenantOf(conn(ctx, r.db), id).UpdateOwn().Set("retention_hold = ?", optional(string(until))).Exec(ctx)
	return affectedOne(res, err)
}

// optional stores an empty string as NULL, so that unique indexes skip it.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (r *CompanyRepository) SetUploadSecretHash(ctx context.Context, id domain.CompanyID, hash []byte) error {
	res, err := tenantOf(conn(ctx, r.db), id).UpdateOwn().
		Set("upload_secret_hash = ?", hash).
		Set("updated_at = ?", time.Now().UTC()).Exec(ctx)
	return affectedOne(res, err)
}

func (r *CompanyRepository) ReserveStorage(ctx context.Context, id domain.CompanyID, n int64) error {
	// The quota test and the increment are one statement, so the database
	// serialises concurrent reservations on the row.
	res, err := tenantOf(conn(ctx, r.db), id).UpdateOwn().
		Set("storage_used = storage_used + ?", n).
		Set("updated_at = ?", time.Now().UTC()).
		Where("storage_used + ? <= storage_quota", n).
		Exec(ctx)
	if err := affectedOne(res, err); !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	// Nothing updated: either no such company or no room.
	if _, err := r.Get(ctx, id); err != nil {
		return err
	}
	return domain.ErrInsufficientStorage
}

func (r *CompanyRepository) ListIDs(ctx context.Context) ([]domain.CompanyID, error) {
	var ids []uuid.UUID
	if err := acrossCompanies(conn(ctx, r.db), "the list of companies").NewSelect().Model((*companyRow)(nil)).Column("id").OrderExpr("id").Scan(ctx, &ids); err != nil {
		return nil, translate(err)
	}
	out := make([]domain.CompanyID, len(ids))
	for i, id := range ids {
		out[i] = domain.CompanyID(id)
	}
	return out, nil
}
