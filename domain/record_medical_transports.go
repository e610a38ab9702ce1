package domain

// MedicalTransport is a transport the insurer pays (docs/sections.md §22).
type MedicalTransport struct {
	DocumentBase
	TransportType        string   `json:"transport_type" jsonschema:"required,enum=taxi,enum=ambulance_seated,enum=ambulance_lying,enum=rescue,enum=emergency_doctor,enum=private_car"`
	TransportDate        Date     `json:"transport_date" jsonschema:"required"`
	ReturnTrip           *bool    `json:"return_trip"`
	PickupAddress        *Address `json:"pickup_address"`
	Destination          Contact  `json:"destination" jsonschema:"required"`
	MedicalJustification string   `json:"medical_justification" jsonschema:"required,maxLength=2000,format=text,pattern=\\S"`
	Needs                []string `json:"needs" jsonschema:"uniqueItems=true,enum=wheelchair,enum=stretcher,enum=escort,enum=oxygen"`
	Series               *Series  `json:"series"`
}

// Series is a transport repeated for a treatment.
type Series struct {
	Count  int    `json:"count" jsonschema:"required,minimum=2,maximum=60"`
	Reason string `json:"reason" jsonschema:"required,enum=dialysis,enum=chemotherapy,enum=radiotherapy,enum=other"`
}

func (t *MedicalTransport) normalize(rc RuleContext) {
	t.DocumentBase.normalize(rc)
	if t.ReturnTrip == nil {
		t.ReturnTrip = ptr(false)
	}
}

func (t *MedicalTransport) check(rc RuleContext, errs *FieldErrors) {
	t.DocumentBase.check(rc, errs)
	t.requireDiagnoses(errs)
	t.PickupAddress.check("pickup_address", errs)
	if t.Destination.Address == nil {
		errs.Add("destination.address", "is required")
	}
	t.Destination.check("destination", errs)
}

const exampleMedicalTransport = `{"customer_id":$CUSTOMER,"user_id":"$USER","transport_type":"ambulance_seated",
"transport_date":"2026-03-12","return_trip":true,
"destination":{"name":"AKH Wien","address":{"street":"Währinger Gürtel 18-20","postal_code":"1090","city":"Wien"}},
"medical_justification":"Cannot walk after surgery.","needs":["wheelchair"],"series":{"count":6,"reason":"dialysis"},
"diagnosis_ids":["$DIAGNOSIS"]}`
