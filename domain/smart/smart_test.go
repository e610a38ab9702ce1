package smart

import "testing"

// TestSMARTScopes: SMART's system scopes, v2 and v1, are the praxis scopes
// they mean; anything else is refused.
func TestSMARTScopes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"system/Patient.rs", "customers:read"},
		{"system/Patient.r", "customers:read"},
		{"system/Patient.cruds", "customers:read customers:write"},
		{"system/Patient.cu", "customers:write"},
		{"system/Patient.read", "customers:read"},
		{"system/Observation.write", "measurements:write"},
		{"system/Appointment.c", "appointments:write booking:write"},
		{"system/Organization.rs", "company:read"},
		{"system/Patient.rs system/Condition.rs notes:read", "customers:read diagnoses:read notes:read"},
		{"system/Patient.rs customers:read", "customers:read"},
	} {
		got, err := ParseRequestedScopes(c.in)
		if err != nil || got.String() != c.want {
			t.Errorf("%q: %v %v, want %s", c.in, got, err, c.want)
		}
	}
	sections := map[string]bool{}
	for _, s := range FHIRTypes {
		sections[s] = true // DocumentReference and Binary are both the files'
	}
	all, err := ParseRequestedScopes("system/*.rs")
	if err != nil || len(all) != len(sections) {
		t.Errorf("system/*.rs: %v %v", all, err)
	}
	for _, bad := range []string{"system/Patient.sr", "system/Patient.x", "system/Patient.", "system/Medication.rs", "system/Patient", "patient/Patient.rs", "user/*.rs", "system/Patient.rr"} {
		if got, err := ParseRequestedScopes(bad); err == nil {
			t.Errorf("%q granted as %v", bad, got)
		}
	}
}
