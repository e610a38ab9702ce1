package telemetry

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
)

// AttributeSets keeps the attribute set of each key it is asked for, so
// that a measurement on a hot path (every request, every query) does not
// copy, sort and hash its attributes again each time. Keys are the bounded
// labels of a series (a route, a status, an operation); past max distinct
// keys a set is built each time and not kept.
type AttributeSets[K comparable] struct {
	build func(K) []attribute.KeyValue
	max   int64
	kept  atomic.Int64
	sets  sync.Map // K → attribute.Set
}

// NewAttributeSets keeps up to max sets, each made of build(key).
func NewAttributeSets[K comparable](max int64, build func(K) []attribute.KeyValue) *AttributeSets[K] {
	return &AttributeSets[K]{build: build, max: max}
}

// Of is the attribute set of key.
func (s *AttributeSets[K]) Of(key K) attribute.Set {
	if set, ok := s.sets.Load(key); ok {
		return set.(attribute.Set)
	}
	set := attribute.NewSet(s.build(key)...)
	if s.kept.Load() < s.max {
		if _, loaded := s.sets.LoadOrStore(key, set); !loaded {
			s.kept.Add(1)
		}
	}
	return set
}
