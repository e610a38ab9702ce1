// Package release is the dated life of the API contract: releases with
// their notes, and deprecations with the dates the wire announces
// (RFC 9745 Deprecation, RFC 8594 Sunset). docs/contract.md §10.
package release

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// DateLayout is how a release and a deprecation are dated: a civil date, UTC.
const DateLayout = "2006-01-02"

// MinNoticeBeta and MinNoticeStable are the least time between a
// deprecation and its sunset: the OAuth API is beta, the upload API stable.
const (
	MinNoticeBeta   = 31 * 24 * time.Hour
	MinNoticeStable = 180 * 24 * time.Hour
)

// Kinds of a change, in the order the notes list them.
const (
	KindBreaking   = "breaking"
	KindRemoved    = "removed"
	KindDeprecated = "deprecated"
	KindChanged    = "changed"
	KindAdded      = "added"
)

// Kinds lists every kind of change, breaking first.
var Kinds = []string{KindBreaking, KindRemoved, KindDeprecated, KindChanged, KindAdded}

// Release is one dated state of the contract and what changed since the one before.
type Release struct {
	Date    string   `json:"date"`
	Summary string   `json:"summary"`
	Changes []Change `json:"changes"`
}

// Change is one change of a release: its kind, in words, and what it touches.
type Change struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Operations are "METHOD /path" of the document; Fields are
	// "Schema.property" or "METHOD /path ?parameter".
	Operations []string `json:"operations"`
	Fields     []string `json:"fields"`
	// Check names the oasdiff check that found the change, when one did.
	Check string `json:"check,omitempty"`
	// Sunset is when a deprecated or removed thing stops answering.
	Sunset string `json:"sunset,omitempty"`
}

// Deprecation is a deprecated operation, parameter or field as the document
// declares it: since when, until when, and the release note that tells why.
type Deprecation struct {
	Since  time.Time
	Sunset time.Time
	// Note is the date of the release whose notes announce it.
	Note string
}

// ParseDeprecation reads the document's x-deprecated-at and x-sunset.
func ParseDeprecation(since, sunset string) (Deprecation, error) {
	s, err := time.Parse(DateLayout, since)
	if err != nil {
		return Deprecation{}, fmt.Errorf("x-deprecated-at %q is not a date", since)
	}
	u, err := time.Parse(DateLayout, sunset)
	if err != nil {
		return Deprecation{}, fmt.Errorf("x-sunset %q is not a date", sunset)
	}
	return Deprecation{Since: s, Sunset: u, Note: since}, nil
}

// Check refuses a sunset closer to the deprecation than the notice the API owes.
func (d Deprecation) Check(notice time.Duration) error {
	if d.Sunset.Sub(d.Since) < notice {
		return fmt.Errorf("sunset %s is less than %d days after the deprecation on %s",
			d.Sunset.Format(DateLayout), int(notice.Hours()/24), d.Since.Format(DateLayout))
	}
	return nil
}

// Earlier is whichever of d and e ends first; the zero Deprecation is none.
func (d Deprecation) Earlier(e Deprecation) Deprecation {
	if d.Sunset.IsZero() || (!e.Sunset.IsZero() && e.Sunset.Before(d.Sunset)) {
		return e
	}
	return d
}

// DeprecationHeader is the RFC 9745 value: a Structured Field date.
func (d Deprecation) DeprecationHeader() string { return "@" + strconv.FormatInt(d.Since.Unix(), 10) }

// SunsetHeader is the RFC 8594 value: an HTTP date.
func (d Deprecation) SunsetHeader() string { return d.Sunset.UTC().Format(http.TimeFormat) }

// Validate checks a list of releases: newest first, dated, each change of a
// known kind with words, a deprecation or removal people announce with its
// sunset (oasdiff's findings carry theirs in their words).
func Validate(releases []Release) error {
	var errs []error
	for i, r := range releases {
		if _, err := time.Parse(DateLayout, r.Date); err != nil {
			errs = append(errs, fmt.Errorf("release %q: not a date", r.Date))
		}
		if i > 0 && r.Date >= releases[i-1].Date {
			errs = append(errs, fmt.Errorf("release %s: releases are listed newest first, each once", r.Date))
		}
		if r.Summary == "" {
			errs = append(errs, fmt.Errorf("release %s: no summary", r.Date))
		}
		for _, c := range r.Changes {
			if !slices.Contains(Kinds, c.Kind) {
				errs = append(errs, fmt.Errorf("release %s: change kind %q is none of %v", r.Date, c.Kind, Kinds))
			}
			if c.Text == "" {
				errs = append(errs, fmt.Errorf("release %s: a %s change without text", r.Date, c.Kind))
			}
			if (c.Kind == KindDeprecated || c.Kind == KindRemoved) && c.Sunset == "" && c.Check == "" {
				errs = append(errs, fmt.Errorf("release %s: %q has no sunset", r.Date, c.Text))
			}
		}
	}
	return errors.Join(errs...)
}

// SortChanges orders a release's changes as the notes show them: breaking
// first, then by kind, then as they came.
func SortChanges(changes []Change) {
	slices.SortStableFunc(changes, func(a, b Change) int {
		return slices.Index(Kinds, a.Kind) - slices.Index(Kinds, b.Kind)
	})
}

// Calls is how often one client called one deprecated thing on one day.
type Calls struct {
	CompanyID domain.CompanyID `json:"company_id"`
	ClientID  domain.ClientID  `json:"client_id"`
	Operation string           `json:"operation"`
	Day       string           `json:"day"`
	Calls     int64            `json:"calls"`
}
