// Command gendocs writes what is derived from the table of sections outside
// Go code: docs/sections.md (the field catalogue), the OAuthClient CRD's
// scope enum and the README's lists of sections (go generate ./domain/...).
package main

import (
	"fmt"
	"os"

	"github.com/praxis-health/praxis/domain"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gendocs SECTIONS.md OAUTHCLIENT-CRD.yaml README.md")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(catalogue, crd, readme string) error {
	if err := os.WriteFile(catalogue, []byte(domain.Catalogue()), 0o644); err != nil { //nolint:gosec // a document of the repository
		return err
	}
	for file, blocks := range map[string]map[string]func(string) string{
		crd:    {"scopes": domain.ScopeEnum},
		readme: {"section list": domain.SectionList, "section operations": domain.SectionOperations, "import lines": domain.ImportLines},
	} {
		if err := rewrite(file, blocks); err != nil {
			return err
		}
	}
	return nil
}

// rewrite replaces the named generated blocks of file.
func rewrite(file string, blocks map[string]func(string) string) error {
	raw, err := os.ReadFile(file) //nolint:gosec // a file of the repository
	if err != nil {
		return err
	}
	text := string(raw)
	for name, block := range blocks {
		var ok bool
		if text, ok = domain.ReplaceGenerated(text, name, block); !ok {
			return fmt.Errorf("%s has no generated block %q", file, name)
		}
	}
	return os.WriteFile(file, []byte(text), 0o644) //nolint:gosec // a file of the repository
}
