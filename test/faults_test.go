// Holds docs/contract.md §5 Operations (a dependency that fails).

package test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

// The fault drills start their own Redis and PostgreSQL processes: stopping,
// freezing or killing them never touches the machine's shared servers.

func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		testenv.SkipOrFail(t, name+" not installed: the fault drill is skipped")
	}
	return path
}

type process struct{ cmd *exec.Cmd }

func (p process) kill()   { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() }
func (p process) freeze() { _ = p.cmd.Process.Signal(syscall.SIGSTOP) }
func (p process) thaw()   { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

func waitForPort(t *testing.T, addr string) {
	t.Helper()
	if err := testenv.WaitTCP(addr, 20*time.Second); err != nil {
		t.Fatal(err)
	}
}

// serverWithOwnRedis is a server on the embedded database and a Redis of the
// test's own, with a company and a patient.
func serverWithOwnRedis(t *testing.T) (process, *server, company, int64) {
	t.Helper()
	redis, addr := startRedis(t)
	b := backend{"embedded+redis", backends[0].databaseURL, func(*testing.T) string { return "redis://" + addr + "/0" }}
	s := startServer(t, b)
	c := s.newCompany(t, 1<<20)
	return redis, s, c, s.newCustomer(t, c)
}

// startRedis runs a private redis-server on a free port, with extra arguments.
func startRedis(t *testing.T, extra ...string) (process, string) {
	t.Helper()
	bin := needTool(t, "redis-server")
	addr := testenv.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	// Its own folder: a replica writes the master's snapshot to disk.
	cmd := exec.Command(bin, append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, extra...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := process{cmd}
	t.Cleanup(func() { p.thaw(); p.kill() })
	waitForPort(t, addr)
	return p, addr
}

// privatePostgres is a PostgreSQL cluster of the test's own, run as the
// postgres user (the server refuses root), on loopback or, for the
// partition drill, inside a network namespace of the test's.
type privatePostgres struct {
	dir, port string
	pgCtl     string
	host      string   // the address it listens on
	netns     []string // the command prefix that enters its namespace, if any
}

func startPostgres(t *testing.T) (*privatePostgres, string) {
	t.Helper()
	return startPostgresOn(t, "127.0.0.1", testenv.FreeAddr(t), nil)
}

// startPostgresOn starts the cluster listening on host (with a port free
// on addr), its commands run after the prefix netns.
func startPostgresOn(t *testing.T, host, addr string, netns []string) (*privatePostgres, string) {
	t.Helper()
	return startPostgresConf(t, host, addr, netns, nil)
}

// startPostgresWith starts a cluster on loopback whose postgresql.conf
// ends with the lines conf answers for its folder.
func startPostgresWith(t *testing.T, conf func(dir string) []string) (*privatePostgres, string) {
	t.Helper()
	return startPostgresConf(t, "127.0.0.1", testenv.FreeAddr(t), nil, conf)
}

func startPostgresConf(t *testing.T, host, addr string, netns []string, conf func(dir string) []string) (*privatePostgres, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the PostgreSQL fault drill runs its own cluster as the postgres user: it needs root")
	}
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(bins) == 0 {
		needTool(t, "initdb") // skips loudly, or fails under CI=true
	}
	bin := bins[len(bins)-1]
	dir, err := os.MkdirTemp("", "praxis-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if out, err := exec.Command("chown", "postgres", dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	asPostgres := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	asPostgres(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-A", "trust", "-U", "postgres")
	if host != "127.0.0.1" { // the test's own network: its other end may connect
		hba, err := os.OpenFile(filepath.Join(dir, "data", "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fmt.Fprintf(hba, "host all all %s/24 trust\n", host)
		_ = hba.Close()
	}
	if conf != nil {
		settings, err := os.OpenFile(filepath.Join(dir, "data", "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fmt.Fprintln(settings, strings.Join(conf(dir), "\n"))
		_ = settings.Close()
	}
	_, port, _ := net.SplitHostPort(addr)
	pg := &privatePostgres{dir: dir, port: port, pgCtl: filepath.Join(bin, "pg_ctl"), host: host, netns: netns}
	pg.start(t)
	t.Cleanup(func() { pg.stop(t) })
	return pg, "postgres://postgres@" + net.JoinHostPort(host, port) + "/postgres?sslmode=disable"
}

func (pg *privatePostgres) command(args ...string) *exec.Cmd {
	all := append(append(slices.Clone(pg.netns), "runuser", "-u", "postgres", "--", pg.pgCtl, "-D", filepath.Join(pg.dir, "data")), args...)
	return exec.Command(all[0], all[1:]...)
}

func (pg *privatePostgres) start(t *testing.T) {
	t.Helper()
	out, err := pg.command("-w", "-l", filepath.Join(pg.dir, "log"),
		"-o", "-p "+pg.port+" -k "+pg.dir+" -c listen_addresses="+pg.host, "start").CombinedOutput()
	if err != nil {
		t.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
	if len(pg.netns) == 0 {
		waitForPort(t, net.JoinHostPort(pg.host, pg.port))
	}
}

func (pg *privatePostgres) stop(t *testing.T) {
	t.Helper()
	_ = pg.command("-m", "immediate", "-w", "stop").Run()
}

// within runs fn and fails t when it took longer than d: a frozen dependency must not hold a request.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	t0 := time.Now()
	fn()
	if took := time.Since(t0); took > d {
		t.Errorf("%s took %s, want at most %s", what, took.Round(time.Millisecond), d)
	}
}

func retryAfter(t *testing.T, h http.Header, what string) {
	t.Helper()
	if n, err := strconv.Atoi(h.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("%s: Retry-After %q", what, h.Get("Retry-After"))
	}
}

// TestRedisFrozenAndGone: a frozen Redis answers token requests and API calls
// 503 with Retry-After within seconds, /readyz names it within its deadline,
// uploads go on, and all recovers when Redis does — without a restart.
func TestRedisFrozenAndGone(t *testing.T) {
	t.Parallel()
	redis, s, c, customer := serverWithOwnRedis(t)
	cl := s.newClient(t, c, "")
	token := s.tokenFor(t, cl)

	redis.freeze()
	within(t, 8*time.Second, "a token request with Redis frozen", func() {
		r := s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cl))
		if r.status != http.StatusServiceUnavailable || r.decode(t)["error"] != "temporarily_unavailable" {
			t.Errorf("token: %d %s", r.status, r.body)
		}
		retryAfter(t, r.header, "token")
	})
	within(t, 8*time.Second, "an API call with Redis frozen", func() {
		r := s.getCompany(t, token)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("API: %d %s", r.status, r.body)
		}
		retryAfter(t, r.header, "API")
	})
	within(t, 2*time.Second, "/readyz with Redis frozen", func() {
		r := s.request(t, http.MethodGet, "/readyz", "", "")
		if checks, _ := r.decode(t)["checks"].(map[string]any); r.status != 503 || checks["token_store"] != "unavailable" || checks["database"] != "ok" {
			t.Errorf("readyz: %d %s", r.status, r.body)
		}
	})
	within(t, 10*time.Second, "an upload with Redis frozen", func() {
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("befund.pdf", pdfOfSize(100))); r.status != 200 {
			t.Errorf("upload: %d %q", r.status, r.Message)
		}
	})

	redis.thaw()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if r := s.getCompany(t, token); r.status == 200 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no recovery after Redis thawed: %d", r.status)
		}
	}
	s.tokenFor(t, cl)

	redis.kill()
	within(t, 5*time.Second, "a token request with Redis gone", func() {
		r := s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cl))
		if r.status != http.StatusServiceUnavailable {
			t.Errorf("token with Redis gone: %d %s", r.status, r.body)
		}
	})
}

// TestDatabaseStopped: with PostgreSQL down every door answers 503 with
// Retry-After in its contract's shape, nothing is lost, and the server
// recovers without a restart once the database is back.
func TestDatabaseStopped(t *testing.T) {
	t.Parallel()
	pg, url := startPostgres(t)
	b := backend{"private-postgres", func(*testing.T) string { return url }, func(*testing.T) string { return "" }}
	s := startServer(t, b)
	c := s.newCompany(t, 1<<20)
	customer := s.newCustomer(t, c)
	cl := s.newClient(t, c, "")
	token := s.tokenFor(t, cl)
	if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("a.pdf", pdfOfSize(100))); r.status != 200 {
		t.Fatalf("upload: %d", r.status)
	}

	pg.stop(t)
	within(t, 15*time.Second, "requests with the database stopped", func() {
		up := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("b.pdf", pdfOfSize(100)))
		if up.status != http.StatusServiceUnavailable || up.Message != domain.MessageUnavailable {
			t.Errorf("upload: %d %q", up.status, up.Message)
		}
		retryAfter(t, up.header, "upload")
		r := s.request(t, http.MethodGet, "/api/oauth/v2/resource/customers", "", "", "Authorization: Bearer "+token)
		if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "service-unavailable") {
			t.Errorf("API: %d %s", r.status, r.body)
		}
		retryAfter(t, r.header, "API")
		r = s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cl))
		if r.status != http.StatusServiceUnavailable || r.decode(t)["error"] != "temporarily_unavailable" {
			t.Errorf("token: %d %s", r.status, r.body)
		}
		r = s.request(t, http.MethodGet, "/readyz", "", "")
		if checks, _ := r.decode(t)["checks"].(map[string]any); r.status != 503 || checks["database"] != "unavailable" {
			t.Errorf("readyz: %d %s", r.status, r.body)
		}
	})
	if strings.Contains(s.log.String(), `"status":500`) {
		t.Error("a request was answered 500")
	}

	pg.start(t)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		up := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("c.pdf", pdfOfSize(100)))
		if up.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after the database came back: %d %q", up.status, up.Message)
		}
	}
	if st := s.storageOf(t, c.ID); st.files != 2 {
		t.Errorf("after the outage %d files are recorded, want the two acknowledged ones", st.files)
	}
}

// TestBlobDiskFull: a full disk answers 507 with Retry-After, keeps nothing of
// the refused request, and /readyz reports low_disk; room again, uploads work.
func TestBlobDiskFull(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the full-disk drill mounts a small tmpfs: it needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		msg := fmt.Sprintf("cannot mount a tmpfs (%v %s): the full-disk drill is skipped", err, out)
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: " + msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	s := startServer(t, backends[0], "PRAXIS_BLOB_URL=file://"+dir, "PRAXIS_BLOB_MIN_FREE=3145728")
	c := s.newCompany(t, 100<<20)
	customer := s.newCustomer(t, c)
	if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("a.pdf", pdfOfSize(1_500_000))); r.status != 200 {
		t.Fatalf("first upload: %d %q", r.status, r.Message)
	}
	r := s.request(t, http.MethodGet, "/readyz", "", "")
	if checks, _ := r.decode(t)["checks"].(map[string]any); r.status != 503 || checks["blob_store"] != "low_disk" {
		t.Errorf("readyz below the free-space floor: %d %s", r.status, r.body)
	}
	full := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("b.pdf", pdfOfSize(3_000_000)))
	if full.status != http.StatusInsufficientStorage || full.Message != domain.MessageStorageFull {
		t.Errorf("upload onto a full disk: %d %q", full.status, full.Message)
	}
	retryAfter(t, full.header, "full disk")
	if st := s.storageOf(t, c.ID); st.files != 1 || st.used != 1_500_000 {
		t.Errorf("the refused upload left %+v", st)
	}
	var objects int
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			objects++
		}
		return nil
	})
	if objects != 1 {
		t.Errorf("%d objects on the disk, want the one acknowledged", objects)
	}
	if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("c.pdf", pdfOfSize(1_000_000))); r.status != 200 {
		t.Errorf("an upload that fits after the refusal: %d %q", r.status, r.Message)
	}
}
