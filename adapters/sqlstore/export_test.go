package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// HotTexts are the texts of the hot statements built so far, by key.
func HotTexts() map[string]string {
	out := map[string]string{}
	hotBuilt.Range(func(k, st any) bool {
		out[k.(string)] = st.(hotStatement).text
		return true
	})
	return out
}

// WirePages is how many pages were read from the wire (decodePage) so far.
func WirePages() int64 { return wirePages.Load() }

// ExistingQuery is the text of Existing's lookup of ids of kind on PostgreSQL.
func ExistingQuery(db bun.IDB, company domain.CompanyID, kind *domain.Kind, ids []string) string {
	t := tableOf(kind)
	return existingByKey(db, company, t, t.idArgs(ids)).String()
}

// ReplaceQuery is the text of Put's replacement of a batch of objects of kind.
func ReplaceQuery(db bun.IDB, company domain.CompanyID, kind *domain.Kind, objs []ports.StoredObject) string {
	return replaceBatch(db, company, kind, objs, 1, time.Now()).String()
}

// ListQuery is the text of List's select of a page of kind on PostgreSQL.
func ListQuery(db bun.IDB, company domain.CompanyID, kind *domain.Kind, lq domain.ListQuery) (string, error) {
	q, err := tableOf(kind).listQuery(tenantOf(db, company), lq, nil)
	if err != nil {
		return "", err
	}
	return q.String(), nil
}

// TableOf is the table that holds kind's objects.
func TableOf(kind *domain.Kind) string { return tableOf(kind).name }

// Conn is the transaction in ctx, or db.
func Conn(ctx context.Context, db *bun.DB) bun.IDB { return conn(ctx, db) }
