package domain

// Tenant is a billing sub-account, e.g. a self-employed doctor of a group practice (docs/sections.md §29).
type Tenant struct {
	Name                  string  `json:"name" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	Kind                  string  `json:"kind" jsonschema:"required,enum=practice,enum=self_employed_user"`
	UserIDs               []UUID  `json:"user_ids" jsonschema:"required,minItems=1,uniqueItems=true"`
	Address               Address `json:"address" jsonschema:"required"`
	VATID                 *string `json:"vat_id" jsonschema:"pattern=^(ATU[0-9]{8}|DE[0-9]{9})$"`
	IBAN                  *string `json:"iban" jsonschema:"maxLength=34,format=iban"`
	BIC                   *string `json:"bic" jsonschema:"pattern=^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$"`
	InvoiceNumberPrefix   *string `json:"invoice_number_prefix" jsonschema:"maxLength=10,format=line"`
	ContractPartnerNumber *string `json:"contract_partner_number" jsonschema:"pattern=^[0-9]{1\\,20}$"`
	Active                *bool   `json:"active"`
}

func (t *Tenant) normalize(RuleContext) {
	if t.Active == nil {
		t.Active = ptr(true)
	}
}

func (t *Tenant) check(_ RuleContext, errs *FieldErrors) { t.Address.check("address", errs) }

func (t *Tenant) refs() []Ref {
	out := make([]Ref, len(t.UserIDs))
	for i, id := range t.UserIDs {
		out[i] = Ref{Field: "user_ids[" + itoa(i) + "]", Section: "users", ID: string(id)}
	}
	return out
}

func (*Tenant) customer() *CustomerID { return nil }

const exampleTenant = `{"name":"Dr. Eva Huber","kind":"self_employed_user","user_ids":["$USER"],
"address":{"street":"Landstraßer Hauptstraße 1","postal_code":"1030","city":"Wien"},"vat_id":"ATU12345678",
"iban":"AT611904300234573201","bic":"BKAUATWW","invoice_number_prefix":"EH-","contract_partner_number":"123456"}`
