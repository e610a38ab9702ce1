package domain

import "strings"

// User is a member of the practice's staff (docs/sections.md §3).
type User struct {
	Title          *string       `json:"title" jsonschema:"maxLength=50,format=line"`
	FirstName      string        `json:"first_name" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
	LastName       string        `json:"last_name" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
	DisplayName    *string       `json:"display_name" jsonschema:"maxLength=200,format=line"`
	Email          *string       `json:"email" jsonschema:"format=email,maxLength=254"`
	Phone          *string       `json:"phone" jsonschema:"format=phone"`
	Role           string        `json:"role" jsonschema:"required,enum=owner,enum=admin,enum=doctor,enum=therapist,enum=assistant"`
	Specialty      *string       `json:"specialty" jsonschema:"maxLength=100,format=line"`
	OnlineBookable *bool         `json:"online_bookable"`
	Active         *bool         `json:"active"`
	WorkingHours   []WorkingTime `json:"working_hours"`
	Absences       []Absence     `json:"absences"`
}

// WorkingTime is a weekly interval of local wall-clock time at one location.
type WorkingTime struct {
	LocationID UUID      `json:"location_id" jsonschema:"required"`
	Weekday    string    `json:"weekday" jsonschema:"required,enum=monday,enum=tuesday,enum=wednesday,enum=thursday,enum=friday,enum=saturday,enum=sunday"`
	From       TimeOfDay `json:"from" jsonschema:"required"`
	To         TimeOfDay `json:"to" jsonschema:"required"`
}

// Absence is a span without slots.
type Absence struct {
	Start DateTime `json:"start" jsonschema:"required"`
	End   DateTime `json:"end" jsonschema:"required"`
}

func (u *User) normalize(RuleContext) {
	defaultFlags(&u.OnlineBookable, false, &u.Active, true)
	if u.DisplayName == nil {
		name := u.FirstName + " " + u.LastName
		if u.Title != nil {
			name = *u.Title + " " + name
		}
		u.DisplayName = ptr(strings.TrimSpace(name))
	}
}

func (u *User) check(_ RuleContext, errs *FieldErrors) {
	for i, w := range u.WorkingHours {
		at := "working_hours[" + itoa(i) + "]"
		if w.From >= w.To {
			errs.Add(at+".to", "must be after from")
			continue
		}
		for j := range i {
			o := u.WorkingHours[j]
			if o.Weekday == w.Weekday && o.From < w.To && w.From < o.To && o.From < o.To {
				errs.Add(at, "overlaps working_hours["+itoa(j)+"] on the same weekday")
			}
		}
	}
	for i, a := range u.Absences {
		if !a.Start.Before(a.End.Time) {
			errs.Add("absences["+itoa(i)+"].end", "must be after start")
		}
	}
}

func (u *User) refs() []Ref {
	var out []Ref
	for i, w := range u.WorkingHours {
		out = append(out, Ref{Field: "working_hours[" + itoa(i) + "].location_id", Section: "locations", ID: string(w.LocationID)})
	}
	return out
}

func (*User) customer() *CustomerID { return nil }

const exampleUser = `{"title":"Dr. med. univ.","first_name":"Eva","last_name":"Huber","email":"eva.huber@praxis-huber.at",
"role":"doctor","specialty":"General medicine","online_bookable":true,
"working_hours":[{"location_id":"$LOCATION","weekday":"monday","from":"08:00","to":"12:00"},
{"location_id":"$LOCATION","weekday":"thursday","from":"14:00","to":"18:00"}],
"absences":[{"start":"2026-08-03T00:00:00+02:00","end":"2026-08-15T00:00:00+02:00"}]}`
