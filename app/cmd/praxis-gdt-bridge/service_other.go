//go:build !windows

package main

import "context"

// asService: only Windows has a service manager that needs answering;
// systemd runs the bridge as a plain process.
func asService(func(context.Context) error) (bool, error) { return false, nil }
