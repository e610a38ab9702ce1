// Command floor is the floor of an authenticated GET of the company: a bare
// fiber server doing only what that request must — the same Redis script
// (token lookup and rate count) and the same PostgreSQL select, through the
// same adapters and drivers — and nothing else: no telemetry, no guard rules,
// no scopes, no fx. /company/audited also records the request's audit event
// as praxis must (docs/contract.md §11), through the same group commit, and
// answers once it is durable. The OAuth load program runs it beside praxis.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/redisstore"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/ratelimit"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	database := flag.String("database", "", "PostgreSQL URL")
	redisURL := flag.String("redis", "", "Redis URL")
	prefix := flag.String("prefix", "praxis:", "Redis key prefix")
	flag.Parse()
	if err := run(*addr, *database, *redisURL, *prefix); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(addr, database, redisURL, prefix string) error {
	db, err := sqlstore.Open(database)
	if err != nil {
		return err
	}
	rdb, err := redisstore.Open(redisURL)
	if err != nil {
		return err
	}
	tokens := redisstore.New(rdb, prefix)
	companies := sqlstore.NewCompanyRepository(db)
	limits, _ := ratelimit.ParseLimits("basic=100000000/m,pro=100000000/m,enterprise=100000000/m")
	auditor := usecase.NewAuditor(sqlstore.NewAuditLog(db), sqlstore.NewTransactor(db), companies, sqlstore.NewCustomerRepository(db),
		sqlstore.NewClientRepository(db), nil)
	auditor.Start()
	defer auditor.Stop()
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	company := func(audited bool) fiber.Handler {
		return func(c *fiber.Ctx) error {
			at, ctx := time.Now(), context.Background()
			if audited { // as praxis's audit door does: the group commit may wait for this request's event
				var end func()
				ctx, end = auditor.Expect(ctx)
				defer end()
			}
			token, _ := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
			grant, _, err := tokens.Authorize(c.UserContext(), domain.Secret(token).Hash(), limits)
			if err != nil {
				return c.SendStatus(fiber.StatusUnauthorized)
			}
			company, err := companies.Get(context.Background(), grant.CompanyID)
			if err != nil {
				return err
			}
			if audited {
				e := audit.New(at)
				e.Agent = audit.Agent{Type: audit.AgentClient, ID: string(grant.ClientID)}
				e.Source.Address, e.Section, e.Action, e.Outcome.Status = c.IP(), "company", audit.ActionRead, fiber.StatusOK
				if err := auditor.Record(ctx, grant.CompanyID, e); err != nil {
					return err
				}
			}
			return c.JSON(fiber.Map{"id": company.ID.String(), "name": company.Name, "time_zone": company.TimeZone, "plan": company.Plan.String(),
				"storage_quota": company.StorageQuota, "storage_used": company.StorageUsed, "created_at": company.CreatedAt, "updated_at": company.UpdatedAt})
		}
	}
	app.Get("/company", company(false))
	app.Get("/company/audited", company(true))
	return app.Listen(addr)
}
