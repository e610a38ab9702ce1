package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// AssertionIDs keeps the ids (jti) of the signed client assertions that
// were accepted, until each assertion expires: in the database, so that no
// failover of Redis can forget one and let it be replayed.
type AssertionIDs struct{ db *bun.DB }

var _ ports.AssertionIDs = (*AssertionIDs)(nil)

// NewAssertionIDs returns the store of db.
func NewAssertionIDs(db *bun.DB) *AssertionIDs { return &AssertionIDs{db: db} }

type assertionIDRow struct {
	bun.BaseModel `bun:"table:oauth_assertion_ids,alias:oauth_assertion_ids"`

	CompanyID uuid.UUID `bun:"company_id,pk"`
	ClientID  string    `bun:"client_id,pk"`
	JTI       string    `bun:"jti,pk"`
	ExpiresAt time.Time `bun:"expires_at"`
}

// Use records jti for client until it expires; domain.ErrConflict when the
// client used it before. The client's expired ids go first: an id is kept
// only while an assertion carrying it could still be accepted.
func (s *AssertionIDs) Use(ctx context.Context, company domain.CompanyID, client domain.ClientID, jti string, until, now time.Time) error {
	return inTx(ctx, s.db, func(ctx context.Context, tx bun.IDB) error {
		if _, err := tenantOf(tx, company).DeleteModel((*assertionIDRow)(nil)).
			Where("client_id = ?", string(client)).Where("expires_at < ?", now.UTC()).Exec(ctx); err != nil {
			return translate(err)
		}
		row := assertionIDRow{CompanyID: uuid.UUID(company), ClientID: string(client), JTI: jti, ExpiresAt: until.UTC()}
		res, err := tx.NewInsert().Model(&row).On("CONFLICT (company_id, client_id, jti) DO NOTHING").Exec(ctx)
		switch err := affectedOne(res, err); {
		case errors.Is(err, domain.ErrNotFound): // the row was there: used before
			return domain.ErrConflict
		default:
			return err
		}
	})
}
