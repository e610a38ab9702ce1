// Command gendocs writes docs/sections.md, the field catalogue, from the
// table of sections (go generate ./domain/...).
package main

import (
	"fmt"
	"os"

	"github.com/praxis-health/praxis/domain"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendocs PATH")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(domain.Catalogue()), 0o644); err != nil { //nolint:gosec // a document of the repository
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
