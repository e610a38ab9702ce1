package domain

// Service is a treatment the practice offers (docs/sections.md §4).
type Service struct {
	Name               string   `json:"name" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	Description        *string  `json:"description" jsonschema:"maxLength=2000,format=text"`
	Category           *string  `json:"category" jsonschema:"maxLength=100,format=line"`
	DurationMinutes    int      `json:"duration_minutes" jsonschema:"required,minimum=5,maximum=480"`
	BufferAfterMinutes *int     `json:"buffer_after_minutes" jsonschema:"minimum=0,maximum=120"`
	SlotStepMinutes    *int     `json:"slot_step_minutes" jsonschema:"minimum=5,maximum=240"`
	Price              *Money   `json:"price"`
	Currency           *string  `json:"currency" jsonschema:"enum=EUR"`
	TaxRate            *Decimal `json:"tax_rate"`
	OnlineBookable     *bool    `json:"online_bookable"`
	Active             *bool    `json:"active"`
}

func (s *Service) normalize(RuleContext) {
	defaultFlags(&s.OnlineBookable, false, &s.Active, true)
	if s.BufferAfterMinutes == nil {
		s.BufferAfterMinutes = ptr(0)
	}
	if s.SlotStepMinutes == nil {
		s.SlotStepMinutes = ptr(15)
	}
	defaultTo(&s.Currency, "EUR")
	if s.TaxRate == nil {
		s.TaxRate = ptr(Decimal("0"))
	}
}

func (s *Service) check(_ RuleContext, errs *FieldErrors) {
	nonNegative("price", s.Price, errs)
	percent("tax_rate", s.TaxRate, errs)
}

func (*Service) refs() []Ref           { return nil }
func (*Service) customer() *CustomerID { return nil }

// nonNegative refuses a negative amount.
func nonNegative(field string, m *Money, errs *FieldErrors) {
	if m != nil && Decimal(*m).Rat().Sign() < 0 {
		errs.Add(field, "must not be negative")
	}
}

// percent refuses a percentage outside 0–100.
func percent(field string, d *Decimal, errs *FieldErrors) {
	if d != nil && !d.Between("0", "100") {
		errs.Add(field, "must lie between 0 and 100")
	}
}

const exampleService = `{"name":"Blood pressure check","description":"Measurement and consultation","category":"Prevention",
"duration_minutes":20,"buffer_after_minutes":5,"slot_step_minutes":20,"price":"45.00","tax_rate":"0","online_bookable":true}`
