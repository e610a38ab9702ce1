// Package ports declares the interfaces between praxis's use cases and the
// outside world (databases, token stores, blob stores). Here "port" means an
// interface the application needs, never an HTTP handler: handlers are driving
// adapters under adapters/. Every port has a contract suite in ports/porttest
// that each of its adapters passes.
package ports
