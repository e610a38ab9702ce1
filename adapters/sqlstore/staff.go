package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/staff"
	"github.com/praxis-health/praxis/ports"
)

// Staff keeps the practice's people, invitations and passkeys
// (docs/contract.md §13).
type Staff struct{ db *bun.DB }

var _ ports.Staff = (*Staff)(nil)

// NewStaff returns the staff store of db.
func NewStaff(db *bun.DB) *Staff { return &Staff{db: db} }

type memberRow struct {
	bun.BaseModel `bun:"table:staff_members,alias:staff_members"`

	ID        uuid.UUID `bun:"id,pk"`
	CompanyID uuid.UUID `bun:"company_id"`
	Email     string    `bun:"email"`
	Role      string    `bun:"role"`
	CreatedAt time.Time `bun:"created_at"`
}

func (r memberRow) member() staff.Member {
	return staff.Member{ID: r.ID, Company: domain.CompanyID(r.CompanyID), Email: r.Email, Role: staff.Role(r.Role), CreatedAt: r.CreatedAt.UTC()}
}

type inviteRow struct {
	bun.BaseModel `bun:"table:staff_invites,alias:staff_invites"`

	CompanyID uuid.UUID `bun:"company_id,pk"`
	TokenHash []byte    `bun:"token_hash,pk"`
	Email     string    `bun:"email"`
	Role      string    `bun:"role"`
	InvitedBy string    `bun:"invited_by"`
	ExpiresAt time.Time `bun:"expires_at"`
}

func (r inviteRow) invite() staff.Invite {
	return staff.Invite{Company: domain.CompanyID(r.CompanyID), TokenHash: r.TokenHash, Email: r.Email, Role: staff.Role(r.Role),
		InvitedBy: r.InvitedBy, ExpiresAt: r.ExpiresAt.UTC()}
}

type passkeyRow struct {
	bun.BaseModel `bun:"table:staff_passkeys,alias:staff_passkeys"`

	ID         []byte     `bun:"id,pk"`
	CompanyID  uuid.UUID  `bun:"company_id"`
	MemberID   uuid.UUID  `bun:"member_id"`
	Name       string     `bun:"name"`
	Credential []byte     `bun:"credential"`
	CreatedAt  time.Time  `bun:"created_at"`
	LastUsedAt *time.Time `bun:"last_used_at"`
}

func (r passkeyRow) passkey() staff.Passkey {
	return staff.Passkey{ID: r.ID, Company: domain.CompanyID(r.CompanyID), Member: r.MemberID, Name: r.Name,
		Credential: r.Credential, CreatedAt: r.CreatedAt.UTC(), LastUsedAt: utcPtr(r.LastUsedAt)}
}

func (s *Staff) SaveInvite(ctx context.Context, in staff.Invite) error {
	row := inviteRow{CompanyID: uuid.UUID(in.Company), TokenHash: in.TokenHash, Email: in.Email, Role: string(in.Role),
		InvitedBy: in.InvitedBy, ExpiresAt: in.ExpiresAt.UTC()}
	return translate(runInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tenantOf(tx, in.Company).DeleteModel((*inviteRow)(nil)).Where("email = ?", in.Email).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(&row).Exec(ctx)
		return err
	}))
}

func (s *Staff) ClaimInvite(ctx context.Context, company domain.CompanyID, tokenHash []byte, now time.Time) (staff.Member, error) {
	var m staff.Member
	expired := false
	err := runInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var inv inviteRow
		if err := tenantOf(tx, company).SelectModel(&inv).Where("token_hash = ?", tokenHash).Scan(ctx); err != nil {
			return err
		}
		// The deletion decides between two claims of one link at once.
		if err := affectedOne(tenantOf(tx, company).DeleteModel((*inviteRow)(nil)).Where("token_hash = ?", tokenHash).Exec(ctx)); err != nil {
			return err
		}
		if !now.Before(inv.ExpiresAt) {
			expired = true // an expired link is spent too: its row goes
			return nil
		}
		var row memberRow
		err := translate(tenantOf(tx, company).SelectModel(&row).Where("email = ?", inv.Email).Scan(ctx))
		if errors.Is(err, domain.ErrNotFound) {
			row = memberRow{ID: uuid.Must(uuid.NewV7()), CompanyID: uuid.UUID(company), Email: inv.Email, Role: inv.Role, CreatedAt: now.UTC()}
			_, err = tx.NewInsert().Model(&row).Exec(ctx)
		}
		m = row.member()
		return err
	})
	if err = translate(err); err != nil {
		return staff.Member{}, err
	}
	if expired {
		return staff.Member{}, domain.ErrNotFound
	}
	return m, nil
}

func (s *Staff) Member(ctx context.Context, company domain.CompanyID, id uuid.UUID) (staff.Member, error) {
	var row memberRow
	if err := tenantOf(conn(ctx, s.db), company).SelectModel(&row).Where("id = ?", id).Scan(ctx); err != nil {
		return staff.Member{}, translate(err)
	}
	return row.member(), nil
}

func (s *Staff) Members(ctx context.Context, company domain.CompanyID) ([]staff.Member, error) {
	var rows []memberRow
	if err := tenantOf(conn(ctx, s.db), company).SelectModel(&rows).OrderExpr("email").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	out := make([]staff.Member, len(rows))
	for i, r := range rows {
		out[i] = r.member()
	}
	return out, nil
}

func (s *Staff) MembersByEmail(ctx context.Context, email string) ([]staff.Member, error) {
	var rows []memberRow
	err := acrossCompanies(conn(ctx, s.db), "single sign-on names a person by a verified address before the company is known").
		NewSelect().Model(&rows).Where("email = ?", email).OrderExpr("company_id").Scan(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]staff.Member, len(rows))
	for i, r := range rows {
		out[i] = r.member()
	}
	return out, nil
}

func (s *Staff) Invites(ctx context.Context, company domain.CompanyID, now time.Time) ([]staff.Invite, error) {
	var rows []inviteRow
	if err := tenantOf(conn(ctx, s.db), company).SelectModel(&rows).OrderExpr("email").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	var out []staff.Invite
	for _, r := range rows {
		if now.Before(r.ExpiresAt) {
			out = append(out, r.invite())
		}
	}
	return out, nil
}

// lockMember locks company's members in tx (so that two admins demoting
// each other at once cannot both succeed) and answers whether member id is
// one of them and whether another of them is an admin.
func lockMember(ctx context.Context, tx bun.Tx, company domain.CompanyID, id uuid.UUID) (otherAdmin bool, err error) {
	var rows []memberRow
	q := tenantOf(tx, company).SelectModel(&rows).OrderExpr("id")
	if tx.Dialect().Name() == dialect.PG {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return false, err
	}
	found := false
	for _, r := range rows {
		if r.ID == id {
			found = true
		} else if r.Role == string(staff.RoleAdmin) {
			otherAdmin = true
		}
	}
	if !found {
		return false, domain.ErrNotFound
	}
	return otherAdmin, nil
}

func (s *Staff) SetRole(ctx context.Context, company domain.CompanyID, id uuid.UUID, role staff.Role) error {
	return translate(runInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		otherAdmin, err := lockMember(ctx, tx, company, id)
		if err != nil {
			return err
		}
		if role != staff.RoleAdmin && !otherAdmin {
			return domain.ErrConflict // the company keeps an admin
		}
		_, err = tenantOf(tx, company).UpdateModel((*memberRow)(nil)).Set("role = ?", string(role)).Where("id = ?", id).Exec(ctx)
		return err
	}))
}

func (s *Staff) RemoveMember(ctx context.Context, company domain.CompanyID, id uuid.UUID) error {
	return translate(runInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		otherAdmin, err := lockMember(ctx, tx, company, id)
		if err != nil {
			return err
		}
		if !otherAdmin {
			return domain.ErrConflict // the company keeps an admin
		}
		if _, err := tenantOf(tx, company).DeleteModel((*passkeyRow)(nil)).Where("member_id = ?", id).Exec(ctx); err != nil {
			return err
		}
		_, err = tenantOf(tx, company).DeleteModel((*memberRow)(nil)).Where("id = ?", id).Exec(ctx)
		return err
	}))
}

func (s *Staff) AddPasskey(ctx context.Context, p staff.Passkey) error {
	row := passkeyRow{ID: p.ID, CompanyID: uuid.UUID(p.Company), MemberID: p.Member, Name: p.Name, Credential: p.Credential,
		CreatedAt: p.CreatedAt.UTC()}
	_, err := conn(ctx, s.db).NewInsert().Model(&row).Exec(ctx)
	return translate(err)
}

func (s *Staff) Passkeys(ctx context.Context, company domain.CompanyID, member uuid.UUID) ([]staff.Passkey, error) {
	var rows []passkeyRow
	if err := tenantOf(conn(ctx, s.db), company).SelectModel(&rows).Where("member_id = ?", member).OrderExpr("created_at").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	out := make([]staff.Passkey, len(rows))
	for i, r := range rows {
		out[i] = r.passkey()
	}
	return out, nil
}

func (s *Staff) UsePasskey(ctx context.Context, company domain.CompanyID, id []byte, credential []byte, at time.Time) error {
	return affectedOne(tenantOf(conn(ctx, s.db), company).UpdateModel((*passkeyRow)(nil)).
		Set("credential = ?", credential).Set("last_used_at = ?", at.UTC()).Where("id = ?", id).Exec(ctx))
}

func (s *Staff) RemovePasskey(ctx context.Context, company domain.CompanyID, member uuid.UUID, id []byte) error {
	return affectedOne(tenantOf(conn(ctx, s.db), company).DeleteModel((*passkeyRow)(nil)).
		Where("member_id = ?", member).Where("id = ?", id).Exec(ctx))
}
