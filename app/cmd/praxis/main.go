// Command praxis is the praxis server and its admin tool.
package main

import (
	"os"

	"github.com/praxis-health/praxis/app/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
