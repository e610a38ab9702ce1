// Command floor is the floor of an authenticated GET of the company: a bare
// fiber server doing only what that request must — the same Redis script
// (token lookup and rate count) and the same PostgreSQL select, through the
// same adapters and drivers — and nothing else: no telemetry, no guard rules,
// no scopes, no fx. The OAuth load program runs it beside praxis.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/redisstore"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
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
	limits, _ := domain.ParseRateLimits("basic=100000000/m,pro=100000000/m,enterprise=100000000/m")
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/company", func(c *fiber.Ctx) error {
		token, _ := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
		grant, _, err := tokens.Authorize(c.UserContext(), domain.Secret(token).Hash(), limits)
		if err != nil {
			return c.SendStatus(fiber.StatusUnauthorized)
		}
		company, err := companies.Get(context.Background(), grant.CompanyID)
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"id": company.ID.String(), "name": company.Name, "time_zone": company.TimeZone, "plan": company.Plan.String(),
			"storage_quota": company.StorageQuota, "storage_used": company.StorageUsed, "created_at": company.CreatedAt, "updated_at": company.UpdatedAt})
	})
	return app.Listen(addr)
}
