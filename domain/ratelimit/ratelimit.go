package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// Limit is how many resource requests one OAuth client may make in a window.
type Limit struct {
	Limit  int
	Window time.Duration
}

// Limits are the limits by plan (docs/contract.md §4).
type Limits map[domain.Plan]Limit

// Of is the plan's limit, basic's for a plan that has none.
func (l Limits) Of(p domain.Plan) Limit {
	if limit, ok := l[p]; ok {
		return limit
	}
	return l[domain.PlanBasic]
}

// DefaultLimits: basic 600, pro 3000, enterprise 12000 requests a minute.
const DefaultLimits = "basic=600/m,pro=3000/m,enterprise=12000/m"

// ParseLimits reads "basic=600/m,pro=3000/m,enterprise=12000/m"; the
// window is s, m or h. Every plan needs a limit.
func ParseLimits(s string) (Limits, error) {
	out := Limits{}
	for _, part := range strings.Split(s, ",") {
		name, spec, ok := strings.Cut(strings.TrimSpace(part), "=")
		count, unit, ok2 := strings.Cut(spec, "/")
		plan, err := domain.ParsePlan(name)
		n, nerr := strconv.Atoi(count)
		window, werr := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
		if !ok || !ok2 || err != nil || nerr != nil || n < 1 || !werr {
			return nil, fmt.Errorf("rate limit %q: want plan=N/s|m|h", part)
		}
		out[plan] = Limit{Limit: n, Window: window}
	}
	for _, p := range []domain.Plan{domain.PlanBasic, domain.PlanPro, domain.PlanEnterprise} {
		if _, ok := out[p]; !ok {
			return nil, fmt.Errorf("rate limits: no limit for the plan %s", p)
		}
	}
	return out, nil
}

// State is a client's budget after counting one request.
type State struct {
	Limit     int
	Window    time.Duration
	Remaining int
	// Reset is when the window ends and the budget is full again.
	Reset time.Duration
}

// Exceeded reports whether the counted request was over the limit.
func (r State) Exceeded() bool { return r.Remaining < 0 }

// ResetSeconds rounds the reset up to whole seconds, at least 1.
func (r State) ResetSeconds() int { return max(int((r.Reset+time.Second-1)/time.Second), 1) }

// UsageDays is how many days of calls the token store keeps per client.
const UsageDays = 7

// Usage is what a client did lately: its resource API calls per UTC
// day, newest first (UsageDays of them, zeros too), and its last call.
type Usage struct {
	Days    []DayCalls
	LastUse *time.Time
}

// DayCalls is one UTC day's calls.
type DayCalls struct {
	Day   string // 2006-01-02
	Calls int64
}

// Today is the calls of the newest day.
func (u Usage) Today() int64 {
	if len(u.Days) == 0 {
		return 0
	}
	return u.Days[0].Calls
}

// Total is the calls of every day kept.
func (u Usage) Total() int64 {
	var n int64
	for _, d := range u.Days {
		n += d.Calls
	}
	return n
}

// UsageDay is the day number (days since 1970-01-01 UTC) of t.
func UsageDay(t time.Time) int64 { return t.UTC().Unix() / 86400 }
