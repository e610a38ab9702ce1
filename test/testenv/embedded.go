package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/praxis-health/praxis/adapters/blobstore"
	"github.com/praxis-health/praxis/adapters/memstore"
	"github.com/praxis-health/praxis/adapters/sniff"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// Embedded is the upload use case on in-memory embedded stores (SQLite and a
// mem bucket), for in-process fuzzing and benchmarks.
type Embedded struct {
	DB        *bun.DB
	Bucket    *blob.Bucket
	Companies *sqlstore.CompanyRepository
	Admin     *usecase.Admin
	Uploads   *usecase.Uploads
	OAuth     *usecase.OAuth
	Records   *usecase.Records
	Exchange  *usecase.Exchange
	Tokens    *memstore.Store

	auditor *usecase.Auditor
}

// AdminOver is another admin use case on the same stores, whose blob
// store is blobs (one that fails on purpose, say).
func (e *Embedded) AdminOver(blobs ports.BlobStore) *usecase.Admin {
	return usecase.NewAdmin(e.Companies, sqlstore.NewCustomerRepository(e.DB), sqlstore.NewClientRepository(e.DB), e.Tokens,
		sqlstore.NewTransactor(e.DB), e.auditor, sqlstore.NewErasures(e.DB), sqlstore.NewCompanyLeases(e.DB), blobs)
}

// fuzzLockout counts wrong secrets like production but locks for only 10 ms,
// so that fuzzers reach the lockout and still get past it.
var fuzzLockout = domain.LockoutPolicy{MaxFailures: 10, Window: time.Minute, Lockout: 10 * time.Millisecond}

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
	tokens, clients := memstore.New(memstore.DefaultLimits), sqlstore.NewClientRepository(db)
	auditor := usecase.NewAuditor(sqlstore.NewAuditLog(db), sqlstore.NewTransactor(db), companies, customers, clients, nil)
	return &Embedded{
		DB:        db,
		Bucket:    bucket,
		Companies: companies,
		Admin: usecase.NewAdmin(companies, customers, clients, tokens, sqlstore.NewTransactor(db), auditor,
			sqlstore.NewErasures(db), sqlstore.NewCompanyLeases(db), blobstore.New(bucket)),
		Uploads: usecase.NewUploads(companies, customers, sqlstore.NewFileRepository(db), sqlstore.NewIdempotencyStore(db), sqlstore.NewTransactor(db),
			blobstore.New(bucket), sniff.Sniffer{}, tokens, fuzzLockout, auditor, sqlstore.NewRecordStore(db), sqlstore.NewDeviceOrderStore(db), clients),
		OAuth:   usecase.NewOAuth(clients, tokens, tokens, nil, nil, usecase.OAuthSettings{TokenTTL: time.Hour, Lockout: fuzzLockout}),
		Records: usecase.NewRecords(sqlstore.NewRecordStore(db), sqlstore.NewIdempotencyStore(db), sqlstore.NewTransactor(db), companies, auditor),
		Exchange: usecase.NewExchange(sqlstore.NewRecordStore(db), sqlstore.NewFileRepository(db), sqlstore.NewTransactor(db), companies,
			sqlstore.NewCompanyLeases(db), auditor),
		Tokens:  tokens,
		auditor: auditor,
	}
}
