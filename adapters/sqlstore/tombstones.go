package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/ports"
)

// Tombstones is ports.Tombstones in the database: the one durable list of
// what has ended, read whole by every replica.
type Tombstones struct{ db *bun.DB }

var _ ports.Tombstones = (*Tombstones)(nil)

// NewTombstones returns the tombstones of db.
func NewTombstones(db *bun.DB) *Tombstones { return &Tombstones{db: db} }

type tombstoneRow struct {
	bun.BaseModel `bun:"table:tombstones,alias:tombstones"`

	Seq      int64  `bun:"seq,pk,autoincrement"`
	Key      []byte `bun:"key"`
	BuriedMS int64  `bun:"buried_ms"`
	UntilMS  int64  `bun:"until_ms"`
}

// Bury inserts on its own, outside any transaction of the caller: the
// deletion it stands for must hold even if the caller's work rolls back.
func (s *Tombstones) Bury(ctx context.Context, key [32]byte, until time.Time) error {
	row := tombstoneRow{Key: key[:], BuriedMS: time.Now().UnixMilli(), UntilMS: until.UnixMilli()}
	_, err := s.db.NewInsert().Model(&row).Exec(ctx)
	return translate(err)
}

func (s *Tombstones) Since(ctx context.Context, t, now time.Time) ([]ports.Tombstone, error) {
	var rows []tombstoneRow
	err := acrossCompanies(s.db, "ended tokens and sessions are one list for all companies, named by digests alone").NewSelect().Model(&rows).Column("key", "until_ms").
		Where("buried_ms >= ?", t.UnixMilli()).Where("until_ms > ?", now.UnixMilli()).Scan(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]ports.Tombstone, 0, len(rows))
	for _, r := range rows {
		if len(r.Key) != 32 {
			continue
		}
		out = append(out, ports.Tombstone{Key: [32]byte(r.Key), Until: time.UnixMilli(r.UntilMS)})
	}
	return out, nil
}

func (s *Tombstones) Prune(ctx context.Context, now time.Time) (int, error) {
	res, err := acrossCompanies(s.db, "ended tokens and sessions are one list for all companies, named by digests alone").NewDelete().Model((*tombstoneRow)(nil)).
		Where("until_ms <= ?", now.UnixMilli()).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
