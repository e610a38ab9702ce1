package usecase

import (
	"context"
	"encoding/json"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// writeOnce runs a client's write (POST, PATCH, DELETE) in one transaction
// with its Idempotency-Key, if one came, and its audit event.
type writeOnce struct {
	keys   ports.IdempotencyStore
	tx     ports.Transactor
	audits *Auditor
}

// keeping is how a write's answer is kept under its Idempotency-Key: its
// value encoded, and decoded again for a retry's replay. Each encoding is
// the one the resource API renders the value in, which keys saved by
// earlier builds (that kept the rendered answer) hold too.
type keeping[T any] struct {
	encode func(T) ([]byte, error)
	decode func([]byte) (T, error)
}

// keptObjects keeps an object of kind as the resource API renders it.
func keptObjects(kind *domain.Kind) keeping[ports.StoredObject] {
	return keeping[ports.StoredObject]{
		encode: func(o ports.StoredObject) ([]byte, error) { return o.JSON(kind), nil },
		decode: func(b []byte) (ports.StoredObject, error) { return ports.ParseObject(kind, b) },
	}
}

// keptEndpoints keeps a webhook endpoint's view as JSON.
var keptEndpoints = keeping[webhook.View]{
	encode: webhook.View.JSON,
	decode: func(b []byte) (webhook.View, error) {
		var v webhook.View
		return v, json.Unmarshal(b, &v)
	},
}

// idempotently claims the key first (a retry replays the first answer, a
// concurrent twin waits here for the first one's commit), then runs write,
// then saves its answer under the key, all in one transaction. A retry of
// a conditional write is replayed before its If-Match is looked at, so a
// client that lost the answer to its own write is told that answer, not
// that the object has moved on.
func idempotently[T any](ctx context.Context, w *writeOnce, grant domain.Grant, key *ports.IdempotencyKey, now time.Time,
	kept keeping[T], write func(ctx context.Context) (ports.Written[T], error)) (ports.Written[T], error) {
	var answer ports.Written[T]
	err := w.tx.InTx(ctx, func(ctx context.Context) error {
		if key != nil {
			saved, err := w.keys.Claim(ctx, grant.CompanyID, grant.ClientID, *key, now)
			if err != nil {
				return err
			}
			if saved != nil {
				answer, err = answerOf(saved, kept)
				return err
			}
		}
		written, err := write(ctx)
		if err != nil {
			return err
		}
		answer = written
		if err := w.audits.inTx(ctx, grant.CompanyID, written.Outcome); err != nil {
			return err
		}
		if key == nil {
			return nil
		}
		saved := ports.SavedWrite{Outcome: written.Outcome, Location: written.Location, Value: []byte{}} // no content is kept as an empty value
		if written.Outcome != domain.OutcomeNoContent {
			if saved.Value, err = kept.encode(written.Value); err != nil {
				return err
			}
		}
		return w.keys.Save(ctx, grant.CompanyID, grant.ClientID, *key, saved)
	})
	return answer, err
}

// answerOf is the first answer of a retried key, as its write gave it.
func answerOf[T any](saved *ports.SavedWrite, kept keeping[T]) (ports.Written[T], error) {
	answer := ports.Written[T]{Outcome: saved.Outcome, Location: saved.Location, Replayed: true}
	if saved.Outcome == domain.OutcomeNoContent || len(saved.Value) == 0 {
		return answer, nil
	}
	var err error
	answer.Value, err = kept.decode(saved.Value)
	return answer, err
}
