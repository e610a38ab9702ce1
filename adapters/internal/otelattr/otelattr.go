// Package otelattr is what the adapters' instruments share: attribute sets
// kept built for the hot paths. It is no adapter: adapters/internal holds
// only such helpers, which import nothing of ours.
package otelattr

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
)

// Sets keeps the attribute set of each key it is asked for, so
// that a measurement on a hot path (every request, every query) does not
// copy, sort and hash its attributes again each time. Keys are the bounded
// labels of a series (a route, a status, an operation); past max distinct
// keys a set is built each time and not kept.
type Sets[K comparable] struct {
	build func(K) []attribute.KeyValue
	max   int64
	kept  atomic.Int64
	sets  sync.Map // K → attribute.Set
}

// NewSets keeps up to max sets, each made of build(key).
func NewSets[K comparable](max int64, build func(K) []attribute.KeyValue) *Sets[K] {
	return &Sets[K]{build: build, max: max}
}

// Of is the attribute set of key.
func (s *Sets[K]) Of(key K) attribute.Set {
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
