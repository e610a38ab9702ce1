// Package redact keeps what a connection URL holds (its password) out of
// the errors the adapters return: a url.Error quotes the whole URL.
package redact

import (
	"errors"
	"net/url"
)

// URLError is what is wrong in err, a URL's parse error, without the URL it
// quotes; nil when err holds no url.Error.
func URLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return nil
}
