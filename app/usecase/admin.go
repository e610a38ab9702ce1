package usecase

import (
	"context"
	"fmt"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// Admin is what operators do from the command line.
type Admin struct {
	companies ports.CompanyRepository
	customers ports.CustomerRepository
	clients   ports.ClientRepository
	tokens    ports.TokenStore
	now       func() time.Time
}

// NewAdmin wires the admin use case.
func NewAdmin(companies ports.CompanyRepository, customers ports.CustomerRepository, clients ports.ClientRepository, tokens ports.TokenStore) *Admin {
	return &Admin{companies: companies, customers: customers, clients: clients, tokens: tokens, now: time.Now}
}

// NewCompanyInput names a new practice.
type NewCompanyInput struct {
	Name         string
	TimeZone     string
	Plan         string
	StorageQuota int64
	// BookingNoticeMinutes, when set, replaces the default notice of two hours.
	BookingNoticeMinutes *int
}

// CreateCompany stores a new practice and returns its upload secret, shown only this once.
func (a *Admin) CreateCompany(ctx context.Context, in NewCompanyInput) (domain.Company, domain.Secret, error) {
	plan := domain.PlanBasic
	if in.Plan != "" {
		p, err := domain.ParsePlan(in.Plan)
		if err != nil {
			return domain.Company{}, "", err
		}
		plan = p
	}
	company, secret, err := domain.NewCompany(in.Name, in.TimeZone, plan, in.StorageQuota, a.now())
	if err != nil {
		return domain.Company{}, "", err
	}
	if in.BookingNoticeMinutes != nil {
		if err := company.SetBookingNotice(*in.BookingNoticeMinutes); err != nil {
			return domain.Company{}, "", err
		}
	}
	if err := a.companies.Create(ctx, company); err != nil {
		return domain.Company{}, "", fmt.Errorf("store company: %w", err)
	}
	return company, secret, nil
}

// RotateUploadSecret replaces the company's upload secret; the old one stops working at once.
func (a *Admin) RotateUploadSecret(ctx context.Context, company domain.CompanyID) (domain.Secret, error) {
	secret, err := domain.NewSecret()
	if err != nil {
		return "", err
	}
	if err := a.companies.SetUploadSecretHash(ctx, company, secret.Hash()); err != nil {
		return "", fmt.Errorf("rotate upload secret: %w", err)
	}
	return secret, nil
}

// NewCustomerInput names a new patient; ID zero lets the store choose.
type NewCustomerInput struct {
	Company   domain.CompanyID
	ID        domain.CustomerID
	FirstName string
	LastName  string
	BirthDate string
}

// CreateCustomer stores a patient of an existing company.
func (a *Admin) CreateCustomer(ctx context.Context, in NewCustomerInput) (domain.Customer, error) {
	if _, err := a.companies.Get(ctx, in.Company); err != nil {
		return domain.Customer{}, fmt.Errorf("company %s: %w", in.Company, err)
	}
	c, err := domain.NewCustomer(in.Company, in.ID, in.FirstName, in.LastName, in.BirthDate, a.now())
	if err != nil {
		return domain.Customer{}, err
	}
	return a.customers.Create(ctx, c)
}

// NewClientInput names a new OAuth client; empty Scopes means every scope.
type NewClientInput struct {
	Company domain.CompanyID
	Name    string
	Scopes  string
}

// CreateClient registers an integrator's client for a company and returns
// its secret, shown only this once.
func (a *Admin) CreateClient(ctx context.Context, in NewClientInput) (domain.Client, domain.Secret, error) {
	if _, err := a.companies.Get(ctx, in.Company); err != nil {
		return domain.Client{}, "", fmt.Errorf("company %s: %w", in.Company, err)
	}
	var scopes domain.Scopes
	if in.Scopes != "" {
		s, err := domain.ParseScopes(in.Scopes)
		if err != nil {
			return domain.Client{}, "", err
		}
		scopes = s
	}
	client, secret, err := domain.NewClient(in.Company, in.Name, scopes, a.now())
	if err != nil {
		return domain.Client{}, "", err
	}
	if err := a.clients.Create(ctx, client); err != nil {
		return domain.Client{}, "", fmt.Errorf("store client: %w", err)
	}
	return client, secret, nil
}

// RevokeClient marks the client revoked and ends its live tokens at once.
// Run again, it finishes a revocation whose token step failed.
func (a *Admin) RevokeClient(ctx context.Context, id domain.ClientID) error {
	if err := a.clients.Revoke(ctx, id, a.now()); err != nil {
		return fmt.Errorf("client %s: %w", id, err)
	}
	if err := a.tokens.RevokeClient(ctx, id); err != nil {
		return fmt.Errorf("end tokens of client %s: %w", id, err)
	}
	return nil
}
