package cli

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

func adminCmd() *cobra.Command {
	admin := &cobra.Command{Use: "admin", Short: "Manage companies, customers and clients"}
	company := &cobra.Command{Use: "company", Short: "Manage companies"}
	company.AddCommand(companyCreateCmd(), rotateUploadSecretCmd(), companyHoldCmd(), companyEraseCmd(), restoreCmd())
	customer := &cobra.Command{Use: "customer", Short: "Manage customers"}
	customer.AddCommand(customerCreateCmd())
	client := &cobra.Command{Use: "client", Short: "Manage OAuth clients of integrators"}
	client.AddCommand(clientCreateCmd(), clientRotateSecretCmd(), clientRevokeCmd())
	blobs := &cobra.Command{Use: "blobs", Short: "Maintain the blob store"}
	blobs.AddCommand(blobsSweepCmd())
	admin.AddCommand(company, customer, client, staffCmd(), blobs, importCmd(), exportCmd(), deprecationsCmd(), auditCmd())
	return admin
}

func blobsSweepCmd() *cobra.Command {
	var olderThan time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Delete stored objects that no file record names (left by a crash mid-upload)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withUseCase(cmd, func(ctx context.Context, m *usecase.Maintenance) error {
				report, err := m.SweepOrphans(ctx, olderThan)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), report)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%d companies, %d objects checked, %d orphans deleted (%d bytes)\n",
					report.Companies, report.Objects, report.Deleted, report.DeletedBytes)
				return err
			})
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", time.Hour, "only objects older than this (at least 15m: uploads in flight are never touched)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

type companyOutput struct {
	CompanyID    string `json:"company_id"`
	UploadSecret string `json:"upload_secret"`
}

func companyCreateCmd() *cobra.Command {
	var in usecase.NewCompanyInput
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a company; prints its id and upload secret (shown only once)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withUseCase(cmd, func(ctx context.Context, admin *usecase.Admin) error {
				c, secret, err := admin.CreateCompany(ctx, in)
				if err != nil {
					return err
				}
				out := companyOutput{CompanyID: c.ID.String(), UploadSecret: string(secret)}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), out)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "company id:    %s\nupload secret: %s (shown only once)\n", out.CompanyID, out.UploadSecret)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&in.Name, "name", "", "company name (required)")
	cmd.Flags().Int64Var(&in.StorageQuota, "storage-quota", domain.DefaultStorageQuota, "storage quota in bytes")
	cmd.Flags().StringVar(&in.Plan, "plan", "basic", "plan: basic, pro or enterprise")
	cmd.Flags().StringVar(&in.TimeZone, "time-zone", domain.DefaultTimeZone, "IANA time zone")
	notice := cmd.Flags().Int("booking-notice-minutes", domain.DefaultBookingNotice, "the earliest bookable slot, in minutes from now (0–10080)")
	in.BookingNoticeMinutes = notice
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func rotateUploadSecretCmd() *cobra.Command {
	var companyFlag string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rotate-upload-secret",
		Short: "Replace a company's upload secret; the old one stops working at once",
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := domain.ParseCompanyID(companyFlag)
			if err != nil {
				return fmt.Errorf("--company: %w", err)
			}
			return withUseCase(cmd, func(ctx context.Context, admin *usecase.Admin) error {
				secret, err := admin.RotateUploadSecret(ctx, id)
				if err != nil {
					return err
				}
				out := companyOutput{CompanyID: id.String(), UploadSecret: string(secret)}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), out)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "upload secret: %s (shown only once)\n", out.UploadSecret)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&companyFlag, "company", "", "company UUID (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("company")
	return cmd
}

type holdOutput struct {
	CompanyID string `json:"company_id"`
	// HeldUntil is the hold's last day, "" without a hold.
	HeldUntil string `json:"held_until"`
}

func companyHoldCmd() *cobra.Command {
	var companyFlag, until string
	var clear, asJSON bool
	cmd := &cobra.Command{
		Use:   "hold",
		Short: "Show, set or lift a company's retention hold: until its last day has passed the company cannot be erased",
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := domain.ParseCompanyID(companyFlag)
			if err != nil {
				return fmt.Errorf("--company: %w", err)
			}
			if until != "" && clear {
				return fmt.Errorf("--until sets a hold, --clear lifts it: name one")
			}
			return withUseCase(cmd, func(ctx context.Context, admin *usecase.Admin) error {
				var c domain.Company
				var err error
				if until == "" && !clear {
					c, err = admin.RetentionHold(ctx, id)
				} else {
					c, err = admin.SetRetentionHold(ctx, id, until)
				}
				if err != nil {
					return err
				}
				out := holdOutput{CompanyID: id.String(), HeldUntil: string(c.RetentionHold)}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), out)
				}
				if out.HeldUntil == "" {
					_, err = fmt.Fprintf(cmd.OutOrStdout(), "company %s: no retention hold\n", out.CompanyID)
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "company %s: held until the end of %s (%s)\n", out.CompanyID, out.HeldUntil, c.TimeZone)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&companyFlag, "company", "", "company UUID (required)")
	cmd.Flags().StringVar(&until, "until", "", "the hold's last day, YYYY-MM-DD, in the company's time zone")
	cmd.Flags().BoolVar(&clear, "clear", false, "lift the hold")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("company")
	return cmd
}

type erasureOutput struct {
	CompanyID    string           `json:"company_id"`
	ErasedAt     time.Time        `json:"erased_at"`
	ErasedBy     string           `json:"erased_by"`
	ExportSHA256 string           `json:"export_sha256,omitempty"`
	Rows         int64            `json:"rows_erased"`
	Objects      int64            `json:"objects_erased"`
	AuditSeq     int64            `json:"audit_head_seq"`
	AuditHash    string           `json:"audit_head_hash"`
	Remaining    map[string]int64 `json:"remaining_rows"`
	ObjectsLeft  int64            `json:"remaining_objects"`
}

func companyEraseCmd() *cobra.Command {
	var companyFlag, confirm string
	var in ports.EraseInput
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "erase",
		Short: "Erase a company: every row, stored file, token and session of it; one erasure record remains (refused under a retention hold)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := domain.ParseCompanyID(companyFlag)
			if err != nil {
				return fmt.Errorf("--company: %w", err)
			}
			if !strings.EqualFold(strings.TrimSpace(confirm), id.String()) {
				return fmt.Errorf("erasing cannot be undone: repeat the company's id with --confirm")
			}
			in.By = cmp.Or(strings.TrimSpace(in.By), os.Getenv("USER"), "operator")
			in.ExportSHA256 = strings.ToLower(in.ExportSHA256)
			if in.ExportSHA256 != "" && !isSHA256(in.ExportSHA256) {
				return fmt.Errorf("--export-sha256: must be 64 hexadecimal digits")
			}
			return withUseCase(cmd, func(ctx context.Context, admin *usecase.Admin) error {
				r, err := admin.EraseCompany(ctx, id, in)
				if err != nil {
					return err
				}
				e := r.Erasure
				out := erasureOutput{CompanyID: id.String(), ErasedAt: e.At, ErasedBy: e.By, ExportSHA256: e.ExportSHA256, Rows: e.Rows,
					Objects: e.Blobs, AuditSeq: e.AuditSeq, AuditHash: e.AuditHash, Remaining: r.Remaining, ObjectsLeft: r.Objects}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), out)
				}
				chain := "no audit events"
				if out.AuditSeq > 0 {
					chain = fmt.Sprintf("audit chain ended at event %d (%s)", out.AuditSeq, out.AuditHash)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "company %s erased at %s by %s: %d rows, %d stored objects; %s\n"+
					"proof: %d tables walked, no row left; blob store walked, no object left\n",
					out.CompanyID, out.ErasedAt.Format(time.RFC3339), out.ErasedBy, out.Rows, out.Objects, chain, len(out.Remaining))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&companyFlag, "company", "", "company UUID (required)")
	cmd.Flags().StringVar(&confirm, "confirm", "", "the company's UUID once more (required)")
	cmd.Flags().StringVar(&in.By, "by", "", "who erases it, kept in the erasure record (default: $USER, else operator)")
	cmd.Flags().StringVar(&in.ExportSHA256, "export-sha256", "", "SHA-256 of the export taken before, kept in the erasure record")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("company")
	return cmd
}

func isSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

type customerOutput struct {
	CustomerID int64  `json:"customer_id"`
	CompanyID  string `json:"company_id"`
}

func customerCreateCmd() *cobra.Command {
	var companyFlag string
	var id int64
	var in usecase.NewCustomerInput
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a customer (patient) of a company",
		RunE: func(cmd *cobra.Command, _ []string) error {
			company, err := domain.ParseCompanyID(companyFlag)
			if err != nil {
				return fmt.Errorf("--company: %w", err)
			}
			if id < 0 {
				return fmt.Errorf("--id must be positive")
			}
			in.Company, in.ID = company, domain.CustomerID(id)
			return withUseCase(cmd, func(ctx context.Context, admin *usecase.Admin) error {
				c, err := admin.CreateCustomer(ctx, in)
				if err != nil {
					return err
				}
				out := customerOutput{CustomerID: int64(c.ID), CompanyID: c.CompanyID.String()}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), out)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "customer id: %d\n", out.CustomerID)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&companyFlag, "company", "", "company UUID (required)")
	cmd.Flags().StringVar(&in.FirstName, "first-name", "", "first name (required)")
	cmd.Flags().StringVar(&in.LastName, "last-name", "", "last name (required)")
	cmd.Flags().StringVar(&in.BirthDate, "birth-date", "", "birth date, YYYY-MM-DD")
	cmd.Flags().Int64Var(&id, "id", 0, "customer number (default: the next free one)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	for _, f := range []string{"company", "first-name", "last-name"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

type clientOutput struct {
	ClientID string `json:"client_id"`
	// ClientSecret is empty for a client that signs in with its keys.
	ClientSecret string   `json:"client_secret,omitempty"`
	CompanyID    string   `json:"company_id"`
	Scopes       []string `json:"scopes"`
}

func clientCreateCmd() *cobra.Command {
	var companyFlag, keySetFile string
	var in usecase.NewClientInput
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an OAuth client of a company; prints its id and secret (shown only once), or, with its public keys, its id",
		RunE: func(cmd *cobra.Command, _ []string) error {
			company, err := domain.ParseCompanyID(companyFlag)
			if err != nil {
				return fmt.Errorf("--company: %w", err)
			}
			in.Company = company
			if keySetFile != "" {
				if in.KeySet, err = os.ReadFile(keySetFile); err != nil { //nolint:gosec // the operator names the file
					return fmt.Errorf("--jwks-file: %w", err)
				}
			}
			return withUseCase(cmd, func(ctx context.Context, admin *usecase.Admin) error {
				c, secret, err := admin.CreateClient(ctx, in)
				if err != nil {
					return err
				}
				out := clientOutput{ClientID: string(c.ID), ClientSecret: string(secret), CompanyID: c.CompanyID.String(), Scopes: c.Scopes.Strings()}
				if c.SignsAssertions() {
					out.ClientSecret = ""
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), out)
				}
				if c.SignsAssertions() {
					_, err = fmt.Fprintf(cmd.OutOrStdout(), "client id:     %s (signs in with its keys: private_key_jwt)\nscopes:        %s\n", out.ClientID, c.Scopes)
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "client id:     %s\nclient secret: %s (shown only once)\nscopes:        %s\n",
					out.ClientID, out.ClientSecret, c.Scopes)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&companyFlag, "company", "", "company UUID (required)")
	cmd.Flags().StringVar(&in.Name, "name", "", "a name for people, e.g. the integrator's product")
	cmd.Flags().StringVar(&in.Scopes, "scopes", "", `space-separated scopes, e.g. "company:read customers:write" (default: every scope)`)
	cmd.Flags().StringVar(&in.KeySetURL, "jwks-url", "", "the client's public keys, a JWK Set at this https URL: it signs in with signed assertions (SMART Backend Services), not a secret")
	cmd.Flags().StringVar(&keySetFile, "jwks-file", "", "the client's public keys, a JWK Set in this file (inline; a URL is preferred)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("company")
	return cmd
}

func clientRotateSecretCmd() *cobra.Command {
	var id string
	var overlap time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rotate-secret",
		Short: "Give an OAuth client a new secret, shown once; the old one keeps working for --overlap",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if overlap < 0 || overlap > 7*24*time.Hour {
				return fmt.Errorf("--overlap: from 0s to 168h, not %s", overlap)
			}
			return withUseCase(cmd, func(ctx context.Context, admin *usecase.Admin) error {
				c, secret, err := admin.RotateClientSecretOf(ctx, domain.ClientID(id), overlap)
				if err != nil {
					return err
				}
				out := map[string]any{"client_id": string(c.ID), "client_secret": string(secret), "previous_secret_valid_until": c.PreviousSecretUntil}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), out)
				}
				until := "no longer"
				if c.PreviousSecretUntil != nil {
					until = "until " + c.PreviousSecretUntil.Format(time.RFC3339)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "client id:     %s\nclient secret: %s (shown only once)\nthe old secret works %s\n", c.ID, secret, until)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&id, "client-id", "", "client id (required)")
	cmd.Flags().DurationVar(&overlap, "overlap", domain.DefaultSecretOverlap, "how long the old secret keeps working (0s: it stops at once)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("client-id")
	return cmd
}

func clientRevokeCmd() *cobra.Command {
	var id string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "revoke",
		Short: "Revoke an OAuth client; its live tokens stop working at once",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withUseCase(cmd, func(ctx context.Context, admin *usecase.Admin) error {
				if err := admin.RevokeClient(ctx, domain.ClientID(id)); err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), map[string]any{"client_id": id, "revoked": true})
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "client %s revoked; its tokens no longer work\n", id)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&id, "client-id", "", "client id (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("client-id")
	return cmd
}

func deprecationsCmd() *cobra.Command {
	var companyID string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "deprecations [--company UUID] [--json]",
		Short: "Who still calls what is deprecated: calls per OAuth client, operation and day",
		RunE: func(cmd *cobra.Command, _ []string) error {
			var company *domain.CompanyID
			if companyID != "" {
				id, err := domain.ParseCompanyID(companyID)
				if err != nil {
					return err
				}
				company = &id
			}
			return withUseCase(cmd, func(ctx context.Context, d *usecase.Deprecations) error {
				calls, err := d.List(ctx, company)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), map[string]any{"data": calls})
				}
				out := cmd.OutOrStdout()
				if len(calls) == 0 {
					_, err := fmt.Fprintln(out, "no calls to deprecated operations or fields")
					return err
				}
				for _, c := range calls {
					if _, err := fmt.Fprintf(out, "%s  company %s  client %s  %s  %d calls\n", c.Day, c.CompanyID, c.ClientID, c.Operation, c.Calls); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&companyID, "company", "", "only this company's clients")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func auditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Verify, export and sweep the audit trail"}
	var companyID, from, to string
	var checkpoints []string
	var retention time.Duration
	var asJSON bool
	company := func() (domain.CompanyID, error) { return domain.ParseCompanyID(companyID) }
	verify := &cobra.Command{
		Use:   "verify --company UUID [--checkpoint SEQ:HASH]... [--json]",
		Short: "Walk the company's hash chain of audit events and name the first broken link",
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := company()
			if err != nil {
				return err
			}
			var links []audit.Link
			for _, c := range checkpoints {
				l, err := audit.ParseLink(c)
				if err != nil {
					return err
				}
				links = append(links, l)
			}
			return withUseCase(cmd, func(ctx context.Context, a *usecase.Auditor) error {
				n, head, err := a.Verify(ctx, id, links...)
				if asJSON {
					out := map[string]any{"company_id": id.String(), "events_checked": n, "intact": err == nil, "head": head.String()}
					if err != nil {
						out["broken"] = err.Error()
					}
					if perr := printJSON(cmd.OutOrStdout(), out); perr != nil {
						return perr
					}
				} else if err == nil {
					if _, err := fmt.Fprintf(cmd.OutOrStdout(), "%d events checked: the chain is intact; its head is checkpoint %s\n", n, head); err != nil {
						return err
					}
				}
				if err != nil {
					return fmt.Errorf("the audit trail of company %s is broken after %d intact events: %w", id, n, err)
				}
				return nil
			})
		},
	}
	verify.Flags().StringVar(&companyID, "company", "", "company id (required)")
	verify.Flags().StringArrayVar(&checkpoints, "checkpoint", nil, "a head recorded earlier (the servers log one hourly), which the chain must pass through")
	verify.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = verify.MarkFlagRequired("company")
	export := &cobra.Command{
		Use:   "export --company UUID [--from RFC3339] [--to RFC3339] > FILE",
		Short: "The company's audit events as NDJSON, one FHIR AuditEvent (IHE BALP) per line",
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := company()
			if err != nil {
				return err
			}
			var fromT, toT *time.Time
			for _, p := range []struct {
				flag string
				dst  **time.Time
			}{{from, &fromT}, {to, &toT}} {
				if p.flag != "" {
					t, err := domain.ParseDateTime(p.flag)
					if err != nil {
						return fmt.Errorf("--from/--to: %q is not an RFC 3339 date-time with an offset, from year 0001 to 9999", p.flag)
					}
					*p.dst = &t
				}
			}
			return withUseCase(cmd, func(ctx context.Context, a *usecase.Auditor) error {
				_, err := a.Export(ctx, id, fromT, toT, cmd.OutOrStdout())
				return err
			})
		},
	}
	export.Flags().StringVar(&companyID, "company", "", "company id (required)")
	export.Flags().StringVar(&from, "from", "", "only events at or after this time")
	export.Flags().StringVar(&to, "to", "", "only events before this time")
	_ = export.MarkFlagRequired("company")
	sweep := &cobra.Command{
		Use:   "sweep [--retention 26280h]",
		Short: "Delete audit events older than the retention; the chains stay verifiable from their checkpoints",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withUseCase(cmd, func(ctx context.Context, a *usecase.Auditor) error {
				n, err := a.Sweep(ctx, retention, time.Now())
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), map[string]any{"deleted": n})
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%d events past their retention deleted\n", n)
				return err
			})
		},
	}
	sweep.Flags().DurationVar(&retention, "retention", 3*365*24*time.Hour, "keep events this long (PRAXIS_AUDIT_RETENTION)")
	sweep.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(verify, export, sweep)
	return cmd
}
