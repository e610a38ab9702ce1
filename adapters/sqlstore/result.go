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

// row is a scanned row that converts to its domain type.
type row[D any] interface {
	toDomain() (D, error)
}

// toDomainAll converts scanned rows, stopping at the first that does not convert.
func toDomainAll[D any, R row[D]](rows []R) ([]D, error) {
	out := make([]D, 0, len(rows))
	for _, r := range rows {
		d, err := r.toDomain()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
