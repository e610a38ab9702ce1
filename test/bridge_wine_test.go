// Holds docs/contract.md §8: the Windows bridge as a service, under Wine.

package test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/test/testenv"
)

// wineTool finds a program the Wine test needs: skipped loudly without it,
// a failure under CI=true (.ci/run installs them).
func wineTool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		testenv.SkipOrFail(t, name+" not installed (apt-get install "+pkg+"; .ci/run does): the Windows bridge is not run under Wine")
	}
	return path
}

// winePath is a Linux path as a Windows program under Wine sees it (drive Z: is /).
func winePath(path string) string { return "Z:" + strings.ReplaceAll(path, "/", `\`) }

// TestBridgeServiceUnderWine: the Windows build, run under Wine with the
// ProcessPrng shim (test/wine) and registered with sc.exe as a service
// whose command line passes --service (as the guide's does), answers the
// service manager — RUNNING while it runs, STOPPED with exit code 0 after
// sc stop — and delivers a result to a real server meanwhile. Without the
// flag, svc.IsWindowsService says no under Wine and the bridge ran as a
// console program the manager gave up on (1053, STOPPED while it ran):
// this test then fails at RUNNING.
func TestBridgeServiceUnderWine(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("Wine runs the Windows build on Linux")
	}
	wine := wineTool(t, "wine", "wine64")
	wineserver := wineTool(t, "wineserver", "wine64")
	gcc := wineTool(t, "x86_64-w64-mingw32-gcc", "gcc-mingw-w64-x86-64")
	s, c, customer := withPatient(t, backends[0], 100*mib)
	work := t.TempDir()

	exe := filepath.Join(work, "praxis-gdt-bridge.exe")
	build := exec.Command("go", "build", "-o", exe, "../app/cmd/praxis-gdt-bridge")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("windows/amd64 build: %v\n%s", err, out)
	}
	dll := filepath.Join(work, "bcryptprimitives.dll")
	if out, err := exec.Command(gcc, "-Wall", "-shared", "-O2", "-o", dll, "wine/bcryptprimitives.c", "wine/bcryptprimitives.def").CombinedOutput(); err != nil {
		t.Fatalf("the ProcessPrng shim: %v\n%s", err, out)
	}
	env := append(os.Environ(), "WINEPREFIX="+filepath.Join(work, "prefix"), "WINEDEBUG=-all",
		"WINEDLLOVERRIDES=mscoree,mshtml=;bcryptprimitives=n") // no Mono or Gecko to download
	wineLog, err := os.Create(filepath.Join(work, "wine.log"))
	if err != nil {
		t.Fatal(err)
	}
	// command runs a Wine program with its output in a file, not a pipe:
	// the processes Wine starts beside it inherit a pipe and would hold Wait.
	command := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, wineLog, wineLog
		return cmd
	}
	sc := func(args ...string) string {
		t.Helper()
		out, err := os.CreateTemp(work, "sc-*.out")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = out.Close() }()
		cmd := command(wine, append([]string{"sc"}, args...)...)
		cmd.Stdout, cmd.Stderr = out, out
		_ = cmd.Run() // Wine's sc says what it did, or nothing: what it prints is checked
		printed, _ := os.ReadFile(out.Name())
		return string(printed)
	}
	state := func() string {
		m := regexp.MustCompile(`STATE\s*:\s*\d+\s+(\w+)`).FindStringSubmatch(sc("query", "praxisbridge"))
		if m == nil {
			return "none"
		}
		return m[1]
	}
	logFile := filepath.Join(work, "bridge.log")
	t.Cleanup(func() {
		_ = command(wineserver, "-k").Run() // every process of this prefix
		_ = wineLog.Close()
		if t.Failed() {
			for _, f := range []string{wineLog.Name(), logFile} {
				log, _ := os.ReadFile(f)
				t.Logf("%s:\n%s", filepath.Base(f), log)
			}
		}
	})
	// A new prefix goes on setting itself up after wineboot returns: its
	// service manager answers sc reliably once that wineserver has exited.
	if err := command(wine, "wineboot", "-i").Run(); err != nil {
		t.Fatalf("wineboot: %v", err)
	}
	if err := command(wineserver, "-w").Run(); err != nil {
		t.Fatalf("wineserver -w: %v", err)
	}
	copyFile(t, dll, filepath.Join(work, "prefix", "drive_c", "windows", "system32", "bcryptprimitives.dll"))

	dir := filepath.Join(work, "gdt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sc("create", "praxisbridge", "binPath=", strings.Join([]string{winePath(exe), "--service", "--dir", winePath(dir), "--url", s.url,
		"--company", c.ID, "--secret", c.Secret, "--rescan", "1s", "--log", winePath(logFile)}, " "))
	if got := state(); got != "STOPPED" {
		t.Fatalf("the service after sc create: %s, want STOPPED", got)
	}
	// Wine ends its services when the last program that is no service
	// exits (each sc is one): a console stays open beside them.
	console := command(wine, "cmd")
	stdin, err := console.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := console.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = console.Process.Kill(); _ = console.Wait() })

	said := sc("start", "praxisbridge")
	eventually(t, 30*time.Second, "the service RUNNING (sc start said "+strings.Join(strings.Fields(said), " ")+")", func() bool { return state() == "RUNNING" })
	if err := os.WriteFile(filepath.Join(dir, "befund.gdt"), result(customer), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the result delivered by the service", func() bool { return exists(filepath.Join(dir, "done", "befund.gdt")) })
	if st := s.storageOf(t, c.ID); st.files != 1 {
		t.Errorf("%d files stored, want the result", st.files)
	}
	if got := state(); got != "RUNNING" {
		t.Errorf("after the delivery the service is %s, want RUNNING", got)
	}
	sc("stop", "praxisbridge")
	eventually(t, 30*time.Second, "the service STOPPED", func() bool { return state() == "STOPPED" })
	if q := sc("query", "praxisbridge"); !regexp.MustCompile(`WIN32_EXIT_CODE\s*:\s*0\b`).MatchString(q) {
		t.Errorf("stopped with an error: %s", q)
	}
}

// TestBridgeServiceFlagOnLinux: only a Windows service manager starts the
// bridge as a service; the Linux build refuses --service and says why.
func TestBridgeServiceFlagOnLinux(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the Windows build takes it")
	}
	out, err := exec.Command(bridgeBinary, "--service", "--dir", t.TempDir(), "--url", "http://127.0.0.1:9", "--company", "x", "--secret", "y").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "only a Windows service manager") {
		t.Errorf("--service on Linux: %v\n%s", err, out)
	}
}
