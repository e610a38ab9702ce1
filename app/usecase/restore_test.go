package usecase_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

// TestRestoreSetsAsideWhatTheImportRefuses: restoring only the notes, the
// two whose author was deleted since T are refused by the import's rules
// (the reference) and reported, the third is restored alone; restoring
// every section brings the author back first and the notes with it.
func TestRestoreSetsAsideWhatTheImportRefuses(t *testing.T) {
	t.Parallel()
	env, f, restore := restoreFixture(t)
	company := f.grant.CompanyID
	author, colleague := domain.NewObjectID(), domain.NewObjectID()
	notes := []string{domain.NewObjectID(), domain.NewObjectID(), domain.NewObjectID()}
	line := func(section, id, data string) string {
		return fmt.Sprintf(`{"section":%q,"id":%q,"data":%s}`, section, id, strings.Join(strings.Fields(data), " "))
	}
	note := func(id, user, title string) string {
		data := domain.KindOf("notes").ExampleWith(domain.ExampleIDs{Customer: f.customer, User: user})
		return line("notes", id, strings.Replace(data, `"Phone call"`, `"`+title+`"`, 1))
	}
	user := func(id string) string {
		return line("users", id, `{"first_name":"Eva","last_name":"Huber","role":"doctor","active":true}`)
	}
	if _, err := importLines(t, env, company, user(author), user(colleague),
		note(notes[0], author, "Anruf"), note(notes[1], author, "Befund"), note(notes[2], colleague, "Rezept")); err != nil {
		t.Fatal(err)
	}
	copyAt := copyNow(t, env)
	if _, err := importLines(t, env, company, `{"section":"notes","id":"`+notes[0]+`","deleted":true}`,
		note(notes[1], colleague, "Befund (geändert)"), note(notes[2], colleague, "Rezept (geändert)"),
		`{"section":"users","id":"`+author+`","deleted":true}`); err != nil {
		t.Fatal(err)
	}

	only := restoreFrom(t, restore, company, copyAt, "notes")
	if len(only.Recreated) != 0 || !maps.Equal(only.Reverted, map[string]int{"notes": 1}) || len(only.Conflicts) != 2 {
		t.Fatalf("notes alone: %+v", only)
	}
	for i, c := range only.Conflicts {
		if c.Section != "notes" || c.ID != notes[i] || !strings.HasPrefix(c.Reason, "data.user_id: ") {
			t.Errorf("conflict %d: %+v", i, c)
		}
	}
	title := func(id string) string {
		var n struct{ Title string }
		if err := payloadNow(t, env, f.grant, "notes", id, &n); err != nil {
			return err.Error()
		}
		return n.Title
	}
	if got := []string{title(notes[0]), title(notes[1]), title(notes[2])}; got[0] != "not found" || got[1] != "Befund (geändert)" || got[2] != "Rezept" {
		t.Errorf("after the notes alone: %q", got)
	}

	all := restoreFrom(t, restore, company, copyAt)
	if !maps.Equal(all.Recreated, map[string]int{"users": 1, "notes": 1}) || !maps.Equal(all.Reverted, map[string]int{"notes": 1}) || len(all.Conflicts) != 0 {
		t.Fatalf("every section: %+v", all)
	}
	if got := []string{title(notes[0]), title(notes[1]), title(notes[2])}; got[0] != "Anruf" || got[1] != "Befund" || got[2] != "Rezept" {
		t.Errorf("after every section: %q", got)
	}
}

// TestRestoreLeavesATakenGDTIDAlone: a device deleted since T whose GDT id
// another device has taken since is a conflict naming that device, not
// written; the device that holds the id now keeps it; a device changed
// since T is reverted beside it.
func TestRestoreLeavesATakenGDTIDAlone(t *testing.T) {
	t.Parallel()
	env, f, restore := restoreFixture(t)
	company := f.grant.CompanyID
	ecg, spiro, successor := domain.NewObjectID(), domain.NewObjectID(), domain.NewObjectID()
	device := func(id, name, gdtID string) string {
		return fmt.Sprintf(`{"section":"devices","id":%q,"data":{"name":%q,"gdt_id":%q,"gdt_version":"2.1","encoding":"cp437"}}`, id, name, gdtID)
	}
	if _, err := importLines(t, env, company, device(ecg, "ECG in room 2", "EKG1"), device(spiro, "Spirometer", "SPIRO1")); err != nil {
		t.Fatal(err)
	}
	copyAt := copyNow(t, env)
	if _, err := importLines(t, env, company, `{"section":"devices","id":"`+ecg+`","deleted":true}`); err != nil {
		t.Fatal(err)
	}
	if _, err := importLines(t, env, company, device(successor, "New ECG", "EKG1"), device(spiro, "Spirometer (room 3)", "SPIRO1")); err != nil {
		t.Fatal(err)
	}

	report := restoreFrom(t, restore, company, copyAt, "devices")
	if len(report.Recreated) != 0 || !maps.Equal(report.Reverted, map[string]int{"devices": 1}) || len(report.Conflicts) != 1 {
		t.Fatalf("devices: %+v", report)
	}
	if c := report.Conflicts[0]; c.Section != "devices" || c.ID != ecg || !strings.Contains(c.Reason, successor) {
		t.Errorf("the conflict: %+v, want the ECG's, naming %s", c, successor)
	}
	name := func(id string) string {
		var d struct {
			Name  string
			GDTID string `json:"gdt_id"`
		}
		if err := payloadNow(t, env, f.grant, "devices", id, &d); err != nil {
			return err.Error()
		}
		return d.Name + "/" + d.GDTID
	}
	if got := []string{name(ecg), name(successor), name(spiro)}; got[0] != "not found" || got[1] != "New ECG/EKG1" || got[2] != "Spirometer/SPIRO1" {
		t.Errorf("after the restore: %q", got)
	}
}

// copyNow is a copy of the embedded database as it stands (VACUUM INTO):
// a restore's copy at T.
func copyNow(t *testing.T, env *testenv.Embedded) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "at-t.db")
	if _, err := env.DB.ExecContext(context.Background(), "VACUUM INTO ?", path); err != nil {
		t.Fatal(err)
	}
	return "sqlite:" + path
}

// payloadNow decodes the payload of an object of section into v, or
// answers why there is none.
func payloadNow(t *testing.T, env *testenv.Embedded, grant domain.Grant, section, id string, v any) error {
	t.Helper()
	o, err := env.Records.Get(context.Background(), grant, domain.KindOf(section), id)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(o.Payload, v); err != nil {
		t.Fatal(err)
	}
	return nil
}

// restoreFrom restores company's sections (every one without) from the copy at from.
func restoreFrom(t *testing.T, r *usecase.Restore, company domain.CompanyID, from string, sections ...string) usecase.RestoreReport {
	t.Helper()
	report, err := r.Run(context.Background(), company, from, usecase.RestoreOptions{Sections: sections})
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// restoreFixture is a practice of the embedded stores and a restore of it.
func restoreFixture(t *testing.T) (*testenv.Embedded, practiceFixture, *usecase.Restore) {
	t.Helper()
	env := testenv.NewEmbedded(t)
	return env, newPracticeFixture(t, env), usecase.NewRestore(env.Exchange, sqlstore.RestoreSources{}, sqlstore.NewCalendar(env.DB))
}
