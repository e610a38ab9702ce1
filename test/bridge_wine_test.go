// Holds docs/contract.md §8: the Windows bridge as a service, under Wine.

package test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

// TestBridgeUnderWine: the Windows build, run under Wine with the
// ProcessPrng shim (test/wine), watches its folder and delivers a result to
// a real server. Registering it as a service with sc.exe was tried by
// hand under this Wine (docs/devices/bridge.md's commands): with --service it
// answers the manager (RUNNING, and STOPPED with exit code 0 after sc
// stop); without it, svc.IsWindowsService says no under Wine and it ran as
// a console program the manager gave up on (1053, STOPPED while it ran).
// Wine's sc prints nothing on most failures and its service manager comes
// and goes with each short program, which made that sequence flaky here.
func TestBridgeUnderWine(t *testing.T) {
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
	// wine runs a program with its output in a file, not a pipe: the
	// processes Wine starts beside it inherit a pipe and would hold Wait.
	wineCmd := func(out *os.File, args ...string) *exec.Cmd {
		cmd := exec.Command(wine, args...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, out, out
		return cmd
	}
	logFile, err := os.Create(filepath.Join(work, "wine.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kill := exec.Command(wineserver, "-k") // every process of this prefix
		kill.Env = env
		_ = kill.Run()
		_ = logFile.Close()
		if t.Failed() {
			log, _ := os.ReadFile(logFile.Name())
			t.Logf("wine and bridge log:\n%s", log)
		}
	})
	if err := wineCmd(logFile, "wineboot", "-i").Run(); err != nil {
		t.Fatalf("wineboot: %v", err)
	}
	copyFile(t, dll, filepath.Join(work, "prefix", "drive_c", "windows", "system32", "bcryptprimitives.dll"))

	dir := filepath.Join(work, "gdt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	bridge := wineCmd(logFile, exe, "--dir", winePath(dir), "--url", s.url, "--company", c.ID, "--secret", c.Secret, "--rescan", "1s")
	if err := bridge.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bridge.Process.Kill(); _ = bridge.Wait() })
	if err := os.WriteFile(filepath.Join(dir, "befund.gdt"), result(customer), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the result delivered by the Windows build", func() bool { return exists(filepath.Join(dir, "done", "befund.gdt")) })
	if st := s.storageOf(t, c.ID); st.files != 1 {
		t.Errorf("%d files stored, want the result", st.files)
	}
	want := `{"queue":0,"delivered":1,"failed":0}`
	eventually(t, 10*time.Second, "status.json "+want, func() bool {
		raw, _ := os.ReadFile(filepath.Join(dir, ".praxis-bridge", "status.json"))
		return strings.TrimSpace(string(raw)) == want
	})
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
