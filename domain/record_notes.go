package domain

// Note is a free-text entry in a customer's record (docs/sections.md §8).
type Note struct {
	RecordBase
	NotedOn *Date   `json:"noted_on"`
	Title   *string `json:"title" jsonschema:"maxLength=200,format=line"`
	Text    string  `json:"text" jsonschema:"required,maxLength=20000,format=text,pattern=\\S"`
}

func (n *Note) normalize(rc RuleContext) {
	if n.NotedOn == nil {
		n.NotedOn = ptr(rc.Today())
	}
}

func (n *Note) check(rc RuleContext, errs *FieldErrors) { notFuture("noted_on", n.NotedOn, rc, errs) }

const exampleNote = `{"customer_id":$CUSTOMER,"user_id":"$USER","noted_on":"2026-03-10","title":"Phone call",
"text":"Patient called about the blood pressure readings."}`
