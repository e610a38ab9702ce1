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

// CompanyLeases is the bun ports.CompanyLeases: a row of company_leases a company.
type CompanyLeases struct{ db *bun.DB }

var _ ports.CompanyLeases = (*CompanyLeases)(nil)

// NewCompanyLeases returns the leases of db.
func NewCompanyLeases(db *bun.DB) *CompanyLeases { return &CompanyLeases{db: db} }

type leaseRow struct {
	bun.BaseModel `bun:"table:company_leases,alias:company_leases"`

	CompanyID  uuid.UUID `bun:"company_id,pk"`
	Holder     string    `bun:"holder"`
	Purpose    string    `bun:"purpose"`
	AcquiredAt int64     `bun:"acquired_at"`
	ExpiresAt  int64     `bun:"expires_at"`
}

// Take inserts the lease, or takes the row over when its lease has run out
// (or is the holder's own), in one statement: of two at once, one wins.
func (l *CompanyLeases) Take(ctx context.Context, lease domain.CompanyLease, now time.Time) (domain.CompanyLease, bool, error) {
	for range 3 { // the other holder may release it between the two statements
		held, taken, err := l.take(ctx, lease, now)
		if !errors.Is(err, domain.ErrNotFound) {
			return held, taken, err
		}
	}
	return domain.CompanyLease{}, false, domain.Unavailable(errors.New("the company's lease changed hands three times"))
}

func (l *CompanyLeases) take(ctx context.Context, lease domain.CompanyLease, now time.Time) (domain.CompanyLease, bool, error) {
	db := conn(ctx, l.db)
	row := leaseRow{CompanyID: uuid.UUID(lease.Company), Holder: lease.Holder, Purpose: lease.Purpose,
		AcquiredAt: lease.AcquiredAt.UnixMilli(), ExpiresAt: lease.ExpiresAt.UnixMilli()}
	res, err := db.NewInsert().Model(&row).On("CONFLICT (company_id) DO UPDATE").
		Set("holder = EXCLUDED.holder, purpose = EXCLUDED.purpose, acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at").
		Where("company_leases.expires_at <= ? OR company_leases.holder = EXCLUDED.holder", now.UnixMilli()).Exec(ctx)
	switch err := affectedOne(res, err); {
	case err == nil:
		return lease, true, nil
	case !errors.Is(err, domain.ErrNotFound): // not found: another's lease holds the row
		return domain.CompanyLease{}, false, err
	}
	var held leaseRow
	if err := tenantOf(db, lease.Company).SelectModel(&held).Scan(ctx); err != nil {
		return domain.CompanyLease{}, false, translate(err)
	}
	return domain.CompanyLease{Company: lease.Company, Holder: held.Holder, Purpose: held.Purpose,
		AcquiredAt: time.UnixMilli(held.AcquiredAt).UTC(), ExpiresAt: time.UnixMilli(held.ExpiresAt).UTC()}, false, nil
}

func (l *CompanyLeases) Extend(ctx context.Context, company domain.CompanyID, holder string, until time.Time) (bool, error) {
	res, err := tenantOf(conn(ctx, l.db), company).Update("company_leases").Set("expires_at = ?", until.UnixMilli()).
		Where("holder = ?", holder).Exec(ctx)
	if err := affectedOne(res, err); errors.Is(err, domain.ErrNotFound) {
		return false, nil // another holds it now, or no one
	} else if err != nil {
		return false, err
	}
	return true, nil
}

func (l *CompanyLeases) Release(ctx context.Context, company domain.CompanyID, holder string) error {
	_, err := tenantOf(conn(ctx, l.db), company).Delete("company_leases").Where("holder = ?", holder).Exec(ctx)
	return translate(err)
}
