package sqlstore_test

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/test/testenv"
)

// Distribution by company (issue "Failover", item 7): past one primary, a
// multi-tenant database of this shape is distributed by tenant (Citus: the
// company is the distribution column), and then every primary key, unique
// index and foreign key of a tenant table must name company_id. The
// schema holds to that except where this list says why.
var (
	// globalTables hold no company's rows.
	globalTables = map[string]string{
		"companies":           "the tenants themselves (a reference table)",
		"bun_migrations":      "the migrator's",
		"bun_migration_locks": "the migrator's",
		"tombstones":          "digests of ended tokens and sessions, one list every replica reads whole; no company's data",
		"company_erasures":    "what remains of an erased company, outside it: who erased it, when, counts and hashes",
	}
	// keyExceptions are keys of tenant tables without company_id, by name.
	keyExceptions = map[string]string{
		"customers_pkey": "a customer's number is unique across the service (GDT field 3000 names one patient): " +
			"the upload door tells another company's customer from an unknown one (docs/contract.md §2)",
		"oauth_clients_pkey": "a token request names its client before its company is known: the id alone finds it",
	}
)

// TestEveryKeyNamesTheCompany lists every table of the migrated schema
// against the rule: a table without company_id is a named global one; a
// tenant table's primary key, unique indexes and foreign keys include
// company_id, or are named exceptions with their reason. A new table or
// key that breaks the rule fails here until it is fixed or named.
func TestEveryKeyNamesTheCompany(t *testing.T) {
	t.Parallel()
	db := migrated(t, testenv.PostgresURL(t))
	ctx := context.Background()
	var tenant []string
	if err := db.NewRaw(`SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'company_id'`).
		Scan(ctx, &tenant); err != nil {
		t.Fatal(err)
	}
	var all []string
	if err := db.NewRaw(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`).
		Scan(ctx, &all); err != nil {
		t.Fatal(err)
	}
	for _, table := range all {
		if _, global := globalTables[table]; !global && !slices.Contains(tenant, table) {
			t.Errorf("table %s has no company_id and is no named global table", table)
		}
	}
	type key struct {
		Table, Name, Columns string
	}
	var keys []key
	// Unique indexes (primary keys among them) and foreign keys, with their columns.
	err := db.NewRaw(`
		SELECT t.relname AS table, i.relname AS name,
		       array_to_string(array(SELECT a.attname FROM unnest(ix.indkey) k JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k), ',') AS columns
		FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		WHERE n.nspname = 'public' AND ix.indisunique
		UNION ALL
		SELECT t.relname, c.conname,
		       array_to_string(array(SELECT a.attname FROM unnest(c.conkey) k JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k), ',')
		FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
		WHERE n.nspname = 'public' AND c.contype = 'f'`).Scan(ctx, &keys)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	var broken []string
	for _, k := range keys {
		if !slices.Contains(tenant, k.Table) || slices.Contains(strings.Split(k.Columns, ","), "company_id") {
			continue
		}
		if _, ok := keyExceptions[k.Name]; ok {
			used[k.Name] = true
			continue
		}
		broken = append(broken, k.Table+"."+k.Name+" ("+k.Columns+")")
	}
	sort.Strings(broken)
	for _, b := range broken {
		t.Errorf("key %s of a tenant table does not name company_id: include it, or name the exception and why", b)
	}
	for name := range keyExceptions {
		if !used[name] {
			t.Errorf("exception %s names no key that needs it (any more): remove it", name)
		}
	}
	t.Logf("%d tenant tables, %d keys checked, %d exceptions", len(tenant), len(keys), len(keyExceptions))
}
