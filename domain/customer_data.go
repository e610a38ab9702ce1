package domain

import "github.com/invopop/jsonschema"

// CustomerData is a patient as the customers section answers it (docs/sections.md §7).
type CustomerData struct {
	Title       *string  `json:"title" jsonschema:"maxLength=50,format=line"`
	FirstName   string   `json:"first_name" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
	LastName    string   `json:"last_name" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
	BirthDate   *Date    `json:"birth_date" jsonschema:"required" answer:"nullable"`
	Sex         *string  `json:"sex" jsonschema:"enum=female,enum=male,enum=diverse,enum=unknown"`
	SVNR        *string  `json:"svnr" jsonschema:"format=svnr"`
	KVNR        *string  `json:"kvnr" jsonschema:"format=kvnr"`
	Insurer     *string  `json:"insurer" jsonschema:"enum=oegk,enum=bvaeb,enum=svs,enum=kfa,enum=de_statutory,enum=private,enum=self_pay,enum=other"`
	InsurerName *string  `json:"insurer_name" jsonschema:"maxLength=100,format=line"`
	Email       *string  `json:"email" jsonschema:"format=email,maxLength=254"`
	Phone       *string  `json:"phone" jsonschema:"format=phone"`
	Address     *Address `json:"address"`
	IBAN        *string  `json:"iban" jsonschema:"maxLength=34,format=iban"`
	Alerts      []Alert  `json:"alerts" jsonschema:"maxItems=20"`
}

// Alert is what every colleague must see about a patient, e.g. an allergy.
type Alert string

func (Alert) JSONSchema() *jsonschema.Schema { return lineSchema(200) }

var customersKind = func() *Kind {
	k := newKind[CustomerData]("customers", ShapeCustomer, exampleCustomer)
	k.Patch = true // every field but the id
	return k
}()

// CustomersKind is the customers section's kind.
func CustomersKind() *Kind { return customersKind }

func (c *CustomerData) normalize(RuleContext) {}

func (c *CustomerData) check(rc RuleContext, errs *FieldErrors) {
	if c.BirthDate != nil && (*c.BirthDate < "1900-01-01" || c.BirthDate.After(rc.Today())) {
		errs.Add("birth_date", "must lie between 1900-01-01 and today")
	}
	if c.InsurerName != nil && (c.Insurer == nil || !oneOf(*c.Insurer, "kfa", "de_statutory", "private", "other")) {
		errs.Add("insurer_name", "is only for the insurers kfa, de_statutory, private and other")
	}
	c.Address.check("address", errs)
}

func (*CustomerData) refs() []Ref           { return nil }
func (*CustomerData) customer() *CustomerID { return nil }

const exampleCustomer = `{"title":"Mag.","first_name":"Anna","last_name":"Berger","birth_date":"1980-02-29","sex":"female",
"svnr":"1237010180","insurer":"oegk","email":"anna.berger@example.at","phone":"+436641234567",
"address":{"street":"Hauptstraße 1","postal_code":"1010","city":"Wien","country":"AT"},
"iban":"AT611904300234573201","alerts":["Penicillin allergy"]}`

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}
