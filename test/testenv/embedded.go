package testenv

import (
	"context"
	"testing"

	"github.com/uptrace/bun"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/praxis-health/praxis/adapters/blobstore"
	"github.com/praxis-health/praxis/adapters/memstore"
	"github.com/praxis-health/praxis/adapters/sniff"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
)

// Embedded is the upload use case on in-memory embedded stores (SQLite and a
// mem bucket), for in-process fuzzing and benchmarks.
type Embedded struct {
	DB        *bun.DB
	Bucket    *blob.Bucket
	Companies *sqlstore.CompanyRepository
	Admin     *usecase.Admin
	Uploads   *usecase.Uploads
}

// NewEmbedded builds the stack on a fresh, migrated in-memory database.
func NewEmbedded(tb testing.TB) *Embedded {
	tb.Helper()
	db, err := sqlstore.Open("sqlite::memory:")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	if err := sqlstore.Migrate(context.Background(), db); err != nil {
		tb.Fatal(err)
	}
	bucket := memblob.OpenBucket(nil)
	companies, customers := sqlstore.NewCompanyRepository(db), sqlstore.NewCustomerRepository(db)
	tokens := memstore.New(memstore.DefaultLimits)
	return &Embedded{
		DB:        db,
		Bucket:    bucket,
		Companies: companies,
		Admin:     usecase.NewAdmin(companies, customers, sqlstore.NewClientRepository(db), tokens),
		Uploads: usecase.NewUploads(companies, customers, sqlstore.NewFileRepository(db), sqlstore.NewTransactor(db),
			blobstore.New(bucket), sniff.Sniffer{}, tokens, domain.DefaultLockout),
	}
}
