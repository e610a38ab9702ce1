package domain

// Location is a place where the practice treats patients (docs/sections.md §2).
type Location struct {
	Name           string  `json:"name" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	Address        Address `json:"address" jsonschema:"required"`
	Phone          *string `json:"phone" jsonschema:"format=phone"`
	Email          *string `json:"email" jsonschema:"format=email,maxLength=254"`
	OnlineBookable *bool   `json:"online_bookable"`
	Active         *bool   `json:"active"`
}

func (l *Location) normalize(RuleContext) { defaultFlags(&l.OnlineBookable, false, &l.Active, true) }

func (l *Location) check(_ RuleContext, errs *FieldErrors) { l.Address.check("address", errs) }

func (*Location) refs() []Ref           { return nil }
func (*Location) customer() *CustomerID { return nil }

// defaultFlags sets the usual online_bookable/active defaults.
func defaultFlags(bookable *(*bool), bookableDefault bool, active *(*bool), activeDefault bool) {
	if *bookable == nil {
		*bookable = ptr(bookableDefault)
	}
	if *active == nil {
		*active = ptr(activeDefault)
	}
}

const exampleLocation = `{"name":"Ordination Wien Mitte","address":{"street":"Landstraßer Hauptstraße 1","postal_code":"1030","city":"Wien"},
"phone":"+4317123456","email":"wien@praxis-huber.at","online_bookable":true}`
