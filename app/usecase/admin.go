package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// Admin is what operators do from the command line and, as ports.Tenants, through the Kubernetes operator.
type Admin struct {
	companies ports.CompanyRepository
	customers ports.CustomerRepository
	clients   ports.ClientRepository
	tokens    ports.TokenStore
	tx        ports.Transactor
	audits    *Auditor
	erasures  ports.Erasures
	leases    ports.CompanyLeases
	blobs     ports.BlobStore
	now       func() time.Time
}

var _ ports.Tenants = (*Admin)(nil)

// NewAdmin wires the admin use case; audits records the patients the
// operator writes; erasures and blobs end a company that leaves, under
// the company's lease (no import or restore of it meanwhile).
func NewAdmin(companies ports.CompanyRepository, customers ports.CustomerRepository, clients ports.ClientRepository, tokens ports.TokenStore,
	tx ports.Transactor, audits *Auditor, erasures ports.Erasures, leases ports.CompanyLeases, blobs ports.BlobStore) *Admin {
	return &Admin{companies: companies, customers: customers, clients: clients, tokens: tokens, tx: tx, audits: audits,
		erasures: erasures, leases: leases, blobs: blobs, now: time.Now}
}

// NewCompanyInput names a new practice.
type NewCompanyInput = ports.CompanyInput

func companySettings(in NewCompanyInput) (domain.CompanySettings, error) {
	s := domain.CompanySettings{Name: in.Name, TimeZone: in.TimeZone, StorageQuota: in.StorageQuota}
	if in.Plan != "" {
		p, err := domain.ParsePlan(in.Plan)
		if err != nil {
			return s, err
		}
		s.Plan = p
	}
	return s, nil
}

// CreateCompany stores a new practice and returns its upload secret, shown only this once.
func (a *Admin) CreateCompany(ctx context.Context, in NewCompanyInput) (domain.Company, domain.Secret, error) {
	s, err := companySettings(in)
	if err != nil {
		return domain.Company{}, "", err
	}
	company, secret, err := domain.NewCompany(s.Name, s.TimeZone, s.Plan, s.StorageQuota, a.now())
	if err != nil {
		return domain.Company{}, "", err
	}
	company.ExternalRef = in.ExternalRef
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

// EnsureCompany makes the company that in.ExternalRef declares exist with
// in's settings: it creates it the first time (the secret is then returned,
// once) and later finds it by the reference, so that a repeated or crashed
// declaration never makes a second company, and applies changed settings.
func (a *Admin) EnsureCompany(ctx context.Context, in NewCompanyInput) (domain.Company, domain.Secret, error) {
	if in.ExternalRef == "" {
		return domain.Company{}, "", fmt.Errorf("a declared company needs a reference")
	}
	company, err := a.companies.FindByExternalRef(ctx, in.ExternalRef)
	if errors.Is(err, domain.ErrNotFound) {
		created, secret, err := a.CreateCompany(ctx, in)
		if !errors.Is(err, domain.ErrConflict) {
			return created, secret, err
		}
		// A concurrent declaration won the unique reference: take its company.
		company, err = a.companies.FindByExternalRef(ctx, in.ExternalRef)
		if err != nil {
			return domain.Company{}, "", fmt.Errorf("find company: %w", err)
		}
	} else if err != nil {
		return domain.Company{}, "", fmt.Errorf("find company: %w", err)
	}
	company, err = a.UpdateCompany(ctx, company, in)
	return company, "", err
}

// UpdateCompany applies in's name, time zone, plan and storage quota to company.
func (a *Admin) UpdateCompany(ctx context.Context, company domain.Company, in NewCompanyInput) (domain.Company, error) {
	s, err := companySettings(in)
	if err != nil {
		return domain.Company{}, err
	}
	before := company.Settings()
	if err := company.Apply(s, a.now()); err != nil {
		return domain.Company{}, err
	}
	if company.Settings() == before {
		return company, nil
	}
	if err := a.companies.UpdateSettings(ctx, company); err != nil {
		return domain.Company{}, fmt.Errorf("update company: %w", err)
	}
	return company, nil
}

// RetireCompany is what ends a company without deleting any of its data:
// its clients are revoked and their tokens end at once; with disable, the
// company also uploads nothing more and gets no new clients or tokens.
// Run again, it finishes what a failure interrupted.
func (a *Admin) RetireCompany(ctx context.Context, id domain.CompanyID, disable bool) error {
	if disable {
		if err := a.companies.Disable(ctx, id, a.now()); err != nil {
			return fmt.Errorf("disable company %s: %w", id, err)
		}
	}
	clients, err := a.clients.ActiveIDs(ctx, id)
	if err != nil {
		return fmt.Errorf("clients of company %s: %w", id, err)
	}
	for _, c := range clients {
		if err := a.RevokeClient(ctx, c); err != nil {
			return err
		}
	}
	return nil
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
	// The operator writing a patient is an audit event of the practice,
	// committed with the patient.
	ev := audit.New(a.now())
	ev.Agent = audit.Agent{Type: audit.AgentOperator, ID: "praxis admin", Name: "operator"}
	ev.Action, ev.Section = audit.ActionCreate, "customers"
	ctx = audit.With(ctx, audit.NewAccess(ev, nil))
	var stored domain.Customer
	err = a.tx.InTx(ctx, func(ctx context.Context) error {
		if stored, err = a.customers.Create(ctx, c); err != nil {
			return err
		}
		audit.Touch(ctx, stored.ID)
		audit.Created(ctx, fmt.Sprint(stored.ID))
		return a.audits.inTx(ctx, in.Company, domain.OutcomeCreated)
	})
	return stored, err
}

// NewClientInput names a new OAuth client; empty Scopes means every scope.
type NewClientInput = ports.ClientInput

func clientScopes(in NewClientInput) (domain.Scopes, error) {
	if in.Scopes == "" {
		return nil, nil
	}
	return domain.ParseScopes(in.Scopes)
}

// CreateClient registers an integrator's client for a company and returns
// its secret, shown only this once.
func (a *Admin) CreateClient(ctx context.Context, in NewClientInput) (domain.Client, domain.Secret, error) {
	company, err := a.companies.Get(ctx, in.Company)
	if err != nil {
		return domain.Client{}, "", fmt.Errorf("company %s: %w", in.Company, err)
	}
	if company.Disabled() {
		return domain.Client{}, "", fmt.Errorf("company %s: %w", in.Company, domain.ErrCompanyDisabled)
	}
	scopes, err := clientScopes(in)
	if err != nil {
		return domain.Client{}, "", err
	}
	client, secret, err := domain.NewClient(in.Company, in.Name, scopes, a.now())
	if err != nil {
		return domain.Client{}, "", err
	}
	client.ExternalRef = in.ExternalRef
	// The egress rules are the fetch's (PRAXIS_WEBHOOK_ALLOW_PRIVATE): here the URL's form.
	if err := CheckKeySet(in.KeySetURL, in.KeySet, true); err != nil {
		return domain.Client{}, "", err
	}
	client.KeySetURL, client.KeySet = in.KeySetURL, in.KeySet
	if err := a.clients.Create(ctx, client); err != nil {
		return domain.Client{}, "", fmt.Errorf("store client: %w", err)
	}
	if client.SignsAssertions() {
		return client, "", nil // it signs in with its key: its secret is never accepted, so none is handed out
	}
	return client, secret, nil
}

// EnsureClient makes the client that in.ExternalRef declares exist with
// in's name and scopes, like EnsureCompany: created the first time (the
// secret is then returned, once), found by the reference afterwards.
func (a *Admin) EnsureClient(ctx context.Context, in NewClientInput) (domain.Client, domain.Secret, error) {
	if in.ExternalRef == "" {
		return domain.Client{}, "", fmt.Errorf("a declared client needs a reference")
	}
	scopes, err := clientScopes(in)
	if err != nil {
		return domain.Client{}, "", err
	}
	client, err := a.clients.FindByExternalRef(ctx, in.Company, in.ExternalRef)
	if errors.Is(err, domain.ErrNotFound) {
		created, secret, err := a.CreateClient(ctx, in)
		if !errors.Is(err, domain.ErrConflict) || errors.Is(err, domain.ErrCompanyDisabled) {
			return created, secret, err
		}
		// A concurrent declaration won the unique reference: take its client.
		if client, err = a.clients.FindByExternalRef(ctx, in.Company, in.ExternalRef); err != nil {
			return domain.Client{}, "", fmt.Errorf("find client: %w", err)
		}
	} else if err != nil {
		return domain.Client{}, "", fmt.Errorf("find client: %w", err)
	}
	before := client
	if err := client.Rename(in.Name, scopes); err != nil {
		return domain.Client{}, "", err
	}
	// Its keys as declared: a key set declared, changed or removed takes
	// effect at the next sign-in (the key cache holds a set five minutes).
	if err := CheckKeySet(in.KeySetURL, in.KeySet, true); err != nil {
		return domain.Client{}, "", err
	}
	client.KeySetURL, client.KeySet = in.KeySetURL, in.KeySet
	if client.Name != before.Name || client.Scopes.String() != before.Scopes.String() ||
		client.KeySetURL != before.KeySetURL || string(client.KeySet) != string(before.KeySet) {
		if err := a.clients.Update(ctx, in.Company, client); err != nil {
			return domain.Client{}, "", fmt.Errorf("update client: %w", err)
		}
	}
	return client, "", nil
}

// RotateClientSecret gives the company's client a new secret; the old one
// goes on working for overlap (none: it stops at once); tokens already
// issued keep theirs.
func (a *Admin) RotateClientSecret(ctx context.Context, company domain.CompanyID, client domain.Client, overlap time.Duration) (domain.Secret, error) {
	secret, err := domain.NewSecret()
	if err != nil {
		return "", err
	}
	client.Rotate(secret, overlap, a.now())
	if err := a.clients.Update(ctx, company, client); err != nil {
		return "", fmt.Errorf("rotate client secret: %w", err)
	}
	return secret, nil
}

// RotateClientSecretOf rotates the secret of the client with this id (the
// operator's command): a revoked client gets none.
func (a *Admin) RotateClientSecretOf(ctx context.Context, id domain.ClientID, overlap time.Duration) (domain.Client, domain.Secret, error) {
	client, err := a.clients.Get(ctx, id)
	if err != nil {
		return domain.Client{}, "", fmt.Errorf("client %s: %w", id, err)
	}
	if client.RevokedAt != nil {
		return domain.Client{}, "", fmt.Errorf("client %s was revoked: %w", id, domain.ErrInvalid)
	}
	secret, err := a.RotateClientSecret(ctx, client.CompanyID, client, overlap)
	if err != nil {
		return domain.Client{}, "", err
	}
	client.Rotate(secret, overlap, a.now())
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
