package sqlstore

import (
	"context"
	"strconv"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/praxis-health/praxis/domain"
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
	if t.kind != "" {
		return existingByKey(db, company, t, pgdialect.Array(ids)).String()
	}
	numbers := make([]int64, len(ids))
	for i, id := range ids {
		numbers[i], _ = strconv.ParseInt(id, 10, 64)
	}
	return existingByKey(db, company, t, pgdialect.Array(numbers)).String()
}

// Conn is the transaction in ctx, or db.
func Conn(ctx context.Context, db *bun.DB) bun.IDB { return conn(ctx, db) }
