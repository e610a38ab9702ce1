package ports

import (
	"context"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// CompanyInput names a practice; ExternalRef, when set, is the resource
// that declares it (a Kubernetes object's UID).
type CompanyInput struct {
	Name         string
	TimeZone     string
	Plan         string
	StorageQuota int64
	// BookingNoticeMinutes, when set, replaces the default notice of two hours.
	BookingNoticeMinutes *int
	ExternalRef          string
}

// ClientInput names an OAuth client of a company; empty Scopes means every
// scope. ExternalRef, when set, is the resource that declares it.
type ClientInput struct {
	Company     domain.CompanyID
	Name        string
	Scopes      string
	ExternalRef string
	// KeySetURL or KeySet (a JWK Set) registers the client's public keys:
	// it then signs in with signed assertions (SMART Backend Services).
	KeySetURL string
	KeySet    []byte
}

// Tenants is the driving port of the operator: practices and their clients
// as declared resources. The admin commands use the same use case.
type Tenants interface {
	// EnsureCompany creates the company declared by in.ExternalRef the first
	// time (returning its upload secret, once) and applies in's settings later.
	EnsureCompany(ctx context.Context, in CompanyInput) (domain.Company, domain.Secret, error)
	RotateUploadSecret(ctx context.Context, company domain.CompanyID) (domain.Secret, error)
	// RetireCompany revokes the company's clients and, with disable, disables it. No data is deleted.
	RetireCompany(ctx context.Context, company domain.CompanyID, disable bool) error
	// EnsureClient is EnsureCompany for a company's client.
	EnsureClient(ctx context.Context, in ClientInput) (domain.Client, domain.Secret, error)
	RotateClientSecret(ctx context.Context, company domain.CompanyID, client domain.Client, overlap time.Duration) (domain.Secret, error)
	RevokeClient(ctx context.Context, client domain.ClientID) error
	// EraseCompany deletes every row, object, token and session of the
	// company and keeps one erasure record; domain.ErrRetentionHold while a
	// hold is in force. Run again, it finishes an interrupted erasure, and
	// for an erased company it answers the record and the proof again.
	EraseCompany(ctx context.Context, company domain.CompanyID, in EraseInput) (ErasureReport, error)
}

// EraseInput says who erases a company and the export taken before, if any.
type EraseInput struct {
	By           string
	ExportSHA256 string
}

// ErasureReport is an erasure's record and its proof: the schema walked
// (the company's rows left in each table with a company column) and the
// blob store walked (its objects left) — all zero.
type ErasureReport struct {
	Erasure   domain.Erasure
	Remaining map[string]int64
	Objects   int64
}
