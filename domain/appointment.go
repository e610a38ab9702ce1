package domain

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Appointment is a span of one user's calendar at one location, usually with
// a patient (docs/sections.md §6). Its status is a small state machine
// (AppointmentStatus.CanBecome); it leaves booked or arrived for cancelled
// only through Cancel.
type Appointment struct {
	CustomerID         *CustomerID `json:"customer_id"`
	UserID             UUID        `json:"user_id" jsonschema:"required"`
	LocationID         UUID        `json:"location_id" jsonschema:"required"`
	ServiceID          *UUID       `json:"service_id"`
	Title              *string     `json:"title" jsonschema:"maxLength=200,format=line"`
	Start              DateTime    `json:"start" jsonschema:"required"`
	End                *DateTime   `json:"end"`
	Status             *string     `json:"status" server:"true" jsonschema:"enum=booked,enum=arrived,enum=completed,enum=no_show,enum=cancelled"`
	Source             *string     `json:"source" server:"true" jsonschema:"enum=practice,enum=api,enum=online_booking"`
	Note               *string     `json:"note" jsonschema:"maxLength=2000,format=text"`
	CancelledAt        *DateTime   `json:"cancelled_at" server:"true"`
	CancellationReason *string     `json:"cancellation_reason" server:"true" jsonschema:"enum=customer_request,enum=practice_request,enum=rescheduled,enum=entered_in_error,enum=other"`
	CancellationNote   *string     `json:"cancellation_note" server:"true" jsonschema:"maxLength=500,format=text"`
}

// MaxAppointmentLength is the longest span one appointment may cover.
const MaxAppointmentLength = 24 * time.Hour

// Statuses of an appointment.
const (
	StatusBooked    AppointmentStatus = "booked"
	StatusArrived   AppointmentStatus = "arrived"
	StatusCompleted AppointmentStatus = "completed"
	StatusNoShow    AppointmentStatus = "no_show"
	StatusCancelled AppointmentStatus = "cancelled"
)

// Sources of an appointment: who made it.
const (
	BookedByPractice = "practice"
	BookedByAPI      = "api"
	BookedOnline     = "online_booking"
)

// AppointmentStatus is where an appointment stands.
type AppointmentStatus string

// ErrInvalidTransition: the appointment's status does not allow the change.
var ErrInvalidTransition = fmt.Errorf("%w: the appointment's status does not allow this change", ErrConflict)

// ErrSlotUnavailable: the start asked for is not, or no longer, a free slot.
var ErrSlotUnavailable = fmt.Errorf("%w: this slot is not, or no longer, free", ErrConflict)

// CanBecome reports whether a PATCH may move an appointment starting at
// start from s to next, judged at rc: completed from the local date of the
// start on, no_show once the start has passed; cancelled only by Cancel.
func (s AppointmentStatus) CanBecome(next AppointmentStatus, start time.Time, rc RuleContext) bool {
	switch s {
	case StatusBooked:
		switch next {
		case StatusArrived:
			return true
		case StatusCompleted:
			return !DateOf(start, rc.Zone).After(rc.Today())
		case StatusNoShow:
			return !rc.Now.Before(start)
		}
	case StatusArrived:
		return next == StatusCompleted || next == StatusBooked
	case StatusNoShow:
		return next == StatusBooked
	}
	return false
}

// Cancellable reports whether Cancel may end an appointment in status s.
func (s AppointmentStatus) Cancellable() bool { return s == StatusBooked || s == StatusArrived }

func (a *Appointment) customer() *CustomerID { return a.CustomerID }

func (a *Appointment) normalize(RuleContext) {
	defaultTo(&a.Status, string(StatusBooked))
	defaultTo(&a.Source, BookedByAPI)
}

func (a *Appointment) check(_ RuleContext, errs *FieldErrors) {
	if a.CustomerID == nil && (a.Title == nil || !nonBlank(*a.Title)) {
		errs.Add("title", "is required when customer_id is null")
	}
	if a.Start.Second() != 0 {
		errs.Add("start", "must be a whole minute (seconds 00)")
	}
	switch {
	case a.End == nil && a.ServiceID == nil:
		errs.Add("end", "is required without service_id")
	case a.End != nil && !a.Start.Before(a.End.Time):
		errs.Add("end", "must be after start")
	case a.End != nil && a.End.Sub(a.Start.Time) > MaxAppointmentLength:
		errs.Add("end", "must be at most 24 hours after start")
	}
}

func (a *Appointment) refs() []Ref {
	out := []Ref{
		userRef("user_id", a.UserID, false),
		{Field: "location_id", Section: "locations", ID: string(a.LocationID), Rule: activeRule},
	}
	if a.CustomerID != nil {
		out = append(out, customerRef(*a.CustomerID))
	}
	if a.ServiceID != nil {
		out = append(out, Ref{Field: "service_id", Section: "services", ID: string(*a.ServiceID), Rule: activeRule})
	}
	return out
}

// schedulingFields change only while an appointment is booked.
var schedulingFields = []string{"customer_id", "user_id", "location_id", "service_id", "start", "end"}

// patchable judges a PATCH against the stored appointment: a cancelled one
// refuses every change, the calendar fields change only while booked, and a
// status change must be a transition the state machine allows. A new start
// without a new end keeps the length. It carries the server fields over.
func (a *Appointment) patchable(rc RuleContext, stored, patch map[string]any) (map[string]any, error) {
	from := AppointmentStatus(fmt.Sprint(stored["status"]))
	if from == StatusCancelled {
		return nil, fmt.Errorf("%w: a cancelled appointment takes no changes", ErrInvalidTransition)
	}
	if from != StatusBooked {
		for _, f := range schedulingFields {
			if v, touched := patch[f]; touched && !equalJSON(v, stored[f]) {
				return nil, fmt.Errorf("%w: %s changes only while the appointment is booked", ErrInvalidTransition, f)
			}
		}
	}
	carry := map[string]any{}
	for _, f := range []string{"status", "source", "cancelled_at", "cancellation_reason", "cancellation_note"} {
		carry[f] = stored[f]
	}
	if next, touched := patch["status"]; touched {
		delete(patch, "status")
		to, _ := next.(string)
		if AppointmentStatus(to) != from {
			start, err := time.Parse(time.RFC3339, fmt.Sprint(stored["start"]))
			if err != nil {
				return nil, err
			}
			if !from.CanBecome(AppointmentStatus(to), start, rc) {
				return nil, fmt.Errorf("%w: %s cannot become %q", ErrInvalidTransition, from, to)
			}
			carry["status"] = to
		}
	}
	if newStart, ok := patch["start"].(string); ok {
		if _, endTouched := patch["end"]; !endTouched {
			if end, ok := shiftedEnd(stored, newStart); ok {
				patch["end"] = end
			}
		}
	}
	return carry, nil
}

// shiftedEnd moves the stored end by as much as the start moves.
func shiftedEnd(stored map[string]any, newStart string) (string, bool) {
	oldStart, err1 := time.Parse(time.RFC3339, fmt.Sprint(stored["start"]))
	oldEnd, err2 := time.Parse(time.RFC3339, fmt.Sprint(stored["end"]))
	start, err3 := time.Parse(time.RFC3339, newStart)
	if err1 != nil || err2 != nil || err3 != nil {
		return "", false
	}
	return start.Add(oldEnd.Sub(oldStart)).Format(time.RFC3339), true
}

// Cancellation is the body of POST appointments/{id}/cancel.
type Cancellation struct {
	Reason string  `json:"reason" jsonschema:"required,enum=customer_request,enum=practice_request,enum=rescheduled,enum=entered_in_error,enum=other"`
	Note   *string `json:"note" jsonschema:"maxLength=500,format=text"`
}

func (c *Cancellation) normalize(RuleContext) {}
func (c *Cancellation) check(_ RuleContext, errs *FieldErrors) {
	if c.Reason == "other" && (c.Note == nil || !nonBlank(*c.Note)) {
		errs.Add("note", "is required when the reason is other")
	}
}
func (*Cancellation) refs() []Ref           { return nil }
func (*Cancellation) customer() *CustomerID { return nil }

// CancellationKind validates cancel bodies like every other body.
var CancellationKind = newKind[Cancellation]("appointments/cancel", 0, `{"reason":"customer_request","note":"called in"}`)

// Cancel ends a booked or arrived appointment (its stored payload) at rc.Now
// with the reasons of body, already decoded by CancellationKind: the slot is
// free at once.
func Cancel(stored []byte, body Object, rc RuleContext) ([]byte, error) {
	c := body.payload.(*Cancellation)
	var state struct {
		Status AppointmentStatus `json:"status"`
	}
	if err := json.Unmarshal(stored, &state); err != nil {
		return nil, err
	}
	if !state.Status.Cancellable() {
		return nil, fmt.Errorf("%w: a %s appointment cannot be cancelled", ErrInvalidTransition, state.Status)
	}
	return SetFields(stored, map[string]any{
		"status": StatusCancelled, "cancelled_at": rc.Now.In(rc.Zone).Truncate(time.Second).Format(time.RFC3339),
		"cancellation_reason": c.Reason, "cancellation_note": c.Note,
	})
}

// AppointmentSpan is what an appointment blocks of its user's calendar:
// [Start, BlockedUntil), the end plus the buffer of its service.
type AppointmentSpan struct {
	ID           string
	User         UUID
	Location     UUID
	Start        time.Time
	BlockedUntil time.Time
	// Active is false once cancelled: a cancelled appointment blocks nothing.
	Active bool
	// Online marks a booking made through the widget; the database refuses
	// two of one user that overlap.
	Online bool
}

// SpanOf reads the calendar span of a stored appointment payload.
func SpanOf(id string, payload []byte, bufferMinutes int) (AppointmentSpan, error) {
	var a struct {
		UserID     UUID     `json:"user_id"`
		LocationID UUID     `json:"location_id"`
		Start      DateTime `json:"start"`
		End        DateTime `json:"end"`
		Status     string   `json:"status"`
		Source     string   `json:"source"`
	}
	if err := json.Unmarshal(payload, &a); err != nil {
		return AppointmentSpan{}, err
	}
	return AppointmentSpan{
		ID: id, User: a.UserID, Location: a.LocationID, Start: a.Start.Time,
		BlockedUntil: a.End.Add(time.Duration(bufferMinutes) * time.Minute),
		Active:       a.Status != string(StatusCancelled), Online: a.Source == BookedOnline,
	}, nil
}

const exampleAppointment = `{"customer_id":$CUSTOMER,"user_id":"$USER","location_id":"$LOCATION","service_id":"$SERVICE",
"start":"2026-03-10T09:00:00+01:00","end":"2026-03-10T09:20:00+01:00","note":"Bitte nüchtern kommen"}`

// nonBlank reports whether s has a character that is not a space.
func nonBlank(s string) bool { return strings.TrimSpace(s) != "" }

// FillEnd sets the missing end of an appointment object: its start plus
// duration(user, service, location), the assignment's length, else the
// service's. Other objects and appointments with an end are left alone.
func FillEnd(o *Object, duration func(user, service, location UUID) int) error {
	a, ok := o.payload.(*Appointment)
	if !ok || a.End != nil || a.ServiceID == nil {
		return nil
	}
	end := DateTime{a.Start.Add(time.Duration(duration(a.UserID, *a.ServiceID, a.LocationID)) * time.Minute)}
	a.End = &end
	raw, err := SetFields(o.JSON, map[string]any{"end": end})
	o.JSON = raw
	return err
}

// NeedsEnd reports an appointment object whose end its service's duration must fill.
func (o Object) NeedsEnd() bool {
	a, ok := o.payload.(*Appointment)
	return ok && a.End == nil && a.ServiceID != nil
}
