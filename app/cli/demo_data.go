package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/praxis-health/praxis/domain"
)

// demoLines is the demo practice as import lines: two locations, four users
// with working hours (one part-time at both locations, one with an
// absence), services and who offers them, a tenant, a record of every kind
// about the first patient, notes about the others, and the billing documents.
func demoLines(customers []domain.CustomerID) string {
	id := domain.NewObjectID
	wien, graz := id(), id()
	doctor, therapist, assistant, owner := id(), id(), id(), id()
	checkup, physio := id(), id()
	diagnosis := id()
	var lines []string
	written := map[string]bool{}
	add := func(section, objID string, data any) {
		written[section] = true
		raw, err := json.Marshal(data)
		if err != nil {
			panic(err) // the demo's own data
		}
		lines = append(lines, fmt.Sprintf(`{"section":%q,"id":%q,"data":%s}`, section, objID, raw))
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(strings.Join(strings.Fields(s), " ")) }
	address := func(street, postal, city string) map[string]any {
		return map[string]any{"street": street, "postal_code": postal, "city": city}
	}
	hours := func(loc string, from, to string, days ...string) []map[string]any {
		var out []map[string]any
		for _, d := range days {
			out = append(out, map[string]any{"location_id": loc, "weekday": d, "from": from, "to": to})
		}
		return out
	}
	add("locations", wien, map[string]any{"name": "Ordination Wien", "address": address("Landstraßer Hauptstraße 1", "1030", "Wien"),
		"phone": "+4317123456", "online_bookable": true})
	add("locations", graz, map[string]any{"name": "Ordination Graz", "address": address("Herrengasse 7", "8010", "Graz"), "online_bookable": true})
	add("users", doctor, map[string]any{"title": "Dr. med. univ.", "first_name": "Eva", "last_name": "Muster", "role": "doctor",
		"specialty": "General medicine", "online_bookable": true,
		"working_hours": hours(wien, "08:00", "12:00", "monday", "tuesday", "wednesday", "thursday", "friday"),
		"absences":      []map[string]any{{"start": "2026-12-24T00:00:00+01:00", "end": "2027-01-07T00:00:00+01:00"}}})
	add("users", therapist, map[string]any{"first_name": "Lukas", "last_name": "Berger", "role": "therapist", "specialty": "Physiotherapy",
		"online_bookable": true, "working_hours": append(hours(wien, "08:00", "12:00", "monday", "wednesday"), hours(graz, "13:00", "17:00", "thursday")...)})
	add("users", assistant, map[string]any{"first_name": "Sarah", "last_name": "Huber", "role": "assistant"})
	add("users", owner, map[string]any{"title": "Dr.", "first_name": "Max", "last_name": "Muster", "role": "owner"})
	add("services", checkup, raw(domain.KindOf("services").Example))
	add("services", physio, map[string]any{"name": "Physiotherapy", "duration_minutes": 30, "slot_step_minutes": 30, "price": "60.00", "online_bookable": true})
	add("service-assignments", id(), map[string]any{"user_id": doctor, "service_id": checkup, "location_id": wien})
	add("service-assignments", id(), map[string]any{"user_id": therapist, "service_id": physio})
	add("service-assignments", id(), map[string]any{"user_id": doctor, "service_id": physio, "location_id": wien, "online_bookable": false})
	ids := domain.ExampleIDs{Customer: customers[0], User: doctor, Diagnosis: diagnosis, Location: wien, Service: checkup, Device: id()}
	add("tenants", id(), raw(domain.KindOf("tenants").ExampleWith(ids)))
	// Every other kind of the table gets its example; the diagnosis keeps
	// the id the other examples refer to.
	named := map[string]string{"diagnoses": diagnosis, "devices": ids.Device}
	for _, k := range domain.Kinds() {
		if written[k.Slug] || k.NumericIDs() {
			continue
		}
		objID, ok := named[k.Slug]
		if !ok {
			objID = id()
		}
		add(k.Slug, objID, raw(k.ExampleWith(ids)))
	}
	for _, c := range customers[1:] {
		add("notes", id(), map[string]any{"customer_id": c, "user_id": doctor, "noted_on": "2026-03-10", "text": "Erstgespräch, keine Beschwerden."})
	}
	return strings.Join(lines, "\n") + "\n"
}
