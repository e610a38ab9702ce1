//go:build !windows

package main

import (
	"context"
	"errors"
)

// asService: only Windows has a service manager that needs answering;
// systemd runs the bridge as a plain process (--service is refused).
func asService(_ func(context.Context) error, service bool) (bool, error) {
	if service {
		return false, errors.New("--service: only a Windows service manager starts the bridge as a service; systemd runs it as it is")
	}
	return false, nil
}
