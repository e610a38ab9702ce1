package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

type customerRow struct {
	bun.BaseModel `bun:"table:customers"`

	ID        int64      `bun:"id,pk,autoincrement"`
	CompanyID uuid.UUID  `bun:"company_id"`
	FirstName string     `bun:"first_name"`
	LastName  string     `bun:"last_name"`
	BirthDate *time.Time `bun:"birth_date,type:date"`
	CreatedAt time.Time  `bun:"created_at"`
	UpdatedAt time.Time  `bun:"updated_at"`
}

func (r customerRow) toDomain() domain.Customer {
	c := domain.Customer{
		ID: domain.CustomerID(r.ID), CompanyID: domain.CompanyID(r.CompanyID),
		FirstName: r.FirstName, LastName: r.LastName,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if r.BirthDate != nil {
		d := time.Date(r.BirthDate.Year(), r.BirthDate.Month(), r.BirthDate.Day(), 0, 0, 0, 0, time.UTC)
		c.BirthDate = &d
	}
	return c
}

// CustomerRepository is the bun ports.CustomerRepository.
type CustomerRepository struct{ db *bun.DB }

var _ ports.CustomerRepository = (*CustomerRepository)(nil)

// NewCustomerRepository returns the repository of db.
func NewCustomerRepository(db *bun.DB) *CustomerRepository { return &CustomerRepository{db: db} }

func (r *CustomerRepository) Create(ctx context.Context, c domain.Customer) (domain.Customer, error) {
	row := customerRow{
		ID: int64(c.ID), CompanyID: uuid.UUID(c.CompanyID), FirstName: c.FirstName, LastName: c.LastName,
		BirthDate: c.BirthDate, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
	err := NewTransactor(r.db).InTx(ctx, func(ctx context.Context) error {
		db := conn(ctx, r.db)
		if _, err := db.NewInsert().Model(&row).Returning("id").Exec(ctx); err != nil {
			return translate(err)
		}
		if c.ID != 0 && r.db.Dialect().Name() == dialect.PG {
			// An explicit id must not be handed out again by the identity sequence.
			_, err := db.ExecContext(ctx,
				"SELECT setval(pg_get_serial_sequence('customers', 'id'), GREATEST(?, (SELECT last_value FROM customers_id_seq)))", row.ID)
			return translate(err)
		}
		return nil
	})
	if err != nil {
		return domain.Customer{}, err
	}
	return row.toDomain(), nil
}

func (r *CustomerRepository) Get(ctx context.Context, company domain.CompanyID, id domain.CustomerID) (domain.Customer, error) {
	var row customerRow
	err := conn(ctx, r.db).NewSelect().Model(&row).
		Where("id = ?", int64(id)).Where("company_id = ?", uuid.UUID(company)).Scan(ctx)
	if err == nil {
		return row.toDomain(), nil
	}
	if err := translate(err); !errors.Is(err, domain.ErrNotFound) {
		return domain.Customer{}, err
	}
	// The upload contract tells "no such customer" from "another company's";
	// this asks only whether the id exists and reads nothing of it.
	exists, err := conn(ctx, r.db).NewSelect().Model((*customerRow)(nil)).
		Where("id = ?", int64(id)).Where("company_id <> ?", uuid.UUID(company)).Exists(ctx)
	if err != nil {
		return domain.Customer{}, translate(err)
	}
	if exists {
		return domain.Customer{}, domain.ErrOtherCompany
	}
	return domain.Customer{}, domain.ErrNotFound
}
