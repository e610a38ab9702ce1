package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/fx"

	"github.com/praxis-health/praxis/app"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

func demoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Seed a demo practice with every section (through the import) and print its credentials",
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

// demoSeed is what the demo needs of the admin graph.
type demoSeed struct {
	fx.In
	Admin    *usecase.Admin
	Exchange *usecase.Exchange
	Uploads  *usecase.Uploads
}

// runDemo seeds a practice: the company, its patients and an OAuth client
// with every scope through the admin use case (the store numbers the
// patients, so the demo runs twice on one database), every other section
// through the import, and a file through the upload use case.
func runDemo(cmd *cobra.Command, cfg app.Config) error {
	return runUseCase(cmd.Context(), cfg, func(ctx context.Context, seed demoSeed) error {
		admin := seed.Admin
		company, secret, err := admin.CreateCompany(ctx, usecase.NewCompanyInput{Name: "Demo-Praxis Dr. Muster", Plan: "pro", StorageQuota: domain.DefaultStorageQuota})
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
		customers := make([]domain.CustomerID, len(out.CustomerIDs))
		for i, c := range out.CustomerIDs {
			customers[i] = domain.CustomerID(c)
		}
		if _, err := seed.Exchange.Import(ctx, company.ID, strings.NewReader(demoLines(customers)), false); err != nil {
			return fmt.Errorf("demo import: %w", err)
		}
		report := []byte("%PDF-1.4\n% Demo-Befund\n")
		if _, err := seed.Uploads.Store(ctx, ports.UploadTarget{Company: company, Customer: customers[0], Category: "report"},
			domain.SourceGDT, &singlePart{name: "befund.pdf", body: report}); err != nil {
			return fmt.Errorf("demo file: %w", err)
		}
		client, clientSecret, err := admin.CreateClient(ctx, usecase.NewClientInput{Company: company.ID, Name: "Demo integrator"})
		if err != nil {
			return err
		}
		out.ClientID, out.ClientSecret = string(client.ID), string(clientSecret)
		// The secrets go to stdout once, with the rest of the JSON; the hint on
		// stderr (which often ends up in a log) names it only as a placeholder.
		if _, err := fmt.Fprintf(cmd.ErrOrStderr(), "demo company %s with customers %v; upload with\n"+
			"  curl -F file=@befund.pdf -H 'x-gdt-company: %s' -H 'x-gdt-customer: %d' -H \"x-gdt-secret: $UPLOAD_SECRET\" %s/api/gdt/upload\n"+
			"and get a token for the OAuth API with\n"+
			"  curl -u \"%s:$CLIENT_SECRET\" -d grant_type=client_credentials %s/api/oauth/v2/token\n",
			out.CompanyID, out.CustomerIDs, out.CompanyID, out.CustomerIDs[0], baseURL(cfg.HTTPAddr), out.ClientID, baseURL(cfg.HTTPAddr)); err != nil {
			return err
		}
		return printJSON(cmd.OutOrStdout(), out)
	})
}

// baseURL is where a client on this machine reaches a server listening on
// addr: ":8080", "0.0.0.0:8080" and "[::]:8080" are localhost, a named host
// or address stays as it is (an IPv6 address in brackets).
func baseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// singlePart is a PartSource of one file.
type singlePart struct {
	name string
	body []byte
	done bool
}

func (p *singlePart) Next() (ports.Part, error) {
	if p.done {
		return ports.Part{}, io.EOF
	}
	p.done = true
	return ports.Part{FileName: p.name, Body: bytes.NewReader(p.body)}, nil
}
