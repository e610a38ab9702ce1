package domain

// ServiceAssignment says who offers which service where (docs/sections.md §5).
type ServiceAssignment struct {
	UserID          UUID    `json:"user_id" jsonschema:"required"`
	ServiceID       UUID    `json:"service_id" jsonschema:"required"`
	LocationID      *UUID   `json:"location_id"`
	DurationMinutes *int    `json:"duration_minutes" jsonschema:"minimum=5,maximum=480"`
	Price           *Money  `json:"price"`
	Currency        *string `json:"currency" jsonschema:"enum=EUR"`
	OnlineBookable  *bool   `json:"online_bookable"`
	Active          *bool   `json:"active"`
}

func (a *ServiceAssignment) normalize(RuleContext) {
	defaultFlags(&a.OnlineBookable, true, &a.Active, true)
	defaultTo(&a.Currency, "EUR")
}

func (a *ServiceAssignment) check(_ RuleContext, errs *FieldErrors) {
	nonNegative("price", a.Price, errs)
}

func (a *ServiceAssignment) refs() []Ref {
	out := []Ref{
		{Field: "user_id", Section: "users", ID: string(a.UserID), Rule: activeRule},
		{Field: "service_id", Section: "services", ID: string(a.ServiceID), Rule: activeRule},
	}
	if a.LocationID != nil {
		out = append(out, Ref{Field: "location_id", Section: "locations", ID: string(*a.LocationID), Rule: activeRule})
	}
	return out
}

func (*ServiceAssignment) customer() *CustomerID { return nil }

// activeRule refuses a reference to an inactive user, service or location.
func activeRule(t RefTarget) string {
	if active, ok := t.Attrs["active"].(bool); ok && !active {
		return "names an inactive object"
	}
	return ""
}

const exampleServiceAssignment = `{"user_id":"$USER","service_id":"$SERVICE","location_id":"$LOCATION","duration_minutes":20}`
