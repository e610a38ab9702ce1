package web

import (
	"context"
	"errors"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// storage is fiber's session storage on the token store: sessions live in
// Redis (every replica sees them) or in process, under their keys' hashes.
type storage struct{ sessions ports.Sessions }

// storeTimeout bounds one round trip to the token store.
const storeTimeout = 2 * time.Second

func (s storage) Get(key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	v, err := s.sessions.Load(ctx, key)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil // fiber's word for "no such session"
	}
	return v, err
}

func (s storage) Set(key string, val []byte, exp time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return s.sessions.Store(ctx, key, val, exp)
}

func (s storage) Delete(key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return s.sessions.Delete(ctx, key)
}

// Reset would end every session of every company; nothing calls it.
func (storage) Reset() error { return errors.New("settings: sessions are not reset in bulk") }

func (storage) Close() error { return nil }
