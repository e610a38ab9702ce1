package fhir

import (
	"slices"
	"sort"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/smart"
)

// Software is the name the CapabilityStatement gives the server.
const Software = "praxis"

// capabilities answers the CapabilityStatement, read from the table of
// served resources: what is listed here is what the door serves.
func (s *Server) capabilities(c *fiber.Ctx) error {
	return send(c, capabilityStatement(s.base(c), s.tokenURL(c)))
}

// capabilityStatement is the statement for a server at base whose tokens come from tokenURL.
func capabilityStatement(base, tokenURL string) map[string]any {
	var rs []any
	for _, rt := range resources {
		if rt.binary { // read by id only: the bytes of a DocumentReference's attachment
			rs = append(rs, map[string]any{"type": rt.name, "interaction": []any{map[string]any{"code": "read"}}, "versioning": "no-version"})
			continue
		}
		params := []any{}
		common := commonParams
		if rt.slots { // computed: only its own parameters
			common = nil
		}
		for _, p := range append(slices.Clone(common), rt.params...) {
			sp := map[string]any{"name": p.name, "type": p.kind, "documentation": p.doc}
			if p.definition != "" {
				sp["definition"] = p.definition
			}
			params = append(params, sp)
		}
		if rt.patient {
			for _, name := range []string{"patient", "subject"} {
				params = append(params, map[string]any{"name": name, "type": "reference", "documentation": "Patient/{number}"})
			}
		}
		interactions := []any{map[string]any{"code": "read"}}
		if rt.section != "" && !rt.slots { // the company and a computed slot have no version
			interactions = append(interactions, map[string]any{"code": "vread"})
		}
		interactions = append(interactions, map[string]any{"code": "search-type"})
		if rt.writer != nil {
			interactions = append(interactions, map[string]any{"code": "create"})
			if !rt.writer.booked {
				interactions = append(interactions, map[string]any{"code": "update"})
			}
		}
		r := map[string]any{
			"type":        rt.name,
			"interaction": interactions,
			"versioning":  "versioned",
			"readHistory": false,
			"searchParam": params,
		}
		if rt.section == "" || rt.slots {
			r["versioning"] = "no-version"
		}
		if rt.writer != nil && !rt.writer.booked {
			r["updateCreate"] = false
			r["conditionalUpdate"] = false
		}
		if rt.searchable() {
			r["documentation"] = "Searches reach the query: every page is full. `_sort` by family, given (folded as searched), birthdate (none first) " +
				"or _lastUpdated, each with - before it for descending, separated by commas (ties by the patient's number, the way the last key goes; without _sort the feed's order); " +
				"`_total` none, estimate (estimated) or accurate; `_summary=count`."
		}
		if rt.name == "Patient" {
			r["operation"] = []any{map[string]any{"name": "export", "definition": bulkData + "/OperationDefinition/patient-export"},
				map[string]any{"name": "match", "definition": "http://hl7.org/fhir/OperationDefinition/Patient-match"}}
		}
		if len(rt.includes) > 0 {
			var includes []string
			for inc := range rt.includes {
				includes = append(includes, inc)
			}
			sort.Strings(includes)
			r["searchInclude"] = includes
		}
		rs = append(rs, r)
	}
	return map[string]any{
		"resourceType": "CapabilityStatement",
		"status":       "active",
		"date":         "2026-11-26",
		"kind":         "instance",
		"instantiates": []string{bulkData + "/CapabilityStatement/bulk-data"},
		"fhirVersion":  "4.0.1",
		"format":       []string{"json"},
		"software":     map[string]any{"name": Software},
		"implementation": map[string]any{
			"description": "praxis: a FHIR R4 view of the practice's data (beta)",
			"url":         base,
		},
		"rest": []any{map[string]any{
			"mode": "server",
			"security": map[string]any{
				"service": []any{map[string]any{"coding": []any{map[string]any{
					"system": "http://terminology.hl7.org/CodeSystem/restful-security-service", "code": "SMART-on-FHIR"}}}},
				"description": "OAuth 2.0 client credentials, the client authenticated by a signed assertion (SMART Backend Services, private_key_jwt) or a secret; a bearer token in the Authorization header",
				"extension": []any{map[string]any{
					"url":       "http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris",
					"extension": []any{map[string]any{"url": "token", "valueUri": tokenURL}},
				}},
			},
			"resource":  rs,
			"operation": []any{map[string]any{"name": "export", "definition": bulkData + "/OperationDefinition/export"}},
		}},
	}
}

// bulkData is the canonical base of the Bulk Data Access IG, whose
// operations the server implements.
const bulkData = "http://hl7.org/fhir/uv/bulkdata"

// tokenURL is the OAuth token endpoint's absolute URL.
func (s *Server) tokenURL(c *fiber.Ctx) string {
	return httpkit.PublicBase(c, s.opts.PublicURL) + s.opts.TokenPath
}

// smartConfiguration answers SMART App Launch's discovery document
// (/.well-known/smart-configuration): the token endpoint, how clients
// authenticate there, and the scopes.
func (s *Server) smartConfiguration(c *fiber.Ctx) error {
	scopes := []string{"system/*.rs", "system/*.cruds"} // SMART's, granted as the praxis scopes they mean
	for _, sc := range domain.SupportedScopes() {
		scopes = append(scopes, string(sc))
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.JSON(map[string]any{
		"token_endpoint":                                   s.tokenURL(c),
		"grant_types_supported":                            []string{"client_credentials"},
		"token_endpoint_auth_methods_supported":            []string{"private_key_jwt", "client_secret_basic", "client_secret_post"},
		"token_endpoint_auth_signing_alg_values_supported": smart.AssertionAlgorithms,
		"scopes_supported":                                 scopes,
		"capabilities":                                     []string{"client-confidential-asymmetric", "client-confidential-symmetric", "permission-v1", "permission-v2"},
		"code_challenge_methods_supported":                 []string{},
	})
}
