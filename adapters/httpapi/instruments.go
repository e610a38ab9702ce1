package httpapi

// instrumentation names the API's own instruments (tokens issued and
// refused, uploads, deprecated calls, audit failures); the request's span
// and duration are the host's (adapters/httphost).
const instrumentation = "github.com/praxis-health/praxis/adapters/httpapi"
