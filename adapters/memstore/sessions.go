package memstore

import (
	"context"
	"crypto/sha256"
	"slices"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// session is one value of the settings pages' state, kept until its expiry.
type session struct {
	value   []byte
	expires time.Time
}

func sessionKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return string(h[:])
}

func (s *Store) Load(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.sessions[sessionKey(key)]
	if !ok || !s.now().Before(e.expires) {
		return nil, domain.ErrNotFound
	}
	return slices.Clone(e.value), nil
}

func (s *Store) Store(_ context.Context, key string, value []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, now := sessionKey(key), s.now()
	if _, ok := s.sessions[k]; !ok && len(s.sessions) >= s.limits.MaxSessions {
		s.makeRoomForSession(now)
	}
	s.sessions[k] = session{value: slices.Clone(value), expires: now.Add(ttl)}
	return nil
}

func (s *Store) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, sessionKey(key))
	return nil
}

// makeRoomForSession drops the expired sessions, or else the one closest to
// expiry. It scans every session, which happens only when the store is full.
func (s *Store) makeRoomForSession(now time.Time) {
	var soonest string
	var at time.Time
	for k, e := range s.sessions {
		if !now.Before(e.expires) {
			delete(s.sessions, k)
			continue
		}
		if soonest == "" || e.expires.Before(at) {
			soonest, at = k, e.expires
		}
	}
	if len(s.sessions) >= s.limits.MaxSessions {
		delete(s.sessions, soonest)
	}
}
