package sqlstore_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/slots"
	"github.com/praxis-health/praxis/ports"
)

// TestCalendarBusy: the spans a slot query reads are the asked users'
// non-cancelled appointments of the company that meet the window, with
// their service's buffer, sorted by user and start; the buffer handed in
// is appended to.
func TestCalendarBusy(t *testing.T) {
	t.Parallel()
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		repos := repositoriesOn(db)
		store, tx, calendar, ctx := sqlstore.NewRecordStore(db), sqlstore.NewTransactor(db), sqlstore.NewCalendar(db), context.Background()
		var companies [2]domain.CompanyID
		for i := range companies {
			c, _, err := domain.NewCompany(fmt.Sprint("Praxis ", i), "", domain.PlanPro, 1000, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if err := repos.Companies.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			companies[i] = c.ID
		}
		insert := func(company domain.CompanyID, kind, id, payload string) {
			t.Helper()
			err := tx.InTx(ctx, func(ctx context.Context) error {
				_, err := store.Insert(ctx, company, domain.KindOf(kind), ports.StoredObject{ID: id, Payload: []byte(payload), CreatedAt: time.Now()})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		service, location := domain.NewObjectID(), domain.NewObjectID()
		users := []domain.UUID{domain.UUID(domain.NewObjectID()), domain.UUID(domain.NewObjectID()), domain.UUID(domain.NewObjectID())}
		insert(companies[0], "services", service, `{"name":"Check-up","duration_minutes":20,"buffer_after_minutes":10}`)
		payload := func(user domain.UUID, start, end, status string) string {
			return fmt.Sprintf(`{"title":"x","user_id":%q,"location_id":%q,"service_id":%q,"start":%q,"end":%q,"status":%q}`,
				user, location, service, start, end, status)
		}
		appointment := func(company domain.CompanyID, user domain.UUID, start, end, status string) string {
			id := domain.NewObjectID()
			insert(company, "appointments", id, payload(user, start, end, status))
			return id
		}
		appointment(companies[0], users[0], "2026-03-10T10:00:00+01:00", "2026-03-10T10:20:00+01:00", "booked")
		appointment(companies[0], users[0], "2026-03-10T09:00:00+01:00", "2026-03-10T09:20:00+01:00", "arrived")
		ofUser1 := appointment(companies[0], users[1], "2026-03-10T08:00:00+01:00", "2026-03-10T08:20:00+01:00", "booked")
		appointment(companies[0], users[0], "2026-03-10T11:00:00+01:00", "2026-03-10T11:20:00+01:00", "cancelled")         // blocks nothing
		ofUser2 := appointment(companies[0], users[2], "2026-03-10T09:00:00+01:00", "2026-03-10T09:20:00+01:00", "booked") // not asked for
		appointment(companies[0], users[0], "2026-03-12T09:00:00+01:00", "2026-03-12T09:20:00+01:00", "booked")            // after the window
		appointment(companies[1], users[0], "2026-03-10T12:00:00+01:00", "2026-03-10T12:20:00+01:00", "booked")            // another company

		at := func(s string) int64 {
			v, err := time.Parse(time.RFC3339, s)
			if err != nil {
				t.Fatal(err)
			}
			return v.Unix()
		}
		want := []slots.Busy{
			{User: users[0], From: at("2026-03-10T09:00:00+01:00"), Until: at("2026-03-10T09:30:00+01:00")},
			{User: users[0], From: at("2026-03-10T10:00:00+01:00"), Until: at("2026-03-10T10:30:00+01:00")},
			{User: users[1], From: at("2026-03-10T08:00:00+01:00"), Until: at("2026-03-10T08:30:00+01:00")},
		}
		slices.SortFunc(want, func(a, b slots.Busy) int { // by user, then start: users are random ids
			return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.From, b.From))
		})
		from, until := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)
		kept := slots.Busy{User: "kept", From: 1, Until: 2}
		got, err := calendar.Busy(ctx, companies[0], []domain.UUID{users[1], users[0]}, from, until, []slots.Busy{kept})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0] != kept || !slices.Equal(got[1:], want) {
			t.Errorf("busy:\n got %+v\nwant %+v after %+v", got, want, kept)
		}
		if got, err := calendar.Busy(ctx, companies[1], []domain.UUID{users[1]}, from, until, nil); err != nil || len(got) != 0 {
			t.Errorf("another company's user 1: %+v, %v", got, err)
		}
		if got, err := calendar.Busy(ctx, companies[0], []domain.UUID{"not-an-id"}, from, until, nil); err != nil || len(got) != 0 {
			t.Errorf("an invalid id: %+v, %v", got, err)
		}

		// Every way an appointment ends frees its time: a delete (the
		// import's too), a cancelling update; another company's delete of
		// the same id frees nothing.
		appointments := domain.KindOf("appointments")
		busyOf := func(user domain.UUID) []slots.Busy {
			t.Helper()
			got, err := calendar.Busy(ctx, companies[0], []domain.UUID{user}, from, until, nil)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		write := func(f func(ctx context.Context) error) {
			t.Helper()
			if err := tx.InTx(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.InTx(ctx, func(ctx context.Context) error {
			return store.Delete(ctx, companies[1], appointments, ofUser1, time.Now())
		}); err == nil || len(busyOf(users[1])) != 1 {
			t.Errorf("another company deleted the appointment (%v) or freed its time: %+v", err, busyOf(users[1]))
		}
		write(func(ctx context.Context) error {
			return store.Delete(ctx, companies[0], appointments, ofUser1, time.Now())
		})
		if got := busyOf(users[1]); len(got) != 0 {
			t.Errorf("a deleted appointment still blocks %+v", got)
		}
		write(func(ctx context.Context) error {
			_, err := store.Update(ctx, companies[0], appointments, ofUser2,
				[]byte(payload(users[2], "2026-03-10T09:00:00+01:00", "2026-03-10T09:20:00+01:00", "cancelled")), time.Now())
			return err
		})
		if got := busyOf(users[2]); len(got) != 0 {
			t.Errorf("a cancelled appointment still blocks %+v", got)
		}
	})
}
