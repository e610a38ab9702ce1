package domain

import (
	"slices"
	"testing"
	"time"
)

const (
	slotUser    UUID = "019bc0e2-1280-781f-a8e2-5d940ed90475"
	slotUser2   UUID = "019bc0e2-1280-781f-a8e2-5d940ed90476"
	slotPlace   UUID = "019bc0e2-1668-7160-8999-50d836f675cc"
	slotPlace2  UUID = "019bc0e2-1668-7160-8999-50d836f675cd"
	slotService UUID = "019cd6cf-68f8-70c6-a6a3-a4506513270e"
)

func TestOffers(t *testing.T) {
	yes, no := ptr(true), ptr(false)
	c := BookingCatalog{
		Users: map[UUID]User{
			slotUser:  {Active: yes, OnlineBookable: yes, WorkingHours: []WorkingTime{{LocationID: slotPlace, Weekday: "monday", From: "08:00", To: "12:00"}, {LocationID: slotPlace2, Weekday: "friday", From: "08:00", To: "10:00"}}},
			slotUser2: {Active: yes, OnlineBookable: no},
		},
		Locations: map[UUID]Location{slotPlace: {Active: yes, OnlineBookable: yes}, slotPlace2: {Active: yes, OnlineBookable: no}},
		Services:  map[UUID]Service{slotService: {Active: yes, OnlineBookable: yes, DurationMinutes: 20}},
		Assignments: []ServiceAssignment{
			{UserID: slotUser, ServiceID: slotService, Active: yes, OnlineBookable: yes},
			{UserID: slotUser2, ServiceID: slotService, LocationID: ptr(slotPlace), Active: yes, OnlineBookable: yes},
		},
	}
	got := c.Offers()
	if want := []Offer{{User: slotUser, Service: slotService, Location: slotPlace, DurationMinutes: 20}}; !slices.Equal(got, want) {
		t.Errorf("offers %v, want %v: the second location and the second user are not bookable online", got, want)
	}
	c.Assignments = append(c.Assignments, ServiceAssignment{UserID: slotUser, ServiceID: slotService, LocationID: ptr(slotPlace),
		DurationMinutes: ptr(45), Active: yes, OnlineBookable: yes})
	if got := c.Offers(); len(got) != 1 || got[0].DurationMinutes != 45 || c.Duration(slotUser, slotService, slotPlace) != 45 {
		t.Errorf("an assignment naming the location wins over one for every location: %v", got)
	}
	if d := c.Duration(slotUser, slotService, slotPlace2); d != 20 {
		t.Errorf("duration elsewhere: %d, want the service's 20", d)
	}
}

func TestAppointmentStatusMachine(t *testing.T) {
	z, err := time.LoadLocation("Europe/Vienna")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 10, 15, 0, 0, 0, z)
	before := RuleContext{Now: time.Date(2026, 3, 9, 12, 0, 0, 0, z), Zone: z}
	sameDay := RuleContext{Now: time.Date(2026, 3, 10, 9, 0, 0, 0, z), Zone: z}
	after := RuleContext{Now: time.Date(2026, 3, 10, 16, 0, 0, 0, z), Zone: z}
	for _, c := range []struct {
		from, to AppointmentStatus
		rc       RuleContext
		ok       bool
	}{
		{StatusBooked, StatusArrived, before, true},
		{StatusBooked, StatusCompleted, before, false},
		{StatusBooked, StatusCompleted, sameDay, true},
		{StatusBooked, StatusNoShow, sameDay, false},
		{StatusBooked, StatusNoShow, after, true},
		{StatusBooked, StatusCancelled, after, false},
		{StatusArrived, StatusCompleted, before, true},
		{StatusArrived, StatusBooked, before, true},
		{StatusArrived, StatusNoShow, after, false},
		{StatusNoShow, StatusBooked, after, true},
		{StatusNoShow, StatusCompleted, after, false},
		{StatusCompleted, StatusBooked, after, false},
		{StatusCancelled, StatusBooked, after, false},
	} {
		if got := c.from.CanBecome(c.to, start, c.rc); got != c.ok {
			t.Errorf("%s → %s at %s: %v, want %v", c.from, c.to, c.rc.Now, got, c.ok)
		}
	}
	if !StatusBooked.Cancellable() || !StatusArrived.Cancellable() || StatusCompleted.Cancellable() || StatusNoShow.Cancellable() {
		t.Error("only booked and arrived appointments can be cancelled")
	}
}
