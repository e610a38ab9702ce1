package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// DeviceOrderStore is the bun ports.DeviceOrderStore: queries of the
// records of the kind device-orders by their payload's number, device,
// patient and status, each served by an index of migration
// 20261126000300_devices, and the companies' counters.
type DeviceOrderStore struct{ db *bun.DB }

var _ ports.DeviceOrderStore = (*DeviceOrderStore)(nil)

// NewDeviceOrderStore returns the store of db.
func NewDeviceOrderStore(db *bun.DB) *DeviceOrderStore { return &DeviceOrderStore{db: db} }

var deviceOrders = tableOf(domain.KindOf("device-orders"))

// orderNumber is the payload's number as the unique index reads it.
func orderNumber(db bun.IDB) string {
	if db.Dialect().Name() == dialect.PG {
		return "(payload->>'number')::bigint"
	}
	return jsonField(db, "number")
}

func (s *DeviceOrderStore) ByNumber(ctx context.Context, company domain.CompanyID, number int64) (ports.StoredObject, error) {
	db := conn(ctx, s.db)
	var row objectRow
	err := deviceOrders.selectIn(tenantOf(db, company)).Where(orderNumber(db)+" = ?", number).
		Where("deleted_at IS NULL").Scan(ctx, &row)
	if err != nil {
		return ports.StoredObject{}, translate(err)
	}
	return row.toPort(), nil
}

func (s *DeviceOrderStore) Outbox(ctx context.Context, company domain.CompanyID, device string, limit int) ([]ports.StoredObject, error) {
	db := conn(ctx, s.db)
	status := jsonField(db, "status")
	q := deviceOrders.selectIn(tenantOf(db, company)).Where(jsonField(db, "device_id")+" = ?", device).Where("deleted_at IS NULL").
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where(status+" IN (?)", bun.List([]string{domain.OrderOpen, domain.OrderWritten})).
				WhereOr(status+" = ? AND "+jsonField(db, "written_at")+" IS NOT NULL AND "+jsonField(db, "withdrawn_at")+" IS NULL", domain.OrderCancelled)
		}).OrderExpr(orderNumber(db)).Limit(int64(limit))
	return s.rows(ctx, q)
}

func (s *DeviceOrderStore) Open(ctx context.Context, company domain.CompanyID, device string, customer domain.CustomerID, procedure string, since time.Time) ([]ports.StoredObject, error) {
	db := conn(ctx, s.db)
	q := deviceOrders.selectIn(tenantOf(db, company)).Where(jsonField(db, "device_id")+" = ?", device).Where("deleted_at IS NULL").
		Where(jsonField(db, "status")+" IN (?)", bun.List([]string{domain.OrderOpen, domain.OrderWritten, domain.OrderTaken})).
		Where("customer_id = ?", int64(customer)).Where(jsonField(db, "procedure")+" = ?", procedure).
		Where("created_at >= ?", since.UTC()).OrderExpr(orderNumber(db)).Limit(10)
	if db.Dialect().Name() == dialect.PG {
		// Two results that arrive together for one open order: the second
		// waits here, then finds it done and matches nothing.
		q = q.For("UPDATE")
	}
	return s.rows(ctx, q)
}

func (s *DeviceOrderStore) rows(ctx context.Context, q *bun.SelectQuery) ([]ports.StoredObject, error) {
	var rows []objectRow
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, translate(err)
	}
	out := make([]ports.StoredObject, len(rows))
	for i, r := range rows {
		out[i] = r.toPort()
	}
	return out, nil
}

// Next counts up the company's counter in one statement: the row stays
// locked until the transaction ends, so two orders never share a number.
func (s *DeviceOrderStore) Next(ctx context.Context, company domain.CompanyID, counter string) (int64, error) {
	var n int64
	err := tenantOf(conn(ctx, s.db), company).Raw("INSERT INTO counters (company_id, name, value) VALUES (?0, ?1, 1) "+
		"ON CONFLICT (company_id, name) DO UPDATE SET value = counters.value + 1 WHERE counters.company_id = ?0 RETURNING value",
		counter).Scan(ctx, &n)
	return n, translate(err)
}
