package sqlstore

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

type clientRow struct {
	bun.BaseModel `bun:"table:oauth_clients,alias:oauth_clients"`

	ID         string     `bun:"id,pk"`
	CompanyID  uuid.UUID  `bun:"company_id"`
	Name       string     `bun:"name"`
	Scopes     string     `bun:"scopes"`
	SecretHash []byte     `bun:"secret_hash"`
	CreatedAt  time.Time  `bun:"created_at"`
	RevokedAt  *time.Time `bun:"revoked_at"`
	// Plan is the company's, read with the client in the same query.
	Plan string `bun:"plan,scanonly"`
}

func (r clientRow) toDomain() (domain.Client, error) {
	scopes, err := domain.ParseScopes(r.Scopes)
	if err != nil {
		return domain.Client{}, err
	}
	c := domain.Client{
		ID: domain.ClientID(r.ID), CompanyID: domain.CompanyID(r.CompanyID), Name: r.Name, Scopes: scopes,
		SecretHash: r.SecretHash, CreatedAt: r.CreatedAt.UTC(), Plan: domain.PlanBasic,
	}
	if r.Plan != "" {
		if c.Plan, err = domain.ParsePlan(r.Plan); err != nil {
			return domain.Client{}, err
		}
	}
	if r.RevokedAt != nil {
		at := r.RevokedAt.UTC()
		c.RevokedAt = &at
	}
	return c, nil
}

// ClientRepository is the bun ports.ClientRepository.
type ClientRepository struct{ db *bun.DB }

var _ ports.ClientRepository = (*ClientRepository)(nil)

// NewClientRepository returns the repository of db.
func NewClientRepository(db *bun.DB) *ClientRepository { return &ClientRepository{db: db} }

func (r *ClientRepository) Create(ctx context.Context, c domain.Client) error {
	row := clientRow{
		ID: string(c.ID), CompanyID: uuid.UUID(c.CompanyID), Name: c.Name, Scopes: c.Scopes.String(),
		SecretHash: c.SecretHash, CreatedAt: c.CreatedAt, RevokedAt: c.RevokedAt,
	}
	_, err := conn(ctx, r.db).NewInsert().Model(&row).Exec(ctx)
	return translate(err)
}

func (r *ClientRepository) Get(ctx context.Context, id domain.ClientID) (domain.Client, error) {
	var row clientRow
	err := conn(ctx, r.db).NewSelect().Model(&row).ColumnExpr("oauth_clients.*").
		ColumnExpr("(SELECT plan FROM companies WHERE companies.id = oauth_clients.company_id) AS plan").
		Where("oauth_clients.id = ?", string(id)).Scan(ctx)
	if err != nil {
		return domain.Client{}, translate(err)
	}
	return row.toDomain()
}

// Revoke keeps the first revocation time when run again.
func (r *ClientRepository) Revoke(ctx context.Context, id domain.ClientID, at time.Time) error {
	res, err := conn(ctx, r.db).NewUpdate().Model((*clientRow)(nil)).
		Set("revoked_at = COALESCE(revoked_at, ?)", at.UTC()).
		Where("id = ?", string(id)).Exec(ctx)
	return affectedOne(res, err)
}
