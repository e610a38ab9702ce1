//go:build windows

package main

import (
	"context"

	"golang.org/x/sys/windows/svc"
)

// asService runs the bridge under the Windows service manager when that
// started the process; false from a console. A service's command line says
// so with --service: the question Windows is asked otherwise
// (svc.IsWindowsService: is the parent process services.exe, in session
// 0?) is answered no under Wine 8.0 — the bridge then ran as a console
// program that never answered the service manager, which gave up on it
// (1053) and showed it STOPPED while it ran. Without the flag (a service
// installed before it) the question is asked, as Windows answers it right.
func asService(run func(context.Context) error, service bool) (bool, error) {
	if !service {
		is, err := svc.IsWindowsService()
		if err != nil || !is {
			return false, err
		}
	}
	return true, svc.Run("praxis-gdt-bridge", handler{run: run})
}

type handler struct{ run func(context.Context) error }

// Execute reports Running at once and stops the bridge on Stop or Shutdown;
// a bundle in flight is not marked, so it is delivered (once) after restart.
func (h handler) Execute(_ []string, requests <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.run(ctx) }()
	status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	for {
		select {
		case err := <-done:
			if err != nil {
				return false, 1
			}
			return false, 0
		case r := <-requests:
			switch r.Cmd {
			case svc.Interrogate:
				status <- r.CurrentStatus
			case svc.Stop, svc.Shutdown:
				status <- svc.Status{State: svc.StopPending}
				cancel()
			default:
			}
		}
	}
}
