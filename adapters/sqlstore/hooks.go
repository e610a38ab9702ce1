package sqlstore

import (
	"context"
	"fmt"
	"maps"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// Hook carries out one domain.StoreHook: the record store calls it after
// every write and every delete of a kind that declares it, on the write's
// transaction (db), exactly once per object written.
type Hook interface {
	Written(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, id string, payload []byte) error
	Deleted(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, id string) error
}

// hooks are the store's implementations of the hooks the table declares.
var hooks = map[domain.StoreHook]Hook{
	domain.HookCalendarSpan:   calendarSpan{},
	domain.HookCatalogVersion: catalogVersion{},
	domain.HookObserved:       observedRows{},
}

// batchHook is a Hook that takes a batch of new objects at once (the
// import's Put inserts them) instead of one Written call per object.
type batchHook interface {
	InsertedAll(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, objs []ports.StoredObject) error
}

// WithHook is a store that also carries out hook: a test declares a kind
// with a hook of its own and records what the store calls.
func (s *RecordStore) WithHook(name domain.StoreHook, h Hook) *RecordStore {
	c := &RecordStore{db: s.db, hooks: maps.Clone(s.hooks)}
	c.hooks[name] = h
	return c
}

// written runs kind's hooks for an object just written.
func (s *RecordStore) written(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, id string, payload []byte) error {
	return s.eachHook(kind, func(h Hook) error { return h.Written(ctx, db, company, kind, id, payload) })
}

// deleted runs kind's hooks for an object just deleted.
func (s *RecordStore) deleted(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, id string) error {
	return s.eachHook(kind, func(h Hook) error { return h.Deleted(ctx, db, company, kind, id) })
}

// eachHook calls run with each hook kind declares, in order; a hook this
// store does not carry out is an error, never skipped.
func (s *RecordStore) eachHook(kind *domain.Kind, run func(Hook) error) error {
	for _, name := range kind.Hooks {
		h, ok := s.hooks[name]
		if !ok {
			return fmt.Errorf("kind %s declares hook %q, which this store does not carry out", kind.Slug, name)
		}
		if err := run(h); err != nil {
			return err
		}
	}
	return nil
}

// catalogVersion moves the company's booking catalogue version, so that a
// cached catalogue is read again (domain.HookCatalogVersion).
type catalogVersion struct{}

func (catalogVersion) Written(ctx context.Context, db bun.IDB, company domain.CompanyID, _ *domain.Kind, _ string, _ []byte) error {
	return bumpCatalog(ctx, db, company)
}

func (catalogVersion) Deleted(ctx context.Context, db bun.IDB, company domain.CompanyID, _ *domain.Kind, _ string) error {
	return bumpCatalog(ctx, db, company)
}

func bumpCatalog(ctx context.Context, db bun.IDB, company domain.CompanyID) error {
	_, err := tenantOf(db, company).UpdateOwn().Set("catalog_version = catalog_version + 1").Exec(ctx)
	return translate(err)
}
