package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/praxis-health/praxis/app"
	"github.com/praxis-health/praxis/app/usecase"
)

func demoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Seed a demo company with customers and an OAuth client, and print its credentials",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := app.LoadConfig()
			if err != nil {
				return err
			}
			return runDemo(cmd, cfg)
		},
	}
}

type demoOutput struct {
	CompanyID    string  `json:"company_id"`
	UploadSecret string  `json:"upload_secret"`
	CustomerIDs  []int64 `json:"customer_ids"`
	ClientID     string  `json:"client_id"`
	ClientSecret string  `json:"client_secret"`
}

// runDemo seeds what exists so far: a company, its patients and an OAuth
// client with every scope. Users,
// locations, services, records and invoices join as their sections land.
func runDemo(cmd *cobra.Command, cfg app.Config) error {
	return runUseCase(cmd.Context(), cfg, func(ctx context.Context, admin *usecase.Admin) error {
		company, secret, err := admin.CreateCompany(ctx, usecase.NewCompanyInput{Name: "Demo-Praxis Dr. Muster", Plan: "pro"})
		if err != nil {
			return err
		}
		out := demoOutput{CompanyID: company.ID.String(), UploadSecret: string(secret)}
		for _, p := range [][3]string{
			{"Max", "Mustermann", "1970-01-01"},
			{"Erika", "Musterfrau", "1985-06-15"},
			{"Jürgen", "Öztürk", "2001-12-24"},
		} {
			c, err := admin.CreateCustomer(ctx, usecase.NewCustomerInput{Company: company.ID, FirstName: p[0], LastName: p[1], BirthDate: p[2]})
			if err != nil {
				return err
			}
			out.CustomerIDs = append(out.CustomerIDs, int64(c.ID))
		}
		client, clientSecret, err := admin.CreateClient(ctx, usecase.NewClientInput{Company: company.ID, Name: "Demo integrator"})
		if err != nil {
			return err
		}
		out.ClientID, out.ClientSecret = string(client.ID), string(clientSecret)
		// The secrets go to stdout once, with the rest of the JSON; the hint on
		// stderr (which often ends up in a log) names it only as a placeholder.
		if _, err := fmt.Fprintf(cmd.ErrOrStderr(), "demo company %s with customers %v; upload with\n"+
			"  curl -F file=@befund.pdf -H 'x-gdt-company: %s' -H 'x-gdt-customer: %d' -H \"x-gdt-secret: $UPLOAD_SECRET\" http://localhost%s/api/gdt/upload\n"+
			"and get a token for the OAuth API with\n"+
			"  curl -u \"%s:$CLIENT_SECRET\" -d grant_type=client_credentials http://localhost%s/api/oauth/v2/token\n",
			out.CompanyID, out.CustomerIDs, out.CompanyID, out.CustomerIDs[0], cfg.HTTPAddr, out.ClientID, cfg.HTTPAddr); err != nil {
			return err
		}
		return printJSON(cmd.OutOrStdout(), out)
	})
}
