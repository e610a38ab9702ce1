// Command gendocs writes what is derived from the table of sections outside
// Go code: docs/sections.md (the field catalogue), the OAuthClient CRD's
// scope enum and the documents' lists of sections (go generate ./domain/...).
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: gendocs SECTIONS.md OAUTHCLIENT-CRD.yaml OAUTH.md RESOURCE-API.md COMMANDS.md")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(catalogue, crd, oauth, resourceAPI, commands string) error {
	if err := os.WriteFile(catalogue, []byte(Catalogue()), 0o644); err != nil { //nolint:gosec // a document of the repository
		return err
	}
	for file, blocks := range map[string]map[string]func(string) string{
		crd:         {"scopes": ScopeEnum},
		oauth:       {"section list": SectionList},
		resourceAPI: {"section operations": SectionOperations},
		commands:    {"import lines": ImportLines},
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
		if text, ok = ReplaceGenerated(text, name, block); !ok {
			return fmt.Errorf("%s has no generated block %q", file, name)
		}
	}
	return os.WriteFile(file, []byte(text), 0o644) //nolint:gosec // a file of the repository
}
