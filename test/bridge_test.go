// Holds docs/contract.md §8 The GDT bridge.

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-health/praxis/test/testenv"
)

// bridge is a running praxis-gdt-bridge.
type bridge struct {
	cmd    *exec.Cmd
	log    *testenv.SyncBuffer
	exited chan struct{} // closed once the process has exited
}

func startBridge(t *testing.T, dir string, s *server, c company, extraEnv ...string) *bridge {
	t.Helper()
	return runBridge(t, extraEnv, "--dir", dir, "--url", s.url, "--company", c.ID, "--secret", c.Secret, "--rescan", "1s")
}

// startBridgeArgs runs praxis-gdt-bridge with args.
func startBridgeArgs(t *testing.T, args ...string) *bridge {
	t.Helper()
	return runBridge(t, nil, args...)
}

func runBridge(t *testing.T, extraEnv []string, args ...string) *bridge {
	t.Helper()
	b := &bridge{log: &testenv.SyncBuffer{}, exited: make(chan struct{})}
	b.cmd = exec.Command(bridgeBinary, args...)
	b.cmd.Env = append(os.Environ(), extraEnv...)
	b.cmd.Stdout, b.cmd.Stderr = b.log, b.log
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = b.cmd.Wait(); close(b.exited) }()
	t.Cleanup(func() {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.exited:
		case <-time.After(10 * time.Second):
			_ = b.cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("bridge log:\n%s", b.log.String())
		}
	})
	return b
}

// result is a 6310 about patient naming the images it references.
func result(patient int64, images ...string) []byte {
	fields := [][2]string{{"8000", "6310"}, {"8316", "SONO1"}, {"3000", fmt.Sprintf("%06d", patient)}, {"6200", "10032026"}}
	for _, img := range images {
		fields = append(fields, [2]string{"6305", img})
	}
	return gdtRecord(fields...)
}

func eventually(t *testing.T, d time.Duration, what string, ok func() bool) time.Duration {
	t.Helper()
	t0 := time.Now()
	for !ok() {
		if time.Since(t0) > d {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(t0)
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// TestBridgeDelivers: a half-written result waits until complete; a result
// with two images arrives as one upload; a refused one lands in failed/ with
// its reason while the others go on.
func TestBridgeDelivers(t *testing.T) {
	t.Parallel()
	s, c, customer := withPatient(t, backends[0], 100*mib)
	dir := t.TempDir()
	startBridge(t, dir, s, c)

	for name, data := range map[string][]byte{"bild1.jpg": jpegImage(t), "bild2.png": pngImage(t)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	full := result(customer, "bild1.jpg", "bild2.png")
	gdt := filepath.Join(dir, "befund.gdt")
	if err := os.WriteFile(gdt, full[:20], 0o600); err != nil { // the device is still writing
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	f, err := os.OpenFile(gdt, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(full[20:40])
	_ = f.Close()
	time.Sleep(1500 * time.Millisecond)
	if st := s.storageOf(t, c.ID); st.files != 0 {
		t.Fatalf("a half-written result was delivered: %+v", st)
	}
	f, _ = os.OpenFile(gdt, os.O_APPEND|os.O_WRONLY, 0o600)
	_, _ = f.Write(full[40:])
	_ = f.Close()
	delay := eventually(t, 15*time.Second, "delivery of the completed result", func() bool { return exists(filepath.Join(dir, "done", "befund.gdt")) })
	t.Logf("delay from the complete file to its delivery: %s (2 s of it is the stability wait)", delay.Round(10*time.Millisecond))
	if st := s.storageOf(t, c.ID); st.files != 3 {
		t.Errorf("the result and its two images: %d files stored, want 3 in one upload", st.files)
	}
	if n := strings.Count(s.log.String(), `"route":"/api/gdt/upload","status":200`); n != 1 {
		t.Errorf("%d uploads, want one for the bundle", n)
	}
	for _, name := range []string{"bild1.jpg", "bild2.png"} {
		if !exists(filepath.Join(dir, "done", name)) || exists(filepath.Join(dir, name)) {
			t.Errorf("%s was not moved to done/", name)
		}
	}

	// A result for a patient the practice does not have is refused for good; the next one goes on.
	if err := os.WriteFile(filepath.Join(dir, "fremd.gdt"), result(987654), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zweiter.gdt"), result(customer), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the refusal and the next delivery", func() bool {
		return exists(filepath.Join(dir, "failed", "fremd.gdt.reason.txt")) && exists(filepath.Join(dir, "done", "zweiter.gdt"))
	})
	reason, _ := os.ReadFile(filepath.Join(dir, "failed", "fremd.gdt.reason.txt"))
	if !strings.Contains(string(reason), "Customer not found: [987654]") {
		t.Errorf("reason %q", reason)
	}
	want := `{"queue":0,"delivered":2,"failed":1}`
	eventually(t, 5*time.Second, "status.json "+want, func() bool {
		raw, _ := os.ReadFile(filepath.Join(dir, ".praxis-bridge", "status.json"))
		return strings.TrimSpace(string(raw)) == want
	})
}

// TestBridgeExactlyOnce: the server down for a while, then back: delivered
// once; the bridge dying after the server stored a bundle but before it
// moved it: restarted, it delivers nothing twice.
func TestBridgeExactlyOnce(t *testing.T) {
	t.Parallel()
	s, c, customer := withPatient(t, backends[0], 100*mib)
	addr := strings.TrimPrefix(s.url, "http://")
	dir := t.TempDir()

	_ = s.cmd.Process.Signal(syscall.SIGTERM) // the server goes away
	<-s.exited
	startBridge(t, dir, s, c)
	if err := os.WriteFile(filepath.Join(dir, "a.gdt"), result(customer), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	if !exists(filepath.Join(dir, "a.gdt")) {
		t.Fatal("the bundle left the folder while the server was down")
	}
	s.launch(t, addr) // back on the same address
	eventually(t, 30*time.Second, "delivery after the server returned", func() bool { return exists(filepath.Join(dir, "done", "a.gdt")) })
	if st := s.storageOf(t, c.ID); st.files != 1 {
		t.Errorf("%d files stored, want exactly one", st.files)
	}

	// A bridge that dies right after the 200, before it marks and moves the bundle.
	dir2 := t.TempDir()
	crashing := startBridge(t, dir2, s, c, "PRAXIS_BRIDGE_TEST_CRASH_AFTER_UPLOAD=1")
	// Another examination (another day): identical bytes would be the same
	// result and, rightly, the same Idempotency-Key.
	b := gdtRecord([2]string{"8000", "6310"}, [2]string{"8316", "SONO1"}, [2]string{"3000", fmt.Sprintf("%06d", customer)}, [2]string{"6200", "11032026"})
	if err := os.WriteFile(filepath.Join(dir2, "b.gdt"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-crashing.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the crashing bridge did not crash")
	}
	if st := s.storageOf(t, c.ID); st.files != 2 || !exists(filepath.Join(dir2, "b.gdt")) {
		t.Fatalf("after the crash: %+v, bundle still queued %v", st, exists(filepath.Join(dir2, "b.gdt")))
	}
	startBridge(t, dir2, s, c)
	eventually(t, 15*time.Second, "the restarted bridge finishing the bundle", func() bool { return exists(filepath.Join(dir2, "done", "b.gdt")) })
	if st := s.storageOf(t, c.ID); st.files != 2 {
		t.Errorf("the restarted bridge stored the bundle again: %d files", st.files)
	}
}

// TestBridgeLargeBundle: a 15 MiB image arrives with its result in one
// streamed upload, byte for byte; the bridge's memory is logged (idle and
// peak while delivering) as the figure, not asserted.
func TestBridgeLargeBundle(t *testing.T) {
	t.Parallel()
	s, c, customer := withPatient(t, backends[0], 100*mib)
	dir := t.TempDir()
	br := startBridge(t, dir, s, c)
	time.Sleep(1500 * time.Millisecond)
	idle := procStatus(t, br.cmd.Process.Pid, "VmRSS")

	image := make([]byte, 15*mib) // the largest file the service takes
	for i := range image {
		image[i] = byte(i * 7)
	}
	copy(image, "%PDF-1.7\n")
	if err := os.WriteFile(filepath.Join(dir, "gross.pdf"), image, 0o600); err != nil {
		t.Fatal(err)
	}
	// A referenced file of a format the service does not take is set aside, not lost.
	if err := os.WriteFile(filepath.Join(dir, "roh.bin"), []byte{0, 1, 2, 3, 0xff, 0xfe}, 0o600); err != nil {
		t.Fatal(err)
	}
	gdt := result(customer, "gross.pdf", "roh.bin")
	if err := os.WriteFile(filepath.Join(dir, "gross.gdt"), gdt, 0o600); err != nil {
		t.Fatal(err)
	}
	delay := eventually(t, 30*time.Second, "delivery of the 15 MiB bundle", func() bool { return exists(filepath.Join(dir, "done", "gross.gdt")) })
	peak := procStatus(t, br.cmd.Process.Pid, "VmHWM")
	t.Logf("15 MiB bundle: delivered %s after it was written; bridge RSS idle %s, peak %s", delay.Round(10*time.Millisecond), idle, peak)
	if st := s.storageOf(t, c.ID); st.files != 2 || st.used != int64(len(image)+len(gdt)) {
		t.Errorf("stored %+v, want 2 files of %d bytes", st, len(image)+len(gdt))
	}
	if !exists(filepath.Join(dir, "done", "gross.pdf")) || !exists(filepath.Join(dir, "failed", "roh.bin")) {
		t.Error("the image belongs in done/, the skipped file in failed/")
	}
	reason, _ := os.ReadFile(filepath.Join(dir, "failed", "roh.bin.reason.txt"))
	if !strings.Contains(string(reason), "not an accepted format") || !strings.Contains(string(reason), "gross.gdt") {
		t.Errorf("reason %q", reason)
	}
}

// TestBridgeRefusesAndWaitsBoundedly: a file whose records name two patients
// goes to failed/ without an upload; a reference written in another letter
// case is the same file; a referenced file that never appears sends its
// result to failed/ after the bounded wait, and a later result of the same
// patient is delivered meanwhile.
func TestBridgeRefusesAndWaitsBoundedly(t *testing.T) {
	t.Parallel()
	s, c, customer := withPatient(t, backends[0], 100*mib)
	other := s.newCustomer(t, c)
	dir := t.TempDir()
	startBridge(t, dir, s, c, "PRAXIS_BRIDGE_MISSING_FILE_TIMEOUT=6s")

	two := append(result(customer), result(other)...)
	if err := os.WriteFile(filepath.Join(dir, "zwei.gdt"), two, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wartet.gdt"), result(customer, "NIE.JPG"), 0o600); err != nil {
		t.Fatal(err)
	}
	waiting := time.Now()
	if err := os.WriteFile(filepath.Join(dir, "Bild.JPG"), jpegImage(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gross.gdt"), result(customer, "bild.jpg"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the refusal and the delivery", func() bool {
		return exists(filepath.Join(dir, "failed", "zwei.gdt.reason.txt")) && exists(filepath.Join(dir, "done", "gross.gdt"))
	})
	reason, _ := os.ReadFile(filepath.Join(dir, "failed", "zwei.gdt.reason.txt"))
	if !strings.Contains(string(reason), "more than one patient") || !strings.Contains(string(reason), fmt.Sprintf("%06d", other)) {
		t.Errorf("reason %q", reason)
	}
	if !exists(filepath.Join(dir, "done", "Bild.JPG")) {
		t.Error("the image named in another letter case was not delivered with its result")
	}
	if st := s.storageOf(t, c.ID); st.files != 2 {
		t.Errorf("%d files stored, want the delivered result and its image only", st.files)
	}
	// Until the wait has run out (it starts once the file is stable, 2 s
	// after it was written), the result stays in the folder.
	if time.Since(waiting) < 6*time.Second && !exists(filepath.Join(dir, "wartet.gdt")) {
		t.Fatal("the result waiting for its file left the folder before the wait ran out")
	}
	eventually(t, 30*time.Second, "the result whose file never came, in failed/", func() bool {
		return exists(filepath.Join(dir, "failed", "wartet.gdt.reason.txt"))
	})
	reason, _ = os.ReadFile(filepath.Join(dir, "failed", "wartet.gdt.reason.txt"))
	if !strings.Contains(string(reason), "NIE.JPG") || !strings.Contains(string(reason), "did not appear within 6s") {
		t.Errorf("reason %q", reason)
	}
}

// procStatus reads one line of /proc/<pid>/status, e.g. "VmRSS".
func procStatus(t *testing.T, pid int, key string) string {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "?"
}

// TestBridgeBuildsForWindows: most practices run it on Windows.
func TestBridgeBuildsForWindows(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("built natively")
	}
	build := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "praxis-gdt-bridge.exe"), "../app/cmd/praxis-gdt-bridge")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("windows/amd64 build: %v\n%s", err, out)
	}
}
