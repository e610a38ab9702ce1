package ratelimit_test

import (
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
)

// TestRateLimitsOf: a plan's own limit, basic's for a plan without one.
func TestRateLimitsOf(t *testing.T) {
	t.Parallel()
	limits := ratelimit.Limits{domain.PlanBasic: {Limit: 2, Window: time.Minute}, domain.PlanPro: {Limit: 3, Window: time.Hour}}
	for plan, want := range map[domain.Plan]ratelimit.Limit{
		domain.PlanBasic: {Limit: 2, Window: time.Minute}, domain.PlanPro: {Limit: 3, Window: time.Hour},
		domain.PlanEnterprise: {Limit: 2, Window: time.Minute},
	} {
		if got := limits.Of(plan); got != want {
			t.Errorf("%s: %+v, want %+v", plan, got, want)
		}
	}
}
