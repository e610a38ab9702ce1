package domain

//go:generate go run ./internal/gendocs ../docs/sections.md ../charts/praxis/crds/oauthclients.praxis-health.io.yaml ../docs/integrators/oauth.md ../docs/integrators/resource-api.md ../docs/operators/commands.md

// Section is one part of the resource API (docs/contract.md §4) by its path slug.
// Kind is set for the generic sections, whose routes, storage, OpenAPI
// paths and contract tests all derive from this table; a section without a
// Kind is bespoke and registers its own routes.
type Section struct {
	Slug string
	// Name is what the practice calls the section, in German and English:
	// the settings pages show it where a scope is shown, never the slug.
	Name Names
	Kind *Kind
	// OptIn sections' scopes are granted only when asked for by name, like
	// audit:read (a device carries a credential of its own).
	OptIn bool
}

// Sections is the table of the resource API, in the spec's order. Each
// section has a read and a write scope (AllScopes).
var Sections = []Section{
	{Slug: "booking", Name: Names{"Online-Buchung", "Online booking"}},
	{Slug: "locations", Name: Names{"Standorte", "Locations"}, Kind: inCatalog(masterData[Location]("locations", exampleLocation))},
	{Slug: "users", Name: Names{"Benutzer", "Users"}, Kind: inCatalog(masterData[User]("users", exampleUser))},
	{Slug: "services", Name: Names{"Leistungen", "Services"}, Kind: inCatalog(masterData[Service]("services", exampleService))},
	{Slug: "service-assignments", Name: Names{"Leistungszuordnungen", "Service assignments"}, Kind: inCatalog(masterData[ServiceAssignment]("service-assignments", exampleServiceAssignment))},
	{Slug: "appointments", Name: Names{"Termine", "Appointments"}, Kind: calendar(withPatch(record[Appointment]("appointments", exampleAppointment)))},
	{Slug: "customers", Name: Names{"Patienten", "Patients"}, Kind: customersKind},
	{Slug: "notes", Name: Names{"Notizen", "Notes"}, Kind: record[Note]("notes", exampleNote)},
	{Slug: "medical-fee-services", Name: Names{"Honorarleistungen", "Medical fee services"}, Kind: withPatch(record[MedicalFeeService]("medical-fee-services", exampleMedicalFeeService), "customer_id")},
	{Slug: "diagnoses", Name: Names{"Diagnosen", "Diagnoses"}, Kind: record[Diagnosis]("diagnoses", exampleDiagnosis)},
	{Slug: "files", Name: Names{"Dateien", "Files"}},
	{Slug: "anamneses", Name: Names{"Anamnesen", "Anamneses"}, Kind: record[Anamnesis]("anamneses", exampleAnamnesis)},
	{Slug: "measurements", Name: Names{"Messwerte", "Measurements"}, Kind: observed(record[Measurement]("measurements", exampleMeasurement), measurementObserved)},
	{Slug: "long-term-medications", Name: Names{"Dauermedikation", "Long-term medication"}, Kind: record[LongTermMedication]("long-term-medications", exampleLongTermMedication)},
	{Slug: "sports-exemptions", Name: Names{"Sportbefreiungen", "Sports exemptions"}, Kind: record[SportsExemption]("sports-exemptions", exampleSportsExemption)},
	{Slug: "referrals", Name: Names{"Überweisungen", "Referrals"}, Kind: record[Referral]("referrals", exampleReferral)},
	{Slug: "regulations", Name: Names{"Verordnungen", "Prescriptions and orders"}, Kind: record[Regulation]("regulations", exampleRegulation)},
	{Slug: "visit-confirmations", Name: Names{"Besuchsbestätigungen", "Visit confirmations"}, Kind: record[VisitConfirmation]("visit-confirmations", exampleVisitConfirmation)},
	{Slug: "incoming-referrals", Name: Names{"Eingehende Überweisungen", "Incoming referrals"}, Kind: record[IncomingReferral]("incoming-referrals", exampleIncomingReferral)},
	{Slug: "doctor-letters", Name: Names{"Arztbriefe", "Doctor's letters"}, Kind: record[DoctorLetter]("doctor-letters", exampleDoctorLetter)},
	{Slug: "patient-letters", Name: Names{"Patientenbriefe", "Letters to patients"}, Kind: record[PatientLetter]("patient-letters", examplePatientLetter)},
	{Slug: "medical-transports", Name: Names{"Krankentransporte", "Medical transports"}, Kind: record[MedicalTransport]("medical-transports", exampleMedicalTransport)},
	{Slug: "lab-results", Name: Names{"Laborbefunde", "Lab results"}, Kind: observed(record[LabResult]("lab-results", exampleLabResult), labResultObserved)},
	{Slug: "illness-notifications", Name: Names{"Krankmeldungen", "Sick notes"}, Kind: record[IllnessNotification]("illness-notifications", exampleIllnessNotification)},
	{Slug: "health-notifications", Name: Names{"Gesundmeldungen", "Fit-for-work notes"}, Kind: record[HealthNotification]("health-notifications", exampleHealthNotification)},
	{Slug: "invoices", Name: Names{"Rechnungen", "Invoices"}, Kind: masterData[Invoice]("invoices", exampleInvoice)},
	{Slug: "cash-revenues", Name: Names{"Bareinnahmen", "Cash takings"}, Kind: masterData[CashRevenue]("cash-revenues", exampleCashRevenue)},
	{Slug: "fee-notes", Name: Names{"Honorarnoten", "Fee notes"}, Kind: masterData[FeeNote]("fee-notes", exampleFeeNote)},
	{Slug: "tenants", Name: Names{"Abrechnungskonten", "Billing accounts"}, Kind: masterData[Tenant]("tenants", exampleTenant)},
	{Slug: "devices", Name: Names{"Geräte", "Devices"}, Kind: withActions(unique(withPatch(newKind[Device]("devices", ShapeMasterData, exampleDevice)), "gdt_id"),
		"POST devices/{id}/credential (the device's OAuth client for its bridge)"), OptIn: true},
	{Slug: "device-orders", Name: Names{"Geräteaufträge", "Device orders"}, Kind: filters(numbered(ownWrites(record[DeviceOrder]("device-orders", exampleDeviceOrder), deviceOrderActions...), "number"), "device_id", "status")},
	{Slug: "company", Name: Names{"Praxis", "Practice"}},
}

func record[T any, PT interface {
	*T
	Payload
}](slug, example string) *Kind {
	return newKind[T, PT](slug, ShapeRecord, example)
}

// withPatch offers PATCH on k; immutable fields may not change.
func withPatch(k *Kind, immutable ...string) *Kind {
	k.Patch, k.Immutable = true, immutable
	return k
}

// deprecated marks a field of k deprecated since a release, until its
// sunset (dates YYYY-MM-DD; docs/contract.md §10): the document says so on
// the input and output schemas, and every answer that touches the field
// announces it (Deprecation, Sunset, Link). The release's notes tell why
// and what replaces it; make lint checks the notice.
func deprecated(k *Kind, field, since, sunset string) *Kind {
	for _, schema := range []map[string]any{k.schemas.Input, k.schemas.Output} {
		props, _ := schema["properties"].(map[string]any)
		p, ok := props[field].(map[string]any)
		if !ok {
			panic("deprecated: " + k.Slug + " has no field " + field) // the table is ours
		}
		p["deprecated"], p["x-deprecated-at"], p["x-sunset"] = true, since, sunset
	}
	return k
}

// unique marks a field whose value no two live objects of a company share
// (the store enforces it; a clash is a 422 on the field).
func unique(k *Kind, field string) *Kind {
	k.Unique = field
	return k
}

// numbered gives each new object of k the next number of its company in field.
func numbered(k *Kind, field string) *Kind {
	k.Counter = field
	return k
}

// withActions lists operations of k beyond the generic ones (a use case of its own serves them).
func withActions(k *Kind, actions ...string) *Kind {
	k.Actions = append(k.Actions, actions...)
	return k
}

// ownWrites marks a kind whose writes a use case of its own serves: the
// generic routes read it, its own handler writes it (device orders render
// a GDT record on create).
func ownWrites(k *Kind, actions ...string) *Kind {
	k.OwnWrites = true
	return withActions(k, actions...)
}

// filters lets k's lists filter by payload fields (?field=value).
func filters(k *Kind, fields ...string) *Kind {
	k.Filters = fields
	return k
}

// calendar marks k as blocking its users' time: the store keeps each
// object's busy span, and its lists filter by user, location and dates.
func calendar(k *Kind) *Kind {
	k.Calendar = true
	k.Hooks = append(k.Hooks, HookCalendarSpan)
	return k
}

// observed marks k as a section whose objects are Observations (and
// reports) a search compares by code and date: the store keeps each
// object's observed rows, as rows reads them, beside it (ObservedOf).
func observed(k *Kind, rows func(payload []byte) []ObservedRow) *Kind {
	k.Hooks, k.observedRows = append(k.Hooks, HookObserved), rows
	return k
}

// inCatalog marks k as a section the booking catalogue is read from: its
// writes move the company's catalogue version.
func inCatalog(k *Kind) *Kind {
	k.Hooks = append(k.Hooks, HookCatalogVersion)
	return k
}

// masterData is a company-wide kind without a write endpoint: the operator's import writes it.
func masterData[T any, PT interface {
	*T
	Payload
}](slug, example string) *Kind {
	k := newKind[T, PT](slug, ShapeMasterData, example)
	k.ReadOnly = true
	return k
}

// SectionBySlug finds a section of the table; nil when there is none.
func SectionBySlug(slug string) *Section {
	for i := range Sections {
		if Sections[i].Slug == slug {
			return &Sections[i]
		}
	}
	return nil
}

// Kinds are the generic sections' kinds, in table order.
func Kinds() []*Kind {
	var out []*Kind
	for _, s := range Sections {
		if s.Kind != nil {
			out = append(out, s.Kind)
		}
	}
	return out
}

// KindOf is the kind of a generic section; nil for a bespoke or unknown one.
func KindOf(slug string) *Kind {
	if s := SectionBySlug(slug); s != nil {
		return s.Kind
	}
	return nil
}

// Names is a name in German and in English.
type Names struct{ De, En string }

// In is the name in lang ("de" or "en"; English otherwise).
func (n Names) In(lang string) string {
	if lang == "de" {
		return n.De
	}
	return n.En
}

// scopeOnlyNames name the scopes that are no section's.
var scopeOnlyNames = map[string]Names{
	"audit":    {"Zugriffsprotokoll", "Audit trail"},
	"webhooks": {"Webhooks", "Webhooks"},
}

// SectionName is what the practice calls the section of slug (or the part
// of a scope before its colon); false when nothing names it.
func SectionName(slug string) (Names, bool) {
	for _, s := range Sections {
		if s.Slug == slug {
			return s.Name, s.Name.De != ""
		}
	}
	n, ok := scopeOnlyNames[slug]
	return n, ok
}
