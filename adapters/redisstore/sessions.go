package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

var _ ports.Sessions = (*Store)(nil)

// sessionKey keeps a session under the SHA-256 of its key: a copy of Redis
// names no live session.
func (s *Store) sessionKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return s.prefix + "session:" + hex.EncodeToString(h[:])
}

func (s *Store) Load(ctx context.Context, key string) ([]byte, error) {
	v, err := s.rdb.Get(ctx, s.sessionKey(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, domain.Unavailable(fmt.Errorf("redis: load session: %w", err))
	}
	return v, nil
}

func (s *Store) Store(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := s.rdb.Set(ctx, s.sessionKey(key), value, ttl).Err(); err != nil {
		return domain.Unavailable(fmt.Errorf("redis: store session: %w", err))
	}
	return nil
}

func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.rdb.Del(ctx, s.sessionKey(key)).Err(); err != nil {
		return domain.Unavailable(fmt.Errorf("redis: delete session: %w", err))
	}
	return nil
}
