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

	ID         string    `bun:"id,pk"`
	CompanyID  uuid.UUID `bun:"company_id"`
	Name       string    `bun:"name"`
	Scopes     string    `bun:"scopes"`
	SecretHash []byte    `bun:"secret_hash"`
	// PreviousSecretHash is accepted beside SecretHash until PreviousUntil.
	PreviousSecretHash []byte     `bun:"previous_secret_hash"`
	PreviousUntil      *time.Time `bun:"previous_secret_until"`
	ExternalRef        *string    `bun:"external_ref"`
	DeviceID           *string    `bun:"device_id"`
	KeySetURL          *string    `bun:"jwks_url"`
	KeySet             *string    `bun:"jwks"`
	CreatedAt          time.Time  `bun:"created_at"`
	RevokedAt          *time.Time `bun:"revoked_at"`
	// Plan and whether the company is disabled are read with the client in the same query.
	Plan            string `bun:"plan,scanonly"`
	CompanyDisabled bool   `bun:"company_disabled,scanonly"`
}

func (r clientRow) toDomain() (domain.Client, error) {
	scopes, err := domain.ParseScopes(r.Scopes)
	if err != nil {
		return domain.Client{}, err
	}
	c := domain.Client{
		ID: domain.ClientID(r.ID), CompanyID: domain.CompanyID(r.CompanyID), Name: r.Name, Scopes: scopes,
		SecretHash: r.SecretHash, CreatedAt: r.CreatedAt.UTC(), Plan: domain.PlanBasic, CompanyDisabled: r.CompanyDisabled,
		PreviousSecretHash: r.PreviousSecretHash, PreviousSecretUntil: utcPtr(r.PreviousUntil),
	}
	if r.ExternalRef != nil {
		c.ExternalRef = *r.ExternalRef
	}
	if r.DeviceID != nil {
		c.DeviceID = *r.DeviceID
	}
	if r.KeySetURL != nil {
		c.KeySetURL = *r.KeySetURL
	}
	if r.KeySet != nil {
		c.KeySet = []byte(*r.KeySet)
	}
	if r.Plan != "" {
		if c.Plan, err = domain.ParsePlan(r.Plan); err != nil {
			return domain.Client{}, err
		}
	}
	c.RevokedAt = utcPtr(r.RevokedAt)
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
		SecretHash: c.SecretHash, ExternalRef: optional(c.ExternalRef), DeviceID: optional(c.DeviceID), CreatedAt: c.CreatedAt, RevokedAt: c.RevokedAt,
		KeySetURL: optional(c.KeySetURL), KeySet: optional(string(c.KeySet)),
	}
	_, err := conn(ctx, r.db).NewInsert().Model(&row).Exec(ctx)
	return translate(err)
}

func (r *ClientRepository) Get(ctx context.Context, id domain.ClientID) (domain.Client, error) {
	var row clientRow
	q := acrossCompanies(conn(ctx, r.db), "a token request names its client before its company is known").
		NewSelect().Model(&row).Where("oauth_clients.id = ?", string(id))
	return one(ctx, q, &row)
}

func (r *ClientRepository) FindByExternalRef(ctx context.Context, company domain.CompanyID, ref string) (domain.Client, error) {
	if ref == "" {
		return domain.Client{}, domain.ErrNotFound
	}
	var row clientRow
	return one(ctx, tenantOf(conn(ctx, r.db), company).SelectModel(&row).Where("oauth_clients.external_ref = ?", ref), &row)
}

// one reads the client q selects into row, with its company's plan and state.
func one(ctx context.Context, q *bun.SelectQuery, row *clientRow) (domain.Client, error) {
	err := q.ColumnExpr("oauth_clients.*").
		ColumnExpr("companies.plan AS plan, companies.disabled_at IS NOT NULL AS company_disabled").
		Join("JOIN companies ON companies.id = oauth_clients.company_id").Scan(ctx)
	if err != nil {
		return domain.Client{}, translate(err)
	}
	return row.toDomain()
}

func (r *ClientRepository) Update(ctx context.Context, company domain.CompanyID, c domain.Client) error {
	res, err := tenantOf(conn(ctx, r.db), company).UpdateModel((*clientRow)(nil)).
		Set("name = ?", c.Name).
		Set("scopes = ?", c.Scopes.String()).
		Set("secret_hash = ?", c.SecretHash).
		Set("previous_secret_hash = ?", c.PreviousSecretHash).
		Set("previous_secret_until = ?", utcPtr(c.PreviousSecretUntil)).
		Set("jwks_url = ?", optional(c.KeySetURL)).Set("jwks = ?", optional(string(c.KeySet))).
		Where("id = ?", string(c.ID)).Exec(ctx)
	return affectedOne(res, err)
}

func (r *ClientRepository) List(ctx context.Context, company domain.CompanyID) ([]domain.Client, error) {
	var rows []clientRow
	err := tenantOf(conn(ctx, r.db), company).SelectModel(&rows).ColumnExpr("oauth_clients.*").
		ColumnExpr("companies.plan AS plan, companies.disabled_at IS NOT NULL AS company_disabled").
		Join("JOIN companies ON companies.id = oauth_clients.company_id").OrderExpr("oauth_clients.created_at, oauth_clients.id").Scan(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]domain.Client, len(rows))
	for i, row := range rows {
		if out[i], err = row.toDomain(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *ClientRepository) ActiveIDs(ctx context.Context, company domain.CompanyID) ([]domain.ClientID, error) {
	var ids []string
	err := tenantOf(conn(ctx, r.db), company).SelectModel((*clientRow)(nil)).Column("id").
		Where("revoked_at IS NULL").OrderExpr("id").Scan(ctx, &ids)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]domain.ClientID, len(ids))
	for i, id := range ids {
		out[i] = domain.ClientID(id)
	}
	return out, nil
}

// Revoke keeps the first revocation time when run again.
func (r *ClientRepository) Revoke(ctx context.Context, id domain.ClientID, at time.Time) error {
	res, err := acrossCompanies(conn(ctx, r.db), "a client is revoked by its id, which is unique across companies").
		NewUpdate().Model((*clientRow)(nil)).
		Set("revoked_at = COALESCE(revoked_at, ?)", at.UTC()).
		Where("id = ?", string(id)).Exec(ctx)
	return affectedOne(res, err)
}
