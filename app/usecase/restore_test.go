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
	env := testenv.NewEmbedded(t)
	ctx := context.Background()
	f := newPracticeFixture(t, env)
	company := f.grant.CompanyID
	restore := usecase.NewRestore(env.Exchange, sqlstore.RestoreSources{}, sqlstore.NewCalendar(env.DB))
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
	copyAt := "sqlite:" + filepath.Join(t.TempDir(), "at-t.db")
	if _, err := env.DB.ExecContext(ctx, "VACUUM INTO ?", strings.TrimPrefix(copyAt, "sqlite:")); err != nil {
		t.Fatal(err)
	}
	if _, err := importLines(t, env, company, `{"section":"notes","id":"`+notes[0]+`","deleted":true}`,
		note(notes[1], colleague, "Befund (geändert)"), note(notes[2], colleague, "Rezept (geändert)"),
		`{"section":"users","id":"`+author+`","deleted":true}`); err != nil {
		t.Fatal(err)
	}

	only, err := restore.Run(ctx, company, copyAt, usecase.RestoreOptions{Sections: []string{"notes"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(only.Recreated) != 0 || !maps.Equal(only.Reverted, map[string]int{"notes": 1}) || len(only.Conflicts) != 2 {
		t.Fatalf("notes alone: %+v", only)
	}
	for i, c := range only.Conflicts {
		if c.Section != "notes" || c.ID != notes[i] || !strings.HasPrefix(c.Reason, "data.user_id: ") {
			t.Errorf("conflict %d: %+v", i, c)
		}
	}
	title := func(id string) string {
		o, err := env.Records.Get(ctx, f.grant, domain.KindOf("notes"), id)
		if err != nil {
			return err.Error()
		}
		var n struct{ Title string }
		if err := json.Unmarshal(o.Payload, &n); err != nil {
			t.Fatal(err)
		}
		return n.Title
	}
	if got := []string{title(notes[0]), title(notes[1]), title(notes[2])}; got[0] != "not found" || got[1] != "Befund (geändert)" || got[2] != "Rezept" {
		t.Errorf("after the notes alone: %q", got)
	}

	all, err := restore.Run(ctx, company, copyAt, usecase.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
	env := testenv.NewEmbedded(t)
	ctx := context.Background()
	f := newPracticeFixture(t, env)
	company := f.grant.CompanyID
	restore := usecase.NewRestore(env.Exchange, sqlstore.RestoreSources{}, sqlstore.NewCalendar(env.DB))
	ecg, spiro, successor := domain.NewObjectID(), domain.NewObjectID(), domain.NewObjectID()
	device := func(id, name, gdtID string) string {
		return fmt.Sprintf(`{"section":"devices","id":%q,"data":{"name":%q,"gdt_id":%q,"gdt_version":"2.1","encoding":"cp437"}}`, id, name, gdtID)
	}
	if _, err := importLines(t, env, company, device(ecg, "ECG in room 2", "EKG1"), device(spiro, "Spirometer", "SPIRO1")); err != nil {
		t.Fatal(err)
	}
	copyAt := "sqlite:" + filepath.Join(t.TempDir(), "at-t.db")
	if _, err := env.DB.ExecContext(ctx, "VACUUM INTO ?", strings.TrimPrefix(copyAt, "sqlite:")); err != nil {
		t.Fatal(err)
	}
	if _, err := importLines(t, env, company, `{"section":"devices","id":"`+ecg+`","deleted":true}`); err != nil {
		t.Fatal(err)
	}
	if _, err := importLines(t, env, company, device(successor, "New ECG", "EKG1"), device(spiro, "Spirometer (room 3)", "SPIRO1")); err != nil {
		t.Fatal(err)
	}

	report, err := restore.Run(ctx, company, copyAt, usecase.RestoreOptions{Sections: []string{"devices"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Recreated) != 0 || !maps.Equal(report.Reverted, map[string]int{"devices": 1}) || len(report.Conflicts) != 1 {
		t.Fatalf("devices: %+v", report)
	}
	if c := report.Conflicts[0]; c.Section != "devices" || c.ID != ecg || !strings.Contains(c.Reason, successor) {
		t.Errorf("the conflict: %+v, want the ECG's, naming %s", c, successor)
	}
	name := func(id string) string {
		o, err := env.Records.Get(ctx, f.grant, domain.KindOf("devices"), id)
		if err != nil {
			return err.Error()
		}
		var d struct {
			Name  string
			GDTID string `json:"gdt_id"`
		}
		if err := json.Unmarshal(o.Payload, &d); err != nil {
			t.Fatal(err)
		}
		return d.Name + "/" + d.GDTID
	}
	if got := []string{name(ecg), name(successor), name(spiro)}; got[0] != "not found" || got[1] != "New ECG/EKG1" || got[2] != "Spirometer/SPIRO1" {
		t.Errorf("after the restore: %q", got)
	}
}
