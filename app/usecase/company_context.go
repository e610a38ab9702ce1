package usecase

import (
	"context"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// ruleContextOf is now in the company's zone, where dates are judged.
func ruleContextOf(ctx context.Context, companies ports.CompanyRepository, company domain.CompanyID, now func() time.Time) (domain.RuleContext, error) {
	_, rc, err := companyContext(ctx, companies, company, now)
	return rc, err
}

// companyContext reads the company once: itself, and now in its zone.
func companyContext(ctx context.Context, companies ports.CompanyRepository, company domain.CompanyID, now func() time.Time) (domain.Company, domain.RuleContext, error) {
	c, err := companies.Get(ctx, company)
	if err != nil {
		return c, domain.RuleContext{}, err
	}
	zone, err := c.Location()
	if err != nil {
		return c, domain.RuleContext{}, err
	}
	return c, domain.RuleContext{Now: now().UTC().Truncate(time.Second), Zone: zone}, nil
}
