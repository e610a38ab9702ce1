// Package httpapi is the resource API's door on fiber: the OAuth token
// endpoint, the resource sections behind the bearer guard, the upload
// endpoints, health probes, metrics, the OpenAPI document and the release
// notes. Handlers return errors; ErrorHandler turns them into the response
// shape of the route's contract (RFC 9457 problems; the upload doors'
// own). It is mounted on adapters/httphost beside FHIR and the pages.
package httpapi
