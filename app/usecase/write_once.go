package usecase

import (
	"context"
	"encoding/json"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// writeOnce runs a client's write (POST, PATCH, DELETE) in one transaction
// with its Idempotency-Key, if one came, and its audit event.
type writeOnce struct {
	keys   ports.IdempotencyStore
	tx     ports.Transactor
	audits *Auditor
}

// idempotently claims the key first (a retry replays the first answer, a
// concurrent twin waits here for the first one's commit), then runs write,
// then saves its answer under the key, all in one transaction. A retry of
// a conditional write is replayed before its If-Match is looked at, so a
// client that lost the answer to its own write is told that answer, not
// that the object has moved on.
func (w *writeOnce) idempotently(ctx context.Context, grant domain.Grant, key *ports.IdempotencyKey, now time.Time,
	write func(ctx context.Context) (ports.Response, error)) (ports.Response, error) {
	var resp ports.Response
	err := w.tx.InTx(ctx, func(ctx context.Context) error {
		if key != nil {
			saved, err := w.keys.Claim(ctx, grant.CompanyID, grant.ClientID, *key, now)
			if err != nil {
				return err
			}
			if saved != nil {
				resp = ports.Response{SavedResponse: *saved, Replayed: true, Version: versionIn(saved.Body)}
				return nil
			}
		}
		written, err := write(ctx)
		if err != nil {
			return err
		}
		resp = written
		if err := w.audits.inTx(ctx, grant.CompanyID, written.Status); err != nil {
			return err
		}
		if key != nil {
			saved := written.SavedResponse
			if saved.Body == nil {
				saved.Body = []byte{} // an answer without a body (204) is saved as one
			}
			return w.keys.Save(ctx, grant.CompanyID, grant.ClientID, *key, saved)
		}
		return nil
	})
	return resp, err
}

// versionIn reads the version of a saved answer's object, for the ETag of
// its replay; 0 when it names none (an empty 204).
func versionIn(body []byte) int64 {
	var v struct {
		Version int64 `json:"version"`
	}
	if len(body) == 0 || json.Unmarshal(body, &v) != nil {
		return 0
	}
	return v.Version
}
