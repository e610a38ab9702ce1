package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// CustomerRepository is the bun ports.CustomerRepository: the operator's and
// the upload's view of the customers table that the RecordStore serves.
type CustomerRepository struct {
	db      *bun.DB
	records *RecordStore
}

var _ ports.CustomerRepository = (*CustomerRepository)(nil)

// NewCustomerRepository returns the repository of db.
func NewCustomerRepository(db *bun.DB) *CustomerRepository {
	return &CustomerRepository{db: db, records: NewRecordStore(db)}
}

func (r *CustomerRepository) Create(ctx context.Context, c domain.Customer) (domain.Customer, error) {
	payload, err := c.Payload()
	if err != nil {
		return domain.Customer{}, err
	}
	obj := ports.StoredObject{Payload: payload, CreatedAt: c.CreatedAt}
	if c.ID != 0 {
		obj.ID = strconv.FormatInt(int64(c.ID), 10)
	}
	err = NewTransactor(r.db).InTx(ctx, func(ctx context.Context) error {
		stored, err := r.records.Insert(ctx, c.CompanyID, domain.CustomersKind(), obj)
		obj = stored
		return err
	})
	if err != nil {
		return domain.Customer{}, err
	}
	id, _ := strconv.ParseInt(obj.ID, 10, 64)
	c.ID = domain.CustomerID(id)
	return c, nil
}

func (r *CustomerRepository) Get(ctx context.Context, company domain.CompanyID, id domain.CustomerID) (domain.Customer, error) {
	obj, err := r.records.Get(ctx, company, domain.CustomersKind(), strconv.FormatInt(int64(id), 10), false)
	if err == nil {
		c := domain.Customer{ID: id, CompanyID: company, CreatedAt: obj.CreatedAt, UpdatedAt: obj.UpdatedAt}
		return c, json.Unmarshal(obj.Payload, &c.Data)
	}
	if !errors.Is(err, domain.ErrNotFound) {
		return domain.Customer{}, err
	}
	// The upload contract tells "no such customer" from "another company's";
	// this asks only whether the id exists and reads nothing of it.
	exists, err := acrossCompanies(conn(ctx, r.db), "an upload tells another company's customer from none").NewSelect().TableExpr("customers").
		Where("id = ?", int64(id)).Where("company_id <> ?", uuid.UUID(company)).Where("deleted_at IS NULL").Exists(ctx)
	if err != nil {
		return domain.Customer{}, translate(err)
	}
	if exists {
		return domain.Customer{}, domain.ErrOtherCompany
	}
	return domain.Customer{}, domain.ErrNotFound
}
