package domain

import "time"

// IllnessNotification certifies incapacity for work (docs/sections.md §24).
type IllnessNotification struct {
	DocumentBase
	IncapableFrom Date    `json:"incapable_from" jsonschema:"required"`
	ExpectedUntil *Date   `json:"expected_until"`
	Cause         string  `json:"cause" jsonschema:"required,enum=illness,enum=accident,enum=work_accident,enum=occupational_disease"`
	OutingHours   *string `json:"outing_hours" jsonschema:"maxLength=100,format=line"`
	Transmission  *string `json:"transmission" jsonschema:"enum=paper,enum=electronic"`
	EndedByID     *UUID   `json:"ended_by_id" server:"true"`
}

func (n *IllnessNotification) normalize(rc RuleContext) {
	n.DocumentBase.normalize(rc)
	defaultTo(&n.Transmission, "paper")
}

func (n *IllnessNotification) check(rc RuleContext, errs *FieldErrors) {
	n.DocumentBase.check(rc, errs)
	issued := *n.IssuedOn
	switch {
	case n.IncapableFrom.After(issued):
		errs.Add("incapable_from", "must not be after issued_on")
	case n.IncapableFrom < previousWorkingDay(issued):
		errs.Add("incapable_from", "must be at most one working day before issued_on")
	}
	orderedDates("expected_until", &n.IncapableFrom, n.ExpectedUntil, errs, "must not be before incapable_from")
}

// previousWorkingDay is the Monday–Friday day before d.
func previousWorkingDay(d Date) Date {
	t := d.Time().AddDate(0, 0, -1)
	for t.Weekday() == time.Saturday || t.Weekday() == time.Sunday {
		t = t.AddDate(0, 0, -1)
	}
	return Date(t.Format(time.DateOnly))
}

// HealthNotification declares the customer fit for work again (docs/sections.md §25).
type HealthNotification struct {
	DocumentBase
	IllnessNotificationID *UUID   `json:"illness_notification_id"`
	FitForWorkFrom        Date    `json:"fit_for_work_from" jsonschema:"required"`
	Transmission          *string `json:"transmission" jsonschema:"enum=paper,enum=electronic"`
}

func (n *HealthNotification) normalize(rc RuleContext) {
	n.DocumentBase.normalize(rc)
	defaultTo(&n.Transmission, "paper")
}

func (n *HealthNotification) refs() []Ref {
	out := n.DocumentBase.refs()
	if n.IllnessNotificationID == nil {
		return out
	}
	return append(out, Ref{Field: "illness_notification_id", Section: "illness-notifications", ID: string(*n.IllnessNotificationID),
		SameCustomer: true, Rule: func(t RefTarget) string {
			if t.Attrs["ended_by_id"] != nil {
				return "names an illness notification that has already ended"
			}
			if from, _ := t.Attrs["incapable_from"].(string); Date(from).After(n.FitForWorkFrom) {
				return "fit_for_work_from must not be before the notification's incapable_from"
			}
			return ""
		}})
}

// Effects: creating a health notification ends the illness notification it names.
func (n *HealthNotification) effects(id string) []Effect {
	if n.IllnessNotificationID == nil {
		return nil
	}
	return []Effect{{Section: "illness-notifications", ID: string(*n.IllnessNotificationID), Set: map[string]any{"ended_by_id": id}}}
}

const exampleIllnessNotification = `{"customer_id":$CUSTOMER,"user_id":"$USER","issued_on":"2026-03-10",
"incapable_from":"2026-03-09","expected_until":"2026-03-13","cause":"illness","outing_hours":"10:00–12:00",
"diagnosis_ids":["$DIAGNOSIS"]}`

const exampleHealthNotification = `{"customer_id":$CUSTOMER,"user_id":"$USER","issued_on":"2026-03-13",
"fit_for_work_from":"2026-03-14","transmission":"electronic"}`
