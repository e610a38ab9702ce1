package domain

import (
	"encoding/json"
	"slices"
	"time"
)

// Measurement is one vital sign or measured value (docs/sections.md §13).
type Measurement struct {
	RecordBase
	MeasuredAt DateTime    `json:"measured_at" jsonschema:"required"`
	Type       string      `json:"type" jsonschema:"required,enum=blood_pressure,enum=pulse,enum=respiratory_rate,enum=temperature,enum=weight,enum=height,enum=waist_circumference,enum=bmi,enum=oxygen_saturation,enum=blood_glucose,enum=other"`
	Name       *string     `json:"name" jsonschema:"maxLength=100,format=line"`
	LOINCCode  *string     `json:"loinc_code" jsonschema:"format=loinc"`
	Value      *Decimal    `json:"value"`
	Unit       *string     `json:"unit" jsonschema:"maxLength=20,format=line"`
	Components []Component `json:"components"`
	Source     *string     `json:"source" jsonschema:"enum=manual,enum=device,enum=gdt"`
	Note       *string     `json:"note" jsonschema:"maxLength=1000,format=line"`
}

// Component is one part of a compound measurement (systolic, diastolic).
type Component struct {
	Code  string  `json:"code" jsonschema:"required,format=loinc"`
	Value Decimal `json:"value" jsonschema:"required"`
	Unit  string  `json:"unit" jsonschema:"required,maxLength=20,format=line"`
}

// measurementType is a row of the spec's table: its LOINC code per unit and plausible range.
type measurementType struct {
	units  map[string]string // unit → LOINC code
	lo, hi map[string]string // unit → plausible bounds
}

func single(unit, loinc, lo, hi string) measurementType {
	return measurementType{map[string]string{unit: loinc}, map[string]string{unit: lo}, map[string]string{unit: hi}}
}

var measurementTypes = map[string]measurementType{
	"pulse":               single("/min", "8867-4", "20", "300"),
	"respiratory_rate":    single("/min", "9279-1", "4", "80"),
	"temperature":         single("Cel", "8310-5", "30", "45"),
	"weight":              single("kg", "29463-7", "0.2", "500"),
	"height":              single("cm", "8302-2", "20", "260"),
	"waist_circumference": single("cm", "8280-0", "30", "250"),
	"bmi":                 single("kg/m2", "39156-5", "5", "100"),
	"oxygen_saturation":   single("%", "59408-5", "50", "100"),
	"blood_glucose": {
		units: map[string]string{"mg/dL": "2339-0", "mmol/L": "15074-8"},
		lo:    map[string]string{"mg/dL": "10", "mmol/L": "0.5"},
		hi:    map[string]string{"mg/dL": "1000", "mmol/L": "55"},
	},
}

const (
	loincBloodPressure = "85354-9"
	loincSystolic      = "8480-6"
	loincDiastolic     = "8462-4"
)

func (m *Measurement) normalize(RuleContext) { defaultTo(&m.Source, "manual") }

// serverLOINC is the code the server sets from type (and unit); "" for other.
func (m *Measurement) serverLOINC() string {
	if m.Type == "blood_pressure" {
		return loincBloodPressure
	}
	if t, ok := measurementTypes[m.Type]; ok && m.Unit != nil {
		return t.units[*m.Unit]
	}
	return ""
}

func (m *Measurement) check(rc RuleContext, errs *FieldErrors) {
	if m.MeasuredAt.After(rc.Now.Add(5 * time.Minute)) {
		errs.Add("measured_at", "must not be more than 5 minutes in the future")
	}
	switch m.Type {
	case "other":
		if blank(m.Name) {
			errs.Add("name", "is required for type other")
		}
		if m.Value == nil {
			errs.Add("value", "is required")
		}
		if (m.Value == nil) != (m.Unit == nil) {
			errs.Add("unit", "is required with value, and only with it")
		}
	case "blood_pressure":
		m.checkBloodPressure(errs)
	default:
		m.checkTable(errs)
	}
	if m.Type != "blood_pressure" && len(m.Components) > 0 {
		errs.Add("components", "are only for blood_pressure")
	}
	if want := m.serverLOINC(); want != "" {
		if m.LOINCCode != nil && *m.LOINCCode != want {
			errs.Add("loinc_code", "must be "+want+" for this type, or absent")
		}
		m.LOINCCode = &want
	}
}

func (m *Measurement) checkTable(errs *FieldErrors) {
	t := measurementTypes[m.Type]
	units := make([]string, 0, len(t.units))
	for u := range t.units {
		units = append(units, u)
	}
	slices.Sort(units)
	switch {
	case m.Value == nil:
		errs.Add("value", "is required for this type")
	case m.Unit == nil || t.units[*m.Unit] == "":
		errs.Add("unit", "must be one of the type's units: "+joinComma(units))
	case !m.Value.Between(t.lo[*m.Unit], t.hi[*m.Unit]):
		errs.Add("value", "must lie between "+t.lo[*m.Unit]+" and "+t.hi[*m.Unit]+" "+*m.Unit)
	}
}

func (m *Measurement) checkBloodPressure(errs *FieldErrors) {
	if m.Value != nil {
		errs.Add("value", "must be null for blood_pressure; the values are its components")
	}
	if m.Unit != nil {
		errs.Add("unit", "must be null for blood_pressure")
	}
	if len(m.Components) != 2 {
		errs.Add("components", "blood_pressure needs exactly two: systolic 8480-6 and diastolic 8462-4")
		return
	}
	byCode := map[string]Component{}
	for i, c := range m.Components {
		at := "components[" + itoa(i) + "]"
		if c.Code != loincSystolic && c.Code != loincDiastolic {
			errs.Add(at+".code", "must be 8480-6 (systolic) or 8462-4 (diastolic)")
		}
		if c.Unit != "mm[Hg]" {
			errs.Add(at+".unit", "must be mm[Hg]")
		}
		if !c.Value.Between("30", "300") {
			errs.Add(at+".value", "must lie between 30 and 300 mm[Hg]")
		}
		byCode[c.Code] = c
	}
	sys, okS := byCode[loincSystolic]
	dia, okD := byCode[loincDiastolic]
	switch {
	case !okS || !okD:
		errs.Add("components", "need one systolic 8480-6 and one diastolic 8462-4")
	case sys.Value.Rat().Cmp(dia.Value.Rat()) <= 0:
		errs.Add("components", "the systolic value must be above the diastolic")
	}
}

const exampleMeasurement = `{"customer_id":$CUSTOMER,"user_id":"$USER","measured_at":"2026-03-10T09:08:00+01:00",
"type":"blood_pressure","source":"device",
"components":[{"code":"8480-6","value":"148","unit":"mm[Hg]"},{"code":"8462-4","value":"92","unit":"mm[Hg]"}]}`

// measurementObserved: a measurement is one row, its LOINC code when measured.
func measurementObserved(payload []byte) []ObservedRow {
	var m struct {
		MeasuredAt string  `json:"measured_at"`
		LOINCCode  *string `json:"loinc_code"`
	}
	if json.Unmarshal(payload, &m) != nil {
		return nil
	}
	row := ObservedRow{Code: deref(m.LOINCCode)}
	row.From, row.Until, _ = ValueSpan(m.MeasuredAt)
	return []ObservedRow{row}
}
