package fhir

import (
	"encoding/json"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/patientmatch"
	"github.com/praxis-health/praxis/ports"
)

// matchGradeURL is FHIR's extension on a searchset entry's search that
// grades a $match candidate.
const matchGradeURL = "http://hl7.org/fhir/StructureDefinition/match-grade"

// matchParameters is the Parameters resource Patient/$match takes.
type matchParameters struct {
	Parameter []struct {
		Name         string          `json:"name"`
		Resource     json.RawMessage `json:"resource"`
		ValueBoolean *bool           `json:"valueBoolean"`
		ValueInteger *int            `json:"valueInteger"`
	} `json:"parameter"`
}

// match answers POST Patient/$match (FHIR R4's operation): the practice's
// patients the given one may be, from indexed searches only, each with its
// score and match grade, best first (docs/contract.md §15, "Matching a
// patient"). With onlyCertainMatches, the one certain candidate, or none
// when there is none or more than one.
func (s *Server) match(c *fiber.Ctx) error {
	body, err := resourceBody(c, &resourceType{name: "Parameters"}, "")
	if err != nil {
		return err
	}
	var p matchParameters
	if err := json.Unmarshal(body, &p); err != nil {
		return &outcomeError{status: fiber.StatusBadRequest, code: "structure", text: "the Parameters do not have the shape of FHIR R4's: " + jsonProblem(err), reason: "invalid-resource"}
	}
	var resource json.RawMessage
	onlyCertain, count := false, 0
	for _, param := range p.Parameter {
		switch {
		case param.Name == "resource" && resource == nil && param.Resource != nil:
			resource = param.Resource
		case param.Name == "onlyCertainMatches" && param.ValueBoolean != nil:
			onlyCertain = *param.ValueBoolean
		case param.Name == "count" && param.ValueInteger != nil && *param.ValueInteger >= 1 && *param.ValueInteger <= 100:
			count = *param.ValueInteger
		default:
			return invalidParam("Parameters.parameter", "Parameters.parameter: "+strconv.Quote(param.Name)+
				" is not one $match takes here (resource once, onlyCertainMatches as a boolean, count from 1 to 100)")
		}
	}
	if resource == nil {
		return invalidParam("Parameters.parameter", "Parameters.parameter: $match needs resource, a Patient")
	}
	var head struct {
		ResourceType string `json:"resourceType"`
	}
	if json.Unmarshal(resource, &head) != nil || head.ResourceType != "Patient" {
		return invalidParam("Parameters.parameter.resource", "Parameters.parameter.resource: must be a Patient, not "+strconv.Quote(head.ResourceType))
	}
	fields, err := patientFields(resource, false)
	if err != nil {
		return err
	}
	asked, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	matches, err := s.records.Match(c.UserContext(), httpkit.GrantOf(c), patientmatch.FactsOf(asked), count)
	if err != nil {
		return atPath(resourceByName("Patient"), err)
	}
	if onlyCertain {
		matches = patientmatch.OnlyCertain(matches, func(m ports.Match) patientmatch.Grade { return m.Grade })
	}
	patients := resourceByName("Patient")
	x := view{company: httpkit.GrantOf(c).CompanyID}
	self := s.base(c) + "/Patient"
	entries := make([]any, 0, len(matches))
	for _, m := range matches {
		it, err := itemOf(domain.CustomersKind(), m.Customer)
		if err != nil {
			return err
		}
		e := entry(self, patients.toFHIR(x, it), "match")
		e["search"] = map[string]any{"mode": "match", "score": m.Score,
			"extension": []any{map[string]any{"url": matchGradeURL, "valueCode": string(m.Grade)}}}
		entries = append(entries, e)
	}
	b := bundle(c, self+"/$match", entries, "")
	b["total"] = len(entries)
	return send(c, b)
}
