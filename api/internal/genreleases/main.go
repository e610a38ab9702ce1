// Command genreleases writes what is derived from the release notes
// (api/notes.json) and the releases' documents (api/releases/): the served
// notes api/releases.json and CHANGELOG.md. With -release DATE it first
// cuts a release: the unreleased notes get the date, and the current
// document is frozen as api/releases/DATE.json.
//
//	go generate ./api/...                               # after editing the notes
//	go run ./api/internal/genreleases -release 2026-12-01  # cut a release
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/praxis-health/praxis/adapters/httpapi"
	"github.com/praxis-health/praxis/api"
	"github.com/praxis-health/praxis/api/contract"
	"github.com/praxis-health/praxis/domain/release"
)

func main() {
	cut := flag.String("release", "", "cut a release of the current contract, dated `YYYY-MM-DD`")
	dir := flag.String("dir", ".", "the api directory (go generate runs in it)")
	flag.Parse()
	if err := run(*dir, *cut); err != nil {
		fmt.Fprintln(os.Stderr, "genreleases:", err)
		os.Exit(1)
	}
}

func run(dir, cut string) error {
	if _, err := os.Stat(filepath.Join(dir, "notes.json")); err != nil && dir == "." {
		dir = "api" // run from the repository's root
	}
	notes, docs, err := contract.Load(dir)
	if err != nil {
		return err
	}
	if cut != "" {
		if err := cutRelease(dir, &notes, docs, cut); err != nil {
			return err
		}
	}
	releases, err := contract.Build(notes, docs)
	if err != nil {
		return err
	}
	served, err := contract.Served(releases)
	if err != nil {
		return err
	}
	if err := write(filepath.Join(dir, "releases.json"), served); err != nil {
		return err
	}
	return write(filepath.Join(dir, "..", "CHANGELOG.md"), []byte(contract.Changelog(notes, releases)))
}

// cutRelease dates the unreleased notes and freezes the current document,
// written as it reads with the new release's notes.
func cutRelease(dir string, notes *contract.Notes, docs map[string][]byte, date string) error {
	if _, err := time.Parse(release.DateLayout, date); err != nil {
		return fmt.Errorf("-release %q: not a date", date)
	}
	if notes.Unreleased == nil {
		return errors.New("api/notes.json has no unreleased entry to release")
	}
	entry := notes.Unreleased
	entry.Date = date
	notes.Releases = append([]*contract.Entry{entry}, notes.Releases...)
	notes.Unreleased = nil
	current, err := httpapi.DocumentFor(api.Releases())
	if err != nil {
		return err
	}
	docs[date] = current
	releases, err := contract.Build(*notes, docs) // the paths are the same either way
	if err != nil {
		return err
	}
	if docs[date], err = httpapi.DocumentFor(releases); err != nil {
		return err
	}
	if err := write(filepath.Join(dir, "releases", date+".json"), docs[date]); err != nil {
		return err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(notes); err != nil {
		return err
	}
	return write(filepath.Join(dir, "notes.json"), out.Bytes())
}

func write(path string, data []byte) error {
	return os.WriteFile(path, data, 0o644) //nolint:gosec // a file of the repository
}
