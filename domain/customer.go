package domain

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-health/praxis/domain/gdt"
)

// CustomerID is a patient's number, unique across the service; GDT field 3000 carries it.
type CustomerID int64

// ParseCustomerID reads a decimal customer number. Leading zeros are allowed
// (GDT exports often pad field 3000: "02345" names customer 2345); signs,
// spaces and anything else are not.
func ParseCustomerID(s string) (CustomerID, error) {
	if len(s) > 40 {
		return 0, invalid("customer", "not a customer number")
	}
	n, ok := gdt.Number(s)
	if !ok {
		return 0, invalid("customer", "not a customer number")
	}
	return CustomerID(n), nil
}

// ParseCustomerPathID reads a customer id as a path names it: the canonical
// decimal form only, within the id range.
func ParseCustomerPathID(s string) (CustomerID, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > MaxCustomerID || strconv.FormatInt(n, 10) != s {
		return 0, false
	}
	return CustomerID(n), true
}

// Customer is a patient of one company.
type Customer struct {
	ID        CustomerID // zero until stored, unless chosen explicitly
	CompanyID CompanyID
	Data      CustomerData
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewCustomer validates a patient the operator creates: unlike the API, the
// operator may choose the id and leave out the birth date.
func NewCustomer(company CompanyID, id CustomerID, firstName, lastName, birthDate string, now time.Time) (Customer, error) {
	if company.IsZero() {
		return Customer{}, invalid("company_id", "must be set")
	}
	if id < 0 || id > MaxCustomerID {
		return Customer{}, invalid("id", "must be between 1 and 9999999999")
	}
	firstName, lastName = strings.TrimSpace(firstName), strings.TrimSpace(lastName)
	if firstName == "" {
		return Customer{}, invalid("first_name", "must not be empty")
	}
	if lastName == "" {
		return Customer{}, invalid("last_name", "must not be empty")
	}
	c := Customer{ID: id, CompanyID: company, Data: CustomerData{FirstName: firstName, LastName: lastName}, CreatedAt: now.UTC(), UpdatedAt: now.UTC()}
	if birthDate != "" {
		d, err := time.Parse(time.DateOnly, birthDate)
		if err != nil {
			return Customer{}, invalid("birth_date", "must be YYYY-MM-DD")
		}
		if d.After(now) {
			return Customer{}, invalid("birth_date", "must not be in the future")
		}
		c.Data.BirthDate = ptr(Date(birthDate))
	}
	return c, nil
}

// Payload is the customer's fields as the customers section stores and answers them.
func (c Customer) Payload() ([]byte, error) {
	d := c.Data
	localize(reflect.ValueOf(&d), time.UTC)
	return json.Marshal(d)
}
