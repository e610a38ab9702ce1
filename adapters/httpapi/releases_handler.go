package httpapi

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/api"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/release"
)

// The release notes, as JSON and as an Atom feed (docs/contract.md §10).
const (
	releasesPath = "/api/oauth/v2/releases"
	atomPath     = "/api/oauth/v2/releases.atom"
	// releaseHeader names the release of the contract on every answer.
	releaseHeader = "Praxis-Api-Release"
)

// releaseURL is where one release's notes are: a deprecation's Link and a
// removed operation's 410 point there.
func releaseURL(date string) string { return releasesPath + "/" + date }

// Releases serves the release notes of this build.
type Releases struct {
	releases []release.Release
	list     []byte
	byDate   map[string][]byte
}

// NewReleases serves the notes this build was made with.
func NewReleases() (*Releases, error) { return newReleases(api.Releases()) }

func newReleases(releases []release.Release) (*Releases, error) {
	h := &Releases{releases: releases, byDate: map[string][]byte{}}
	var err error
	if h.list, err = json.Marshal(map[string]any{"current": releases[0].Date, "data": releases}); err != nil {
		return nil, err
	}
	for _, r := range releases {
		if h.byDate[r.Date], err = json.Marshal(r); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (h *Releases) Register(app fiber.Router) {
	app.Get(releasesPath, func(c *fiber.Ctx) error { return sendJSON(c, fiber.StatusOK, h.list) })
	app.Get(releasesPath+"/:date", func(c *fiber.Ctx) error {
		one, ok := h.byDate[c.Params("date")]
		if !ok {
			return domain.ErrNotFound
		}
		return sendJSON(c, fiber.StatusOK, one)
	})
	app.Get(atomPath, h.atom)
}

// The Atom feed (RFC 4287): one entry per release, newest first.
type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	ID      string      `xml:"id"`
	Title   string      `xml:"title"`
	Updated string      `xml:"updated"`
	Author  atomPerson  `xml:"author"`
	Links   []atomLink  `xml:"link"`
	Entries []atomEntry `xml:"entry"`
}

type atomPerson struct {
	Name string `xml:"name"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr,omitempty"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomEntry struct {
	ID      string     `xml:"id"`
	Title   string     `xml:"title"`
	Updated string     `xml:"updated"`
	Links   []atomLink `xml:"link"`
	Summary string     `xml:"summary"`
	Content atomText   `xml:"content"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Body string `xml:",chardata"`
}

// atomID names the feed and its entries for good: a tag URI (RFC 4151).
const atomID = "tag:praxis-health.io,2026:api/releases"

func (h *Releases) atom(c *fiber.Ctx) error {
	base := c.BaseURL()
	feed := atomFeed{
		ID: atomID, Title: "praxis API releases", Updated: atomDate(h.releases[0].Date), Author: atomPerson{Name: "praxis"},
		Links: []atomLink{{Rel: "self", Type: "application/atom+xml", Href: base + atomPath},
			{Rel: "alternate", Type: "application/json", Href: base + releasesPath}},
	}
	for _, r := range h.releases {
		feed.Entries = append(feed.Entries, atomEntry{
			ID: atomID + "/" + r.Date, Title: "API release " + r.Date, Updated: atomDate(r.Date),
			Links:   []atomLink{{Rel: "alternate", Type: "application/json", Href: base + releaseURL(r.Date)}},
			Summary: r.Summary, Content: atomText{Type: "text", Body: changesText(r.Changes)},
		})
	}
	out, err := xml.MarshalIndent(feed, "", "  ")
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/atom+xml; charset=utf-8")
	return c.Send(append([]byte(xml.Header), out...))
}

// atomDate is a release's date as an RFC 3339 instant: its midnight, UTC.
func atomDate(date string) string {
	t, err := time.Parse(release.DateLayout, date)
	if err != nil {
		return date
	}
	return t.UTC().Format(time.RFC3339)
}

// changesText is a release's changes as plain lines, breaking first.
func changesText(changes []release.Change) string {
	var b strings.Builder
	for _, c := range changes {
		fmt.Fprintf(&b, "%s: %s\n", c.Kind, c.Text)
	}
	return b.String()
}

// releaseNotesMarkdown is the part of the document's description that
// tells the release and the latest notes people wrote: /docs shows it
// above the reference.
func releaseNotesMarkdown(releases []release.Release) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Releases\n\nThis is release **%s** of the contract; every answer names it in `%s`. ", releases[0].Date, releaseHeader)
	fmt.Fprintf(&b, "The OAuth API is beta: a breaking change is announced in the release notes, and whatever is deprecated "+
		"answers `Deprecation`, `Sunset` and `Link: <…>; rel=\"deprecation\"` for at least %d days before its sunset. ",
		int(release.MinNoticeBeta.Hours()/24))
	fmt.Fprintf(&b, "Release notes: [JSON](%s), [Atom feed](%s).\n", releasesPath, atomPath)
	for _, r := range releases[:min(3, len(releases))] {
		fmt.Fprintf(&b, "\n### Release %s\n\n%s\n", r.Date, r.Summary)
		for _, c := range r.Changes {
			if c.Check != "" {
				continue // oasdiff's findings are in the JSON notes
			}
			line := "\n- **" + c.Kind + "**: " + c.Text
			if c.Sunset != "" {
				line += " Sunset: " + c.Sunset + "."
			}
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
	return b.String()
}
