// Command praxis-operator reconciles praxis's Company and OAuthClient
// resources on Kubernetes into the database and Secrets.
package main

import (
	"os"

	"github.com/praxis-health/praxis/app/operatorcli"
)

func main() {
	os.Exit(operatorcli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
