package domain

// Outcome is what a use case came to when it succeeded: answered, created,
// or done with nothing to answer. A refusal is an error (errors.go), which
// the doors map by their one table (adapters/httpkit). An outcome's status
// is the one every door answers and the one the audit event of the write
// records (docs/contract.md §11): this is the one table of them.
type Outcome uint8

const (
	// OutcomeOK: read, changed or done, with an answer.
	OutcomeOK Outcome = iota
	// OutcomeCreated: a new object, answered with its location.
	OutcomeCreated
	// OutcomeNoContent: done, with nothing to answer.
	OutcomeNoContent
)

var outcomeStatus = [...]int{OutcomeOK: 200, OutcomeCreated: 201, OutcomeNoContent: 204}

// Status is the outcome's HTTP status, for the doors and the audit trail.
func (o Outcome) Status() int { return outcomeStatus[o] }

// OutcomeOf is the outcome whose status is status: how a store that keeps
// the status (an Idempotency-Key's saved answer) reads it back.
func OutcomeOf(status int) (Outcome, bool) {
	for o, s := range outcomeStatus {
		if s == status {
			return Outcome(o), true
		}
	}
	return 0, false
}
