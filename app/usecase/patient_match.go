package usecase

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/patientmatch"
	"github.com/praxis-health/praxis/ports"
)

// Match finds the practice's patients that the facts asked may be: candidates from indexed searches only
// (patientmatch.Facts.MatchSearches), each graded (patientmatch.Compare),
// best first, at most count. The audit event names the candidates answered.
func (r *Records) Match(ctx context.Context, grant domain.Grant, facts patientmatch.Facts, count int) ([]ports.Match, error) {
	kind := domain.CustomersKind()
	if err := grant.Require(domain.ReadScope(kind.Slug)); err != nil {
		return nil, err
	}
	if facts.Phone != nil {
		rc, err := r.ruleContext(ctx, grant.CompanyID)
		if err != nil {
			return nil, err
		}
		if n, ok := domain.PhoneE164(*facts.Phone, rc.Zone.String()); ok {
			facts.Phone = &n
		}
	}
	searches, err := facts.MatchSearches()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	type scored struct {
		obj   ports.StoredObject
		score float64
		grade patientmatch.Grade
	}
	var found []scored
	for _, conds := range searches {
		page, err := r.store.List(ctx, grant.CompanyID, kind, domain.ListQuery{Limit: patientmatch.MaxCandidates, Search: conds})
		if err != nil {
			return nil, err
		}
		for _, o := range page.Items {
			if seen[o.ID] {
				continue
			}
			seen[o.ID] = true
			if score, grade, ok := patientmatch.Compare(facts, patientmatch.FactsOf(o.Payload)); ok {
				found = append(found, scored{o, score, grade})
			}
		}
	}
	slices.SortFunc(found, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.obj.Change, b.obj.Change)
	})
	if count > 0 && len(found) > count {
		found = found[:count]
	}
	out := make([]ports.Match, len(found))
	for i, f := range found {
		out[i] = ports.Match{Customer: f.obj, Score: f.score, Grade: f.grade}
		touch(ctx, kind, f.obj)
	}
	return out, nil
}

// MatchOnce is the native match (POST …/customers/match; the door reads
// its body, patientmatch.ParseRequest): the candidates answered, under the
// request's Idempotency-Key like every POST: a retry replays the first answer.
func (r *Records) MatchOnce(ctx context.Context, grant domain.Grant, req patientmatch.Request, key *ports.IdempotencyKey) (ports.Written[[]ports.Match], error) {
	if err := grant.Require(domain.ReadScope(domain.CustomersKind().Slug)); err != nil {
		return ports.Written[[]ports.Match]{}, err
	}
	count := 0
	if req.Count != nil {
		count = *req.Count
	}
	return idempotently(ctx, &r.writeOnce, grant, key, time.Now(), keptMatches, func(ctx context.Context) (ports.Written[[]ports.Match], error) {
		matches, err := r.Match(ctx, grant, patientmatch.FactsOf(req.Customer), count)
		if err != nil {
			return ports.Written[[]ports.Match]{}, err
		}
		if req.OnlyCertain != nil && *req.OnlyCertain {
			matches = patientmatch.OnlyCertain(matches, func(m ports.Match) patientmatch.Grade { return m.Grade })
		}
		return ports.Written[[]ports.Match]{Outcome: domain.OutcomeOK, Value: matches}, nil
	})
}

// keptMatches keeps a match's candidates as the resource API renders them.
var keptMatches = keeping[[]ports.Match]{
	encode: func(m []ports.Match) ([]byte, error) { return ports.AppendMatches(nil, m), nil },
	decode: ports.ParseMatches,
}
