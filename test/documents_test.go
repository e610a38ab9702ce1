// Holds docs/contract.md §1 Programs, commands, configuration: the README's start and the integrator's first-sync tutorial, run as written.

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// runAsWritten is the marker before a shell block this file runs.
const runAsWritten = "<!-- run as written: test/documents_test.go -->"

// blocksToRun are the shell blocks of doc marked to be run, in order.
func blocksToRun(t *testing.T, doc string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", doc))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, part := range strings.Split(string(raw), runAsWritten+"\n")[1:] {
		body, ok := strings.CutPrefix(part, "```sh\n")
		end := strings.Index(body, "\n```\n")
		if !ok || end < 0 {
			t.Fatalf("%s: the marker is not followed by a sh block", doc)
		}
		blocks = append(blocks, body[:end+1])
	}
	if len(blocks) == 0 {
		t.Fatalf("%s has no block marked %q", doc, runAsWritten)
	}
	return blocks
}

// runDocument runs doc's marked blocks in one bash, as a reader would type
// them into a second terminal beside `make run`: in a folder that has
// ./bin/praxis, with the server's settings (its database, its files), where
// the document says http://localhost:8080 the test's server. It answers
// each block's output.
func runDocument(t *testing.T, doc string) []string {
	t.Helper()
	needTool(t, "jq")
	needTool(t, "curl")
	blocks := blocksToRun(t, doc)
	s := startServer(t, backends[0])
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(dir, "bin", "praxis")); err != nil {
		t.Fatal(err)
	}
	script := "set -euo pipefail\n"
	for i, b := range blocks {
		script += strings.ReplaceAll(b, "http://localhost:8080", s.url) + "echo '=== " + strconv.Itoa(i) + "'\n"
	}
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env = dir, s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s, run as written: %v\n%s\n(server log)\n%s", doc, err, out, s.log.String())
	}
	var outputs []string
	rest := string(out)
	for i := range blocks {
		before, after, ok := strings.Cut(rest, "=== "+strconv.Itoa(i)+"\n")
		if !ok {
			t.Fatalf("%s: block %d ended without its marker:\n%s", doc, i, out)
		}
		outputs, rest = append(outputs, before), after
	}
	return outputs
}

// TestTheReadmeStartRunsAsWritten: a practice, a patient and a device's
// upload for her, by the README's commands.
func TestTheReadmeStartRunsAsWritten(t *testing.T) {
	t.Parallel()
	out := runDocument(t, "README.md")
	if len(out) != 1 {
		t.Fatalf("%d blocks", len(out))
	}
	for _, want := range []string{`"customer_id":1`, `"status":"success"`, `"name":"befund.pdf"`, `"content_type":"application/pdf"`} {
		if !strings.Contains(out[0], want) {
			t.Errorf("the README's start printed no %s:\n%s", want, out[0])
		}
	}
}

// TestTheFirstSyncTutorialRunsAsWritten: the integrator's tutorial against
// the demo practice — every note once in the first sync, one note for two
// sends of one Idempotency-Key, and exactly that note in the next sync.
func TestTheFirstSyncTutorialRunsAsWritten(t *testing.T) {
	t.Parallel()
	out := runDocument(t, "docs/integrators/first-sync.md")
	if len(out) != 5 {
		t.Fatalf("%d blocks, want 5", len(out))
	}
	if !strings.Contains(out[1], `"time_zone":"Europe/Vienna"`) {
		t.Errorf("step 1 read no company:\n%s", out[1])
	}
	ids := regexp.MustCompile(`"id":"([^"]+)"`)
	seen := map[string]bool{}
	for _, m := range ids.FindAllStringSubmatch(out[2], -1) {
		if seen[m[1]] {
			t.Errorf("the first sync listed note %s twice", m[1])
		}
		seen[m[1]] = true
	}
	if len(seen) < 2 {
		t.Errorf("the first sync listed %d notes (the demo has more than one, over pages of two):\n%s", len(seen), out[2])
	}
	written := strings.Fields(out[3])
	if len(written) != 2 || written[0] != written[1] || seen[written[0]] {
		t.Fatalf("step 3 printed %q: want one new note's id twice", written)
	}
	next := ids.FindAllStringSubmatch(out[4], -1)
	if len(next) != 1 || next[0][1] != written[0] || !strings.Contains(out[4], "blood pressure") {
		t.Errorf("the next sync answered %q, want exactly the note %s", out[4], written[0])
	}
}

// TestDocumentLinksResolve: every relative link of the README and the
// documents names a file that exists, and a heading of it where the link
// names one: moving a section moves its links.
func TestDocumentLinksResolve(t *testing.T) {
	t.Parallel()
	docs := []string{"../README.md"}
	err := filepath.WalkDir("../docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, doc := range docs {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(withoutCode(string(raw)), -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := doc
			if target != "" {
				path = filepath.Join(filepath.Dir(doc), target)
			}
			text, err := os.ReadFile(path)
			if err != nil {
				if info, statErr := os.Stat(path); statErr == nil && info.IsDir() {
					checked++
					continue
				}
				t.Errorf("%s links %s, which does not exist", doc, m[1])
				continue
			}
			if anchor != "" && !slices.Contains(headingAnchors(string(text)), anchor) {
				t.Errorf("%s links %s, which has no heading #%s", doc, m[1], anchor)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d links", checked)
	}
}

// withoutCode is a document without its fenced blocks.
func withoutCode(doc string) string {
	var b strings.Builder
	fence := false
	for line := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if !fence {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// headingAnchors are the anchors GitHub gives a document's headings.
func headingAnchors(doc string) []string {
	var out []string
	drop := regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
	for line := range strings.SplitSeq(withoutCode(doc), "\n") {
		if title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			out = append(out, strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(title)), ""), " ", "-"))
		}
	}
	return out
}

// TestTheReadmeIsAStart: what praxis is, the two commands and "who are
// you?" — everything else lives under docs/, by audience.
func TestTheReadmeIsAStart(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n > 150 {
		t.Errorf("the README has %d lines: at most 150 (move the rest to its audience's page under docs/)", n)
	}
	for _, want := range []string{"## Two commands", "make run", "make test", "## Who are you?", "docs/README.md"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}
