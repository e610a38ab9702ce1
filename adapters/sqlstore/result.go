package sqlstore

import (
	"database/sql"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// affectedOne turns an update that touched no row into domain.ErrNotFound.
func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return domain.ErrNotFound
	}
	return nil
}

// utcPtr is an optional time as the domain keeps it: in UTC, nil for none.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
