package usecase_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

type practiceFixture struct {
	env      *testenv.Embedded
	grant    domain.Grant
	customer domain.CustomerID
}

func newPracticeFixture(t *testing.T, env *testenv.Embedded) practiceFixture {
	t.Helper()
	ctx := context.Background()
	c, _, err := env.Admin.CreateCompany(ctx, usecase.NewCompanyInput{Name: "Praxis"})
	if err != nil {
		t.Fatal(err)
	}
	cu, err := env.Admin.CreateCustomer(ctx, usecase.NewCustomerInput{Company: c.ID, FirstName: "Anna", LastName: "Berger"})
	if err != nil {
		t.Fatal(err)
	}
	return practiceFixture{env: env, grant: domain.Grant{ClientID: "pc_test", CompanyID: c.ID, Scopes: domain.SupportedScopes()}, customer: cu.ID}
}

func (f practiceFixture) create(t *testing.T, k *domain.Kind, body string) (map[string]any, error) {
	t.Helper()
	resp, err := f.env.Records.Create(context.Background(), f.grant, k, domain.ParseDocument([]byte(body)), nil)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(resp.Value.JSON(k), &out)
}

// TestRecordsUseCaseRequiredFields: for every kind, blanking each required
// field of its example is a 422 naming that field, and nothing is stored.
func TestRecordsUseCaseRequiredFields(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	f := newPracticeFixture(t, env)
	count := func(k *domain.Kind) int {
		page, err := env.Records.List(context.Background(), f.grant, k, domain.ListQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Items)
	}
	for _, k := range domain.Kinds() {
		if k.ReadOnly {
			continue // written by the import, whose tests run the same rules
		}
		before := count(k)
		required, _ := k.Schemas().Input["required"].([]any)
		for _, field := range required {
			var doc map[string]any
			if err := json.Unmarshal([]byte(k.ExampleWith(domain.ExampleIDs{Customer: f.customer, User: domain.NewObjectID(), Diagnosis: domain.NewObjectID(),
				Location: domain.NewObjectID(), Service: domain.NewObjectID(), Device: domain.NewObjectID()})), &doc); err != nil {
				t.Fatal(err)
			}
			delete(doc, field.(string))
			body, _ := json.Marshal(doc)
			_, err := f.create(t, k, string(body))
			var ve *domain.ValidationErrors
			if !errors.As(err, &ve) || ve.Errors[0].Field != field {
				t.Errorf("%s without %s: %v", k.Slug, field, err)
			}
		}
		if after := count(k); after != before {
			t.Errorf("%s: refused creates left %d objects", k.Slug, after-before)
		}
	}
}

// TestRecordsUseCaseReferences: references are looked up in the token's company only.
func TestRecordsUseCaseReferences(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	a, b := newPracticeFixture(t, env), newPracticeFixture(t, env)
	diagnoses := domain.KindOf("diagnoses")
	d, err := a.create(t, diagnoses, `{"customer_id":`+idJSON(a.customer)+`,"text":"Hypertension"}`)
	if err != nil {
		t.Fatal(err)
	}
	med := domain.KindOf("long-term-medications")
	// B names A's diagnosis, and its own customer: the diagnosis is unknown to B.
	_, err = b.create(t, med, `{"customer_id":`+idJSON(b.customer)+`,"name":"X","diagnosis_id":"`+d["id"].(string)+`"}`)
	if !hasField(err, "diagnosis_id") {
		t.Errorf("another company's diagnosis: %v", err)
	}
	// A's own diagnosis, but of another customer of A: refused too.
	other, err := env.Admin.CreateCustomer(context.Background(), usecase.NewCustomerInput{Company: a.grant.CompanyID, FirstName: "B", LastName: "C"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.create(t, med, `{"customer_id":`+idJSON(other.ID)+`,"name":"X","diagnosis_id":"`+d["id"].(string)+`"}`); !hasField(err, "diagnosis_id") {
		t.Errorf("another customer's diagnosis: %v", err)
	}
	if _, err := a.create(t, med, `{"customer_id":`+idJSON(a.customer)+`,"name":"X","diagnosis_id":"`+d["id"].(string)+`"}`); err != nil {
		t.Errorf("own diagnosis: %v", err)
	}
	if _, err := a.create(t, domain.KindOf("notes"), `{"customer_id":`+idJSON(b.customer)+`,"text":"x"}`); !hasField(err, "customer_id") {
		t.Errorf("another company's customer: %v", err)
	}
}

// TestHealthNotificationEndsItsIllnessNotification: the effect lands in the same transaction.
func TestHealthNotificationEndsItsIllnessNotification(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	f := newPracticeFixture(t, env)
	doctor := domain.NewObjectID()
	row := map[string]any{"id": doctor, "company_id": f.grant.CompanyID.String(), "kind": "users",
		"payload": `{"role":"doctor","active":true}`, "change": 0, "created_at": time.Now().UTC(), "updated_at": time.Now().UTC()}
	if _, err := env.DB.NewInsert().Model(&row).TableExpr("records").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	base := `"customer_id":` + idJSON(f.customer) + `,"user_id":"` + doctor + `"`
	illness, err := f.create(t, domain.KindOf("illness-notifications"), `{`+base+`,"issued_on":"2026-03-10","incapable_from":"2026-03-09","cause":"illness"}`)
	if err != nil {
		t.Fatal(err)
	}
	health := domain.KindOf("health-notifications")
	fit := `{` + base + `,"issued_on":"2026-03-13","fit_for_work_from":"2026-03-14","illness_notification_id":"` + illness["id"].(string) + `"}`
	h, err := f.create(t, health, fit)
	if err != nil {
		t.Fatal(err)
	}
	illnesses := domain.KindOf("illness-notifications")
	ended, err := env.Records.Get(context.Background(), f.grant, illnesses, illness["id"].(string))
	body := ended.JSON(illnesses)
	var got map[string]any
	if err != nil || json.Unmarshal(body, &got) != nil || got["ended_by_id"] != h["id"] || got["updated_at"] == illness["updated_at"] && got["ended_by_id"] == nil {
		t.Fatalf("the illness notification after the health notification: %s %v", body, err)
	}
	if _, err := f.create(t, health, fit); !hasField(err, "illness_notification_id") {
		t.Errorf("ending an ended notification again: %v", err)
	}
	early := `{` + base + `,"fit_for_work_from":"2026-03-01","illness_notification_id":"` + illness["id"].(string) + `"}`
	if _, err := f.create(t, health, early); !hasField(err, "illness_notification_id") {
		t.Errorf("fit before incapable and already ended: %v", err)
	}
	if _, err := f.create(t, domain.KindOf("patient-letters"), `{`+base+`,"subject":"S","text":"T"}`); err != nil {
		t.Errorf("a doctor signs a patient letter: %v", err)
	}
}

func hasField(err error, field string) bool {
	var ve *domain.ValidationErrors
	if !errors.As(err, &ve) {
		return false
	}
	for _, e := range ve.Errors {
		if e.Field == field {
			return true
		}
	}
	return false
}

func idJSON(id domain.CustomerID) string { b, _ := json.Marshal(int64(id)); return string(b) }
