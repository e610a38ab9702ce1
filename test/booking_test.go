// Holds docs/contract.md §4 The resource API: booking and appointments.

package test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// bookingDay is a local date a week ahead, past any booking notice.
func bookingDay(t *testing.T) string {
	t.Helper()
	vienna, err := time.LoadLocation("Europe/Vienna")
	if err != nil {
		t.Fatal(err)
	}
	return time.Now().In(vienna).AddDate(0, 0, 7).Format(time.DateOnly)
}

func (p practice) slots(t *testing.T, day string, extra string) []map[string]any {
	t.Helper()
	r := p.get(t, fmt.Sprintf("booking/slots?service_id=%s&location_id=%s&from=%s&to=%s%s", p.service, p.location, day, day, extra))
	if r.status != http.StatusOK {
		t.Fatalf("slots: %d %s", r.status, r.body)
	}
	doc := r.decode(t)
	if doc["time_zone"] != "Europe/Vienna" {
		t.Errorf("time_zone %v", doc["time_zone"])
	}
	var out []map[string]any
	for _, s := range doc["data"].([]any) {
		out = append(out, s.(map[string]any))
	}
	return out
}

func starts(slots []map[string]any) []string {
	out := make([]string, len(slots))
	for i, s := range slots {
		out[i] = s["start"].(string)
	}
	return out
}

func (p practice) booking(start string, customer string) string {
	return fmt.Sprintf(`{"service_id":%q,"user_id":%q,"location_id":%q,"start":%q,%s,"note":"Rückenschmerzen"}`,
		p.service, p.doctor, p.location, start, customer)
}

const newPatient = `"customer":{"first_name":"Lena","last_name":"Gruber","birth_date":"1990-05-17","email":"lena@example.at"}`

// TestBooking: the widget's calls, the booking, the cancel flow freeing
// the slot, the appointments section's status machine, and another company.
func TestBooking(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p, other := newPractice(t, s), newPractice(t, s)
		day := bookingDay(t)
		// Not bookable: an inactive service and a user who is not online-bookable, both assigned.
		hidden := seedRecord(t, s, p.company.ID, "services", `{"name":"Hidden","duration_minutes":30,"online_bookable":true,"active":false}`)
		office := seedUser(t, s, p.company.ID, "assistant")
		seedRecord(t, s, p.company.ID, "service-assignments", `{"user_id":"`+office+`","service_id":"`+p.service+`","location_id":null,"online_bookable":true,"active":true}`)
		seedRecord(t, s, p.company.ID, "service-assignments", `{"user_id":"`+p.doctor+`","service_id":"`+hidden+`","location_id":null,"online_bookable":true,"active":true}`)

		for path, want := range map[string]string{"booking/users": p.doctor, "booking/locations": p.location, "booking/services": p.service,
			"booking/users?service_id=" + p.service + "&location_id=" + p.location: p.doctor} {
			r := p.get(t, path)
			data, _ := r.decode(t)["data"].([]any)
			if r.status != http.StatusOK || len(data) != 1 || data[0].(map[string]any)["id"] != want {
				t.Errorf("GET %s: %d %s, want only %s", path, r.status, r.body, want)
			}
		}
		if r := p.get(t, "booking/users"); strings.Contains(string(r.body), "working_hours") || !strings.Contains(string(r.body), `"display_name":"Dr. Eva Huber"`) {
			t.Errorf("booking users show only the widget's fields: %s", r.body)
		}
		if r := p.get(t, "booking/services?user_id="+office); len(r.decode(t)["data"].([]any)) != 0 {
			t.Errorf("a user who is not bookable offers nothing: %s", r.body)
		}

		free := p.slots(t, day, "")
		if len(free) != 8 || !strings.HasPrefix(free[0]["start"].(string), day+"T08:00:00+0") || free[0]["user_id"] != p.doctor ||
			!strings.HasPrefix(free[0]["end"].(string), day+"T08:30:00+0") {
			t.Fatalf("slots of %s 08:00–12:00 every 30 minutes: %v", day, free)
		}
		// A change of the catalogue (by the import, the door of master data)
		// is seen by the very next query: the server keeps the catalogue per version.
		service := func(step int, bookable bool) {
			t.Helper()
			line := fmt.Sprintf(`{"section":"services","id":%q,"data":{"name":"Check-up","description":null,"category":null,"duration_minutes":30,`+
				`"buffer_after_minutes":0,"slot_step_minutes":%d,"price":"45.00","currency":"EUR","tax_rate":"0","online_bookable":%t,"active":true}}`, p.service, step, bookable)
			s.praxis(t, nil, "admin", "import", "--company", p.company.ID, writeLines(t, line))
		}
		service(60, true)
		if got := p.slots(t, day, ""); len(got) != 4 {
			t.Errorf("slots after the step became 60 minutes: %d, want 4", len(got))
		}
		service(60, false)
		if r := p.get(t, "booking/services"); len(r.decode(t)["data"].([]any)) != 0 {
			t.Errorf("a service no longer bookable is still offered: %s", r.body)
		}
		service(30, true)
		if got := p.slots(t, day, ""); len(got) != 8 {
			t.Errorf("slots after the step became 30 minutes again: %d, want 8", len(got))
		}
		if r := other.get(t, "booking/services"); strings.Contains(string(r.body), p.service) {
			t.Errorf("another company's catalogue shows this one's service: %s", r.body)
		}

		for query, field := range map[string]string{
			"service_id=" + p.service + "&location_id=" + p.location + "&from=" + day + "&to=2099-01-01":                    "to",
			"location_id=" + p.location + "&from=" + day + "&to=" + day:                                                     "service_id",
			"service_id=" + hidden + "&location_id=" + p.location + "&from=" + day + "&to=" + day:                           "service_id",
			"service_id=" + p.service + "&location_id=" + p.location + "&user_id=" + office + "&from=" + day + "&to=" + day: "user_id",
			"service_id=" + p.service + "&location_id=" + p.location + "&from=" + day + "&to=" + day + "&x=1":               "x",
		} {
			if r := p.get(t, "booking/slots?"+query); r.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, r), field) {
				t.Errorf("slots?%s: %d %s, want 422 on %s", query, r.status, r.body, field)
			}
		}

		// Book the 09:00 slot, with a new patient.
		start := free[2]["start"].(string)
		booked := p.post(t, "booking/appointments", p.booking(start, newPatient))
		if booked.status != http.StatusCreated {
			t.Fatalf("book: %d %s", booked.status, booked.body)
		}
		appt := booked.decode(t)
		if appt["status"] != "booked" || appt["source"] != "online_booking" || appt["start"] != start || appt["note"] != "Rückenschmerzen" {
			t.Errorf("booked appointment: %s", booked.body)
		}
		patient := fmt.Sprint(int64(appt["customer_id"].(float64)))
		if r := p.get(t, "customers/"+patient); r.status != http.StatusOK || r.decode(t)["last_name"] != "Gruber" {
			t.Errorf("the new patient: %d %s", r.status, r.body)
		}
		if again := p.post(t, "booking/appointments", p.booking(start, `"customer_id":`+patient)); again.status != http.StatusConflict ||
			again.decode(t)["type"] != "slot-unavailable" {
			t.Errorf("the same slot again: %d %s", again.status, again.body)
		}
		if got := starts(p.slots(t, day, "")); contains(got, start) || len(got) != 7 {
			t.Errorf("the booked slot is still offered: %v", got)
		}
		if r := p.post(t, "booking/appointments", p.booking(strings.Replace(start, ":00:00", ":10:00", 1), `"customer_id":`+patient)); r.status != http.StatusConflict {
			t.Errorf("a start off the grid: %d %s", r.status, r.body)
		}
		for body, field := range map[string]string{
			p.booking(start, `"customer_id":`+patient+`,`+newPatient):                          "customer",
			strings.Replace(p.booking(start, newPatient), `,"email":"lena@example.at"`, "", 1): "customer.email",
			strings.Replace(p.booking(start, `"customer_id":`+patient), p.service, hidden, 1):  "service_id",
			p.booking(start, `"customer_id":`+patient+`,"status":"booked"`):                    "status",
			p.booking("tomorrow", `"customer_id":`+patient):                                    "start",
		} {
			if r := p.post(t, "booking/appointments", body); r.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, r), field) {
				t.Errorf("%s: %d %s, want 422 on %s", body, r.status, r.body, field)
			}
		}

		// Another company sees nothing of it and cannot book this practice's doctor.
		id := appt["id"].(string)
		if r := other.get(t, "appointments/"+id); r.status != http.StatusNotFound {
			t.Errorf("another company reads the appointment: %d", r.status)
		}
		if r := other.post(t, "appointments/"+id+"/cancel", `{"reason":"other","note":"x"}`); r.status != http.StatusNotFound {
			t.Errorf("another company cancels it: %d", r.status)
		}
		if r := other.post(t, "booking/appointments", p.booking(start, newPatient)); r.status != http.StatusUnprocessableEntity {
			t.Errorf("another company books this practice's doctor: %d %s", r.status, r.body)
		}

		// Cancel: the reason is checked, the slot is free at once and can be booked again.
		if r := p.post(t, "appointments/"+id+"/cancel", `{"reason":"other"}`); r.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, r), "note") {
			t.Errorf("cancel for another reason without a note: %d %s", r.status, r.body)
		}
		cancelled := p.post(t, "appointments/"+id+"/cancel", `{"reason":"customer_request","note":"verschoben"}`)
		if c := cancelled.decode(t); cancelled.status != http.StatusOK || c["status"] != "cancelled" || c["cancellation_reason"] != "customer_request" ||
			c["cancelled_at"] == nil {
			t.Errorf("cancel: %d %s", cancelled.status, cancelled.body)
		}
		if r := p.post(t, "appointments/"+id+"/cancel", `{"reason":"customer_request"}`); r.status != http.StatusConflict || r.decode(t)["type"] != "invalid-transition" {
			t.Errorf("cancel twice: %d %s", r.status, r.body)
		}
		if r := p.s.request(t, http.MethodPatch, resource+"appointments/"+id, "application/json", `{"note":"x"}`, p.auth); r.status != http.StatusConflict {
			t.Errorf("PATCH of a cancelled appointment: %d %s", r.status, r.body)
		}
		if got := starts(p.slots(t, day, "&user_id="+p.doctor)); !contains(got, start) {
			t.Errorf("the cancelled slot is not free again: %v", got)
		}
		if r := p.post(t, "booking/appointments", p.booking(start, `"customer_id":`+patient)); r.status != http.StatusCreated {
			t.Errorf("book the freed slot: %d %s", r.status, r.body)
		}
	})
}

// TestAppointmentsSection: POST without an end, the status machine, list filters.
func TestAppointmentsSection(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		day := bookingDay(t)
		patch := func(id, body string) reply {
			return p.s.request(t, http.MethodPatch, resource+"appointments/"+id, "application/merge-patch+json", body, p.auth)
		}
		r := p.post(t, "appointments", fmt.Sprintf(`{"customer_id":%d,"user_id":%q,"location_id":%q,"service_id":%q,"start":"%sT10:00:00+01:00"}`,
			p.customer, p.doctor, p.location, p.service, day))
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		a := r.decode(t)
		id := a["id"].(string)
		startAt, _ := time.Parse(time.RFC3339, a["start"].(string))
		endAt, _ := time.Parse(time.RFC3339, a["end"].(string))
		if endAt.Sub(startAt) != 30*time.Minute || a["status"] != "booked" || a["source"] != "api" {
			t.Errorf("the end defaults to the service's 30 minutes: %s", r.body)
		}
		// The practice may overbook on purpose: a second appointment over the first is taken.
		if r := p.post(t, "appointments", fmt.Sprintf(`{"title":"Team meeting","user_id":%q,"location_id":%q,"start":"%sT10:00:00+01:00","end":"%sT11:00:00+01:00"}`,
			p.doctor, p.location, day, day)); r.status != http.StatusCreated {
			t.Errorf("a meeting over the appointment: %d %s", r.status, r.body)
		}
		for body, field := range map[string]string{
			fmt.Sprintf(`{"user_id":%q,"location_id":%q,"start":"%sT10:00:00+01:00","end":"%sT11:00:00+01:00"}`, p.doctor, p.location, day, day):                                "title",
			fmt.Sprintf(`{"title":"x","user_id":%q,"location_id":%q,"start":"%sT10:00:30+01:00","end":"%sT11:00:00+01:00"}`, p.doctor, p.location, day, day):                    "start",
			fmt.Sprintf(`{"title":"x","user_id":%q,"location_id":%q,"start":"%sT10:00:00+01:00"}`, p.doctor, p.location, day):                                                   "end",
			fmt.Sprintf(`{"title":"x","user_id":%q,"location_id":%q,"start":"%sT10:00:00+01:00","end":"%sT09:00:00+01:00"}`, p.doctor, p.location, day, day):                    "end",
			fmt.Sprintf(`{"title":"x","user_id":%q,"location_id":%q,"start":"%sT10:00:00","end":"%sT11:00:00+01:00"}`, p.doctor, p.location, day, day):                          "start",
			fmt.Sprintf(`{"title":"x","user_id":%q,"location_id":%q,"start":"%sT10:00:00+01:00","end":"%sT11:00:00+01:00","status":"arrived"}`, p.doctor, p.location, day, day): "status",
		} {
			if r := p.post(t, "appointments", body); r.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, r), field) {
				t.Errorf("%s: %d %s, want 422 on %s", body, r.status, r.body, field)
			}
		}
		if r := patch(id, `{"status":"no_show"}`); r.status != http.StatusConflict || r.decode(t)["type"] != "invalid-transition" {
			t.Errorf("no_show before the start: %d %s", r.status, r.body)
		}
		if r := patch(id, `{"status":"cancelled"}`); r.status != http.StatusConflict {
			t.Errorf("cancelled by PATCH: %d %s", r.status, r.body)
		}
		moved := patch(id, fmt.Sprintf(`{"start":"%sT11:00:00+01:00","note":"verschoben"}`, day))
		if m := moved.decode(t); moved.status != http.StatusOK || !strings.HasPrefix(m["end"].(string), day+"T11:30:00") || m["note"] != "verschoben" {
			t.Errorf("reschedule keeps the length: %d %s", moved.status, moved.body)
		}
		if r := patch(id, `{"status":"arrived"}`); r.status != http.StatusOK || r.decode(t)["status"] != "arrived" {
			t.Errorf("booked → arrived: %d %s", r.status, r.body)
		}
		if r := patch(id, fmt.Sprintf(`{"start":"%sT12:00:00+01:00"}`, day)); r.status != http.StatusConflict {
			t.Errorf("reschedule while arrived: %d %s", r.status, r.body)
		}
		if r := patch(id, `{"status":"booked"}`); r.status != http.StatusOK || r.decode(t)["status"] != "booked" {
			t.Errorf("arrived → booked (undo): %d %s", r.status, r.body)
		}
		if r := patch(id, `{"source":"practice"}`); r.status != http.StatusUnprocessableEntity {
			t.Errorf("PATCH of a server field: %d %s", r.status, r.body)
		}

		// Filters: the user's, the location's, the local dates of the start.
		p.listed(t, "appointments?user_id="+p.doctor+"&from="+day+"&to="+day, id)
		p.listed(t, "appointments?location_id="+p.location, id)
		for _, q := range []string{"user_id=" + domain.NewObjectID(), "from=" + nextDay(t, day), "to=2020-01-01"} {
			if r := p.get(t, "appointments?"+q); r.status != http.StatusOK || strings.Contains(string(r.body), id) {
				t.Errorf("?%s lists it: %d %s", q, r.status, r.body)
			}
		}
		for _, q := range []string{"user_id=x", "from=2026-13-01", "from=2026-03-02&to=2026-03-01"} {
			if r := p.get(t, "appointments?"+q); r.status != http.StatusUnprocessableEntity {
				t.Errorf("?%s: %d %s", q, r.status, r.body)
			}
		}
	})
}

func nextDay(t *testing.T, day string) string {
	t.Helper()
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		t.Fatal(err)
	}
	return d.AddDate(0, 0, 1).Format(time.DateOnly)
}

// TestBookingRace: twenty bookings of one slot at once → one 201, nineteen
// 409, on both backends; on PostgreSQL the twenty are spread over two
// server processes, and the database's constraint stands behind the check.
func TestBookingRace(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		servers := []*server{s}
		if b.name == "postgres" {
			servers = append(servers, s.replica(t))
		}
		start := starts(p.slots(t, bookingDay(t), ""))[3]
		body := p.booking(start, fmt.Sprintf(`"customer_id":%d`, p.customer))
		var wg sync.WaitGroup
		statuses := make([]int, 20)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := servers[i%len(servers)].request(t, http.MethodPost, resource+"booking/appointments", "application/json", body, p.auth)
				statuses[i] = r.status
			}()
		}
		wg.Wait()
		created, conflicts := 0, 0
		for _, st := range statuses {
			switch st {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
				conflicts++
			}
		}
		if created != 1 || conflicts != 19 {
			t.Errorf("20 bookings of one slot: %d created, %d conflicts (%v)", created, conflicts, statuses)
		}
		list := p.get(t, "appointments?user_id="+p.doctor)
		if n := strings.Count(string(list.body), `"start":"`+start+`"`); n > 1 {
			t.Errorf("the slot is booked %d times", n)
		}
	})
}
