package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/praxis-health/praxis/app"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/staff"
)

func staffCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "staff", Short: "Let a practice's staff into the settings pages"}
	cmd.AddCommand(staffInviteCmd())
	return cmd
}

type inviteOutput struct {
	CompanyID string    `json:"company_id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	Link      string    `json:"link"`
	ExpiresAt time.Time `json:"expires_at"`
}

func staffInviteCmd() *cobra.Command {
	var companyFlag, email, roleFlag string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "invite",
		Short: "Invite a person to a practice's settings: prints a one-time link (valid 72 h) that registers a passkey",
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := domain.ParseCompanyID(companyFlag)
			if err != nil {
				return fmt.Errorf("--company: %w", err)
			}
			role, err := staff.ParseRole(roleFlag)
			if err != nil {
				return fmt.Errorf("--role: %w", err)
			}
			cfg, err := app.LoadConfig()
			if err != nil {
				return err
			}
			return runUseCase(cmd.Context(), cfg, func(ctx context.Context, s *usecase.Settings) error {
				in, token, err := s.OperatorInvite(ctx, id, email, role)
				if err != nil {
					return err
				}
				out := inviteOutput{CompanyID: id.String(), Email: in.Email, Role: string(in.Role),
					Link: cfg.SiteURL() + staff.JoinPath(id, token), ExpiresAt: in.ExpiresAt}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), out)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "invitation of %s (%s), valid until %s, usable once:\n%s\n",
					out.Email, out.Role, out.ExpiresAt.Format(time.RFC3339), out.Link)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&companyFlag, "company", "", "company UUID (required)")
	cmd.Flags().StringVar(&email, "email", "", "the person's e-mail address (required)")
	cmd.Flags().StringVar(&roleFlag, "role", "admin", "admin or viewer")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("company")
	_ = cmd.MarkFlagRequired("email")
	return cmd
}
