// Package api holds the dated releases of the API contract: each release's
// OpenAPI document under releases/, the notes people write (notes.json),
// and what the generator derives from both (releases.json, CHANGELOG.md).
// docs/contract.md §10 tells the lifecycle; docs/ARCHITECTURE.md how to
// cut a release.
package api

import (
	_ "embed"
	"encoding/json"

	"github.com/praxis-health/praxis/domain/release"
)

//go:generate go run ./internal/genreleases

// releasesJSON is every release, newest first, as GET /api/oauth/v2/releases serves it.
//
//go:embed releases.json
var releasesJSON []byte

var releases = func() []release.Release {
	var rs []release.Release
	if err := json.Unmarshal(releasesJSON, &rs); err != nil {
		panic("api/releases.json: " + err.Error()) // generated and checked by the tests
	}
	if err := release.Validate(rs); err != nil {
		panic("api/releases.json: " + err.Error())
	}
	return rs
}()

// Releases lists every release, newest first. The slice is shared: read it only.
func Releases() []release.Release { return releases }

// Latest is the date of the newest release: the contract this build serves.
func Latest() string { return releases[0].Date }
