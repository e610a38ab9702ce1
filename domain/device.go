package domain

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/praxis-health/praxis/domain/gdt"
)

// Device is a medical device the practice's GDT bridge serves
// (docs/contract.md §14): what praxis writes for it, and how it wants its
// order files.
type Device struct {
	Name string `json:"name" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
	// GDTID is 8315 of what praxis writes to the device, 8316 of what it sends back.
	GDTID string `json:"gdt_id" jsonschema:"required,format=gdt-id"`
	// PraxisGDTID is 8316 of what praxis writes (default PRAXIS).
	PraxisGDTID *string `json:"praxis_gdt_id" jsonschema:"format=gdt-id"`
	GDTVersion  *string `json:"gdt_version" jsonschema:"enum=2.1,enum=3.0"`
	// Encoding is what the device reads (9206): CP437 or ISO 8859-15 in
	// 2.1, ISO 8859-15 only in 3.0.
	Encoding *string `json:"encoding" jsonschema:"enum=cp437,enum=iso-8859-15"`
	// FileNaming is receiver_sender (EKG1PRAX.gdt), counter (EKG1PRAX.001,
	// .002, …) or fixed (FixedName, export.gdt).
	FileNaming *string `json:"file_naming" jsonschema:"enum=receiver_sender,enum=counter,enum=fixed"`
	FixedName  *string `json:"fixed_name" jsonschema:"format=gdt-file-name"`
	// RemovesFiles is false for a device that only reads its order file when
	// its program starts: a new order then replaces an unread one.
	RemovesFiles *bool       `json:"removes_files"`
	Procedures   []Procedure `json:"procedures" jsonschema:"maxItems=100"`
}

// Procedure is an examination a device offers: its 8402 code and name.
type Procedure struct {
	Code string `json:"code" jsonschema:"required,format=gdt-code"`
	Name string `json:"name" jsonschema:"required,maxLength=100,format=line,pattern=\\S"`
}

// DefaultPraxisGDTID is 8316 of what praxis writes when a device names none.
const DefaultPraxisGDTID = "PRAXIS"

// The formats of a device's names (`format=gdt-id` and so on in the tags).
var (
	gdtIDPattern   = regexp.MustCompile(`^[A-Za-z0-9]{1,8}$`)
	gdtCodePattern = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,20}$`)
	gdtFileName    = regexp.MustCompile(`^[A-Za-z0-9_\-]{1,32}\.[A-Za-z0-9]{1,3}$`)
)

// ValidGDTID reports whether s may be registered as a GDT id: one to eight
// letters and digits. (Files that arrive with longer ones, such as
// "CGM TURBOMED", are still read.)
func ValidGDTID(s string) bool { return gdtIDPattern.MatchString(s) }

func (d *Device) normalize(RuleContext) {
	d.GDTID = strings.ToUpper(d.GDTID)
	defaultTo(&d.PraxisGDTID, DefaultPraxisGDTID)
	*d.PraxisGDTID = strings.ToUpper(*d.PraxisGDTID)
	defaultTo(&d.GDTVersion, gdt.V21)
	if *d.GDTVersion == gdt.V30 {
		defaultTo(&d.Encoding, gdt.Latin9)
	}
	defaultTo(&d.Encoding, gdt.CP437)
	defaultTo(&d.FileNaming, "receiver_sender")
	if d.RemovesFiles == nil {
		d.RemovesFiles = ptr(true)
	}
}

func (d *Device) check(_ RuleContext, errs *FieldErrors) {
	if *d.GDTVersion == gdt.V30 && *d.Encoding != gdt.Latin9 {
		errs.Add("encoding", "GDT 3.0 is written in iso-8859-15 only")
	}
	if *d.PraxisGDTID == d.GDTID {
		errs.Add("praxis_gdt_id", "must differ from the device's gdt_id")
	}
	switch fixed := *d.FileNaming == "fixed"; {
	case fixed && d.FixedName == nil:
		errs.Add("fixed_name", "is required when file_naming is fixed")
	case !fixed && d.FixedName != nil:
		errs.Add("fixed_name", "is only taken when file_naming is fixed")
	}
	seen := map[string]bool{}
	for i, p := range d.Procedures {
		key := strings.ToUpper(p.Code)
		if seen[key] {
			errs.Add("procedures["+strconv.Itoa(i)+"].code", "names a procedure listed before")
		}
		seen[key] = true
	}
}

func (*Device) refs() []Ref           { return nil }
func (*Device) customer() *CustomerID { return nil }

// deviceOffers reports whether a device's stored payload lists the procedure code.
func deviceOffers(attrs map[string]any, code string) bool {
	list, _ := attrs["procedures"].([]any)
	return slices.ContainsFunc(list, func(p any) bool {
		m, _ := p.(map[string]any)
		c, _ := m["code"].(string)
		return strings.EqualFold(c, code)
	})
}

const exampleDevice = `{"name": "ECG in room 2", "gdt_id": "EKG1", "gdt_version": "2.1", "encoding": "cp437",
"file_naming": "receiver_sender", "procedures": [{"code": "EKG04", "name": "Resting ECG"}, {"code": "EKG12", "name": "Stress ECG"}]}`

// The types of a device order and the GDT record each is written as.
const (
	OrderExamination = "examination" // 6302
	OrderMasterData  = "master_data" // 6301
	OrderShowResult  = "show_result" // 6311
)

// The states of a device order (docs/contract.md §14).
const (
	OrderOpen      = "open"      // waiting for the bridge
	OrderWritten   = "written"   // the bridge put the file in the device's folder
	OrderTaken     = "taken"     // the device removed it
	OrderDone      = "done"      // a result was matched to it
	OrderCancelled = "cancelled" // the practice cancelled it
	OrderFailed    = "failed"    // the bridge could not write it, with a reason
)

// DeviceOrder asks a device to examine a patient (6302), to take the
// patient's master data (6301), or to show a stored result (6311).
type DeviceOrder struct {
	RecordBase
	DeviceID  UUID     `json:"device_id" jsonschema:"required"`
	Type      *string  `json:"type" jsonschema:"enum=examination,enum=master_data,enum=show_result"`
	Procedure *string  `json:"procedure" jsonschema:"format=gdt-code"`
	Tests     []string `json:"tests" jsonschema:"maxItems=20,uniqueItems=true"`
	// FileID is the stored GDT result a show_result order shows.
	FileID  *UUID   `json:"file_id"`
	Comment *string `json:"comment" jsonschema:"maxLength=500,format=line"`

	// Number is 8310 of the order, counted per company; its id is 8314.
	Number       int64     `json:"number" server:"true"`
	Status       string    `json:"status" server:"true" jsonschema:"enum=open,enum=written,enum=taken,enum=done,enum=cancelled,enum=failed"`
	StatusReason *string   `json:"status_reason" server:"true"`
	WrittenAt    *DateTime `json:"written_at" server:"true"`
	TakenAt      *DateTime `json:"taken_at" server:"true"`
	DoneAt       *DateTime `json:"done_at" server:"true"`
	CancelledAt  *DateTime `json:"cancelled_at" server:"true"`
	// WithdrawnAt is when the bridge took a cancelled order's file back
	// (deleted it unread, or wrote a 6303).
	WithdrawnAt *DateTime `json:"withdrawn_at" server:"true"`
	// ResultFileIDs are the files of the result matched to the order.
	ResultFileIDs []UUID `json:"result_file_ids" server:"true"`
	// ApproximatedFields are the GDT fields the device's encoding could not
	// hold as given: written with the closest letters it has.
	ApproximatedFields []string `json:"approximated_fields" server:"true"`
}

func (o *DeviceOrder) normalize(RuleContext) {
	defaultTo(&o.Type, OrderExamination)
	if o.Status == "" {
		o.Status = OrderOpen
	}
}

func (o *DeviceOrder) check(_ RuleContext, errs *FieldErrors) {
	switch *o.Type {
	case OrderExamination:
		if o.Procedure == nil {
			errs.Add("procedure", "is required for an examination")
		}
	case OrderMasterData:
		if o.Procedure != nil || len(o.Tests) > 0 {
			errs.Add("type", "master_data sends the patient only: no procedure or tests")
		}
	case OrderShowResult:
		if o.FileID == nil {
			errs.Add("file_id", "is required to show a result")
		}
	}
	if *o.Type != OrderShowResult && o.FileID != nil {
		errs.Add("file_id", "is only taken by show_result")
	}
	for i, t := range o.Tests {
		if !gdtCodePattern.MatchString(t) {
			errs.Add("tests["+strconv.Itoa(i)+"]", "must be 1 to 20 letters, digits, '_', '.' or '-'")
		}
	}
}

func (o *DeviceOrder) refs() []Ref {
	procedure := ""
	if o.Procedure != nil {
		procedure = *o.Procedure
	}
	out := append(o.RecordBase.refs(), Ref{Field: "device_id", Section: "devices", ID: string(o.DeviceID), Rule: func(t RefTarget) string {
		if procedure != "" && !deviceOffers(t.Attrs, procedure) {
			return "the device offers no procedure " + procedure
		}
		return ""
	}})
	if o.FileID != nil {
		out = append(out, Ref{Field: "file_id", Section: "files", ID: string(*o.FileID), SameCustomer: true, Rule: func(t RefTarget) string {
			if t.Attrs["content_type"] != "application/gdt" {
				return "must name a stored GDT result"
			}
			return ""
		}})
	}
	return out
}

// OrderIsOpen reports whether a device order may still be written, taken, matched or cancelled.
func OrderIsOpen(status string) bool {
	return status == OrderOpen || status == OrderWritten || status == OrderTaken
}

// GDTRecordOf is the GDT record type an order of the type is written as.
func GDTRecordOf(orderType string) string {
	switch orderType {
	case OrderMasterData:
		return gdt.MasterData
	case OrderShowResult:
		return gdt.ShowResult
	}
	return gdt.Examination
}

// deviceOrderActions are the operations of device orders beyond the generic reads.
var deviceOrderActions = []string{
	"POST device-orders/{id}/cancel", "GET device-outbox (the bridge's long poll)",
	"POST device-orders/{id}/written", "POST device-orders/{id}/taken", "POST device-orders/{id}/failed",
	"POST device-orders/{id}/withdrawn", "POST device-orders/{id}/assign",
}

const exampleDeviceOrder = `{"customer_id": $CUSTOMER, "device_id": "$DEVICE", "type": "examination", "procedure": "EKG04",
"tests": ["RUHE"], "comment": "before surgery"}`

// DeviceOf reads a stored device, with the defaults of its fields set (a
// device imported without them reads as the API would have stored it).
func DeviceOf(payload []byte) (Device, error) {
	var d Device
	if err := json.Unmarshal(payload, &d); err != nil {
		return Device{}, err
	}
	d.normalize(RuleContext{})
	return d, nil
}

// DeviceOrderOf reads a stored device order, with the defaults of its fields set.
func DeviceOrderOf(payload []byte) (DeviceOrder, error) {
	var o DeviceOrder
	if err := json.Unmarshal(payload, &o); err != nil {
		return DeviceOrder{}, err
	}
	o.normalize(RuleContext{})
	return o, nil
}

// DeviceOutbox is a device as its bridge needs it: how to name and hand
// over its order files.
type DeviceOutbox struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	GDTID        string  `json:"gdt_id"`
	PraxisGDTID  string  `json:"praxis_gdt_id"`
	FileNaming   string  `json:"file_naming"`
	FixedName    *string `json:"fixed_name"`
	RemovesFiles bool    `json:"removes_files"`
}

// OutboxOrder is one order for the bridge to act on: to write (open), to
// watch until the device takes it (written), or to withdraw (cancelled after
// it was written: the bridge deletes its unread file, or writes Cancel, a
// 6303, where the device speaks GDT 3.0).
type OutboxOrder struct {
	ID      string `json:"id"`
	Number  int64  `json:"number"`
	Status  string `json:"status"`
	Version int64  `json:"version"`
	// GDT is the order's record in the device's encoding; Cancel its 6303
	// (GDT 3.0 only), both as base64 in JSON.
	GDT    []byte `json:"gdt"`
	Cancel []byte `json:"cancel,omitempty"`
}

// OutboxOf is the device's settings for its bridge.
func OutboxOf(id string, d Device) DeviceOutbox {
	return DeviceOutbox{ID: id, Name: d.Name, GDTID: d.GDTID, PraxisGDTID: *d.PraxisGDTID, FileNaming: *d.FileNaming,
		FixedName: d.FixedName, RemovesFiles: *d.RemovesFiles}
}

// OrderPatient is what an order needs of its customer.
type OrderPatient struct {
	ID   CustomerID
	Data CustomerData
}

// OrderMessage is the GDT record of order id for its device: 6302, 6301 or
// 6311 (shown is the stored result a 6311 asks the device to show). A
// customer who lacks a field the record requires is a 422 naming it.
func OrderMessage(d Device, o DeviceOrder, id string, p OrderPatient, shown *gdt.Info) (gdt.Message, error) {
	var errs FieldErrors
	if strings.TrimSpace(p.Data.LastName) == "" {
		errs.Add("customer_id", "the customer has no last_name, which GDT field 3101 of an order requires")
	}
	if strings.TrimSpace(p.Data.FirstName) == "" {
		errs.Add("customer_id", "the customer has no first_name, which GDT field 3102 of an order requires")
	}
	if p.Data.BirthDate == nil {
		errs.Add("customer_id", "the customer has no birth_date, which GDT field 3103 of an order requires")
	}
	m := gdt.Message{Record: GDTRecordOf(*o.Type), Version: *d.GDTVersion, Encoding: *d.Encoding,
		Receiver: d.GDTID, Sender: *d.PraxisGDTID, OrderNumber: strconv.FormatInt(o.Number, 10), OrderUUID: id, Tests: o.Tests,
		Patient: gdt.Patient{ID: int64(p.ID), LastName: p.Data.LastName, FirstName: p.Data.FirstName, Title: deref(p.Data.Title), Sex: deref(p.Data.Sex)}}
	if p.Data.BirthDate != nil {
		m.Patient.BirthDate = string(*p.Data.BirthDate)
	}
	if o.Procedure != nil {
		m.Procedure = *o.Procedure
	}
	if o.Comment != nil {
		m.Comment = *o.Comment
	}
	if *o.Type == OrderShowResult {
		if shown == nil || shown.ExaminedOn == nil {
			errs.Add("file_id", "names a result without its examination date (6200), which a 6311 needs to name it")
		} else {
			day, _ := ParseDate(*shown.ExaminedOn)
			m.ExaminedOn = day.Format("02012006")
			if shown.ExaminedAt != nil {
				if at, err := ParseDateTime(*shown.ExaminedAt); err == nil {
					m.ExaminedAt = at.Format("150405")
				}
			}
			if m.Procedure == "" && shown.ProcedureCode != nil {
				m.Procedure = *shown.ProcedureCode
			}
		}
	}
	return m, errs.Err()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
