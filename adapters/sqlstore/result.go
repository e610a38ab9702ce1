package sqlstore

import (
	"database/sql"

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
