// Helpers: servers, backends, companies, customers.

// Package test holds black-box tests: they build the real praxis binary,
// start it on the embedded defaults and on PostgreSQL, and speak HTTP to it.
package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/test/testenv"
)

var binary, bridgeBinary, operatorBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "praxis-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "praxis")
	bridgeBinary = filepath.Join(dir, "praxis-gdt-bridge")
	operatorBinary = filepath.Join(dir, "praxis-operator")
	for out, pkg := range map[string]string{binary: "../app/cmd/praxis", bridgeBinary: "../app/cmd/praxis-gdt-bridge", operatorBinary: "../app/cmd/praxis-operator"} {
		build := exec.Command("go", "build", "-o", out, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build "+pkg+":", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	testenv.StopKube()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// backend is one storage configuration the binary runs on: the embedded
// defaults (SQLite, in-process token store), or PostgreSQL and Redis.
type backend struct {
	name        string
	databaseURL func(t *testing.T) string
	redisURL    func(t *testing.T) string
}

var backends = []backend{
	{"embedded", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "praxis.db") }, func(*testing.T) string { return "" }},
	{"postgres", func(t *testing.T) string { return testenv.PostgresURL(t) }, func(t *testing.T) string { return testenv.RedisURL(t) }},
}

// forEachBackend runs fn as a parallel subtest on every backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}

// server is one running praxis process.
type server struct {
	url     string
	env     []string
	blobDir string
	dbURL   string
	cmd     *exec.Cmd
	log     *testenv.SyncBuffer
	exited  chan error
	// anyAddr: the server may move to another free address when another
	// process took the one chosen for it before it could listen.
	anyAddr bool
}

// unlimitedRates lifts every plan's rate limit, for tests that poll the API
// while they wait for something (a poll every 50 ms uses up the basic plan's
// 600 a minute in half a minute).
const unlimitedRates = "PRAXIS_RATE_LIMITS=basic=1000000/m,pro=1000000/m,enterprise=1000000/m"

func startServer(t *testing.T, b backend, extraEnv ...string) *server {
	t.Helper()
	return startServerOn(t, b, testenv.FreeAddr(t), true, extraEnv...)
}

// startServerAt is startServer on a chosen address (the settings' public
// URL names its port).
func startServerAt(t *testing.T, b backend, addr string, extraEnv ...string) *server {
	t.Helper()
	return startServerOn(t, b, addr, false, extraEnv...)
}

func startServerOn(t *testing.T, b backend, addr string, anyAddr bool, extraEnv ...string) *server {
	t.Helper()
	s := &server{blobDir: filepath.Join(t.TempDir(), "files"), dbURL: b.databaseURL(t), log: &testenv.SyncBuffer{}, anyAddr: anyAddr}
	s.url = "http://" + addr
	s.env = append(os.Environ(),
		"PRAXIS_DATABASE_URL="+s.dbURL,
		"PRAXIS_BLOB_URL=file://"+s.blobDir,
		"PRAXIS_REDIS_URL="+b.redisURL(t),
		// Servers of parallel tests share the machine's Redis: each deployment
		// keeps its own keys (its replicas share them).
		"PRAXIS_REDIS_PREFIX="+testenv.RedisPrefix(),
		// Tests that fire 16 or 50 requests of one practice at once test
		// what they name, not the company's share of the pool (its default,
		// half the pool, would refuse some): TestCompanyShare holds that.
		"PRAXIS_COMPANY_CONCURRENCY=1000",
	)
	s.env = append(s.env, extraEnv...)
	s.launch(t, addr)
	return s
}

// replica starts a second praxis process on s's database, blob store and
// token store, as another pod of the same deployment.
func (s *server) replica(t *testing.T) *server {
	t.Helper()
	r := &server{blobDir: s.blobDir, dbURL: s.dbURL, env: s.env, log: &testenv.SyncBuffer{}, anyAddr: true}
	r.launch(t, testenv.FreeAddr(t))
	return r
}

// launch starts the process on addr and waits until it is ready. A free
// address found by closing a listener may be taken by another process
// before the server listens on it; then /readyz would answer from that
// process. So the server's own log must say it is serving before its
// readiness counts, and a server that may move tries another address.
func (s *server) launch(t *testing.T, addr string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := s.start(t, addr)
		if err == nil {
			break
		}
		if !s.anyAddr || attempt == 5 || !strings.Contains(s.log.String(), "address already in use") {
			t.Fatalf("%v\n%s", err, s.log.String())
		}
		t.Logf("%s was taken before the server listened on it: another address", addr)
		addr, s.log = testenv.FreeAddr(t), &testenv.SyncBuffer{}
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("server log:\n%s", s.log.String())
		}
	})
	if err := testenv.WaitReady(s.url, 30*time.Second, s.exited); err != nil {
		t.Fatalf("%v\n%s", err, s.log.String())
	}
}

// start runs the process on addr until its log says it serves there, or it exits.
func (s *server) start(t *testing.T, addr string) error {
	t.Helper()
	s.url = "http://" + addr
	s.cmd = exec.Command(binary, "serve")
	s.cmd.Env = append(slices.Clip(s.env), "PRAXIS_HTTP_ADDR="+addr)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	s.exited = exited
	go func() { exited <- s.cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(s.log.String(), `"msg":"serving"`) {
			return nil
		}
		select {
		case err := <-exited:
			exited <- err // for whoever waits on s.exited next
			if err == nil {
				err = errors.New("exit status 0")
			}
			return fmt.Errorf("the server exited before it served: %w", err)
		default:
		}
	}
	_ = s.cmd.Process.Kill()
	return errors.New("the server never said it serves")
}

// praxis runs a praxis subcommand against the server's database and decodes its JSON output.
func (s *server) praxis(t *testing.T, out any, args ...string) {
	t.Helper()
	stdout, stderr, code := praxisIn(t, s.env, args...)
	if code != 0 {
		t.Fatalf("praxis %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(stdout), out); err != nil {
			t.Fatalf("praxis %s: output %q: %v", strings.Join(args, " "), stdout, err)
		}
	}
}

type company struct {
	ID     string `json:"company_id"`
	Secret string `json:"upload_secret"`
}

func (s *server) newCompany(t *testing.T, quota int64) company {
	t.Helper()
	var c company
	s.praxis(t, &c, "admin", "company", "create", "--name", "Praxis "+t.Name(), "--storage-quota", fmt.Sprint(quota), "--json")
	return c
}

// withPatient starts a server with one company of the given quota and one patient of it.
func withPatient(t *testing.T, b backend, quota int64) (*server, company, int64) {
	t.Helper()
	s := startServer(t, b)
	c := s.newCompany(t, quota)
	return s, c, s.newCustomer(t, c)
}

func (s *server) newCustomer(t *testing.T, c company, extra ...string) int64 {
	t.Helper()
	var out struct {
		CustomerID int64  `json:"customer_id"`
		CompanyID  string `json:"company_id"`
	}
	s.praxis(t, &out, append([]string{"admin", "customer", "create", "--company", c.ID, "--first-name", "Anna", "--last-name", "Berger", "--json"}, extra...)...)
	if out.CompanyID != c.ID {
		t.Fatalf("customer of %s, want %s", out.CompanyID, c.ID)
	}
	return out.CustomerID
}

// storage is what the server keeps of a company: rows, bytes accounted, objects on disk.
type storage struct {
	files, used int64
	objects     int
}

// openDB opens the server's database for a test to look into; the caller closes it.
func (s *server) openDB(t *testing.T) *bun.DB {
	t.Helper()
	db, err := sqlstore.Open(s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func (s *server) storageOf(t *testing.T, companyID string) storage {
	t.Helper()
	db := s.openDB(t)
	defer db.Close()
	var st storage
	ctx := context.Background()
	id := uuid.MustParse(companyID)
	if err := db.NewSelect().Table("files").ColumnExpr("count(*)").Where("company_id = ?", id).Scan(ctx, &st.files); err != nil {
		t.Fatal(err)
	}
	if err := db.NewSelect().Table("companies").Column("storage_used").Where("id = ?", id).Scan(ctx, &st.used); err != nil {
		t.Fatal(err)
	}
	_ = filepath.WalkDir(filepath.Join(s.blobDir, companyID), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			st.objects++
		}
		return nil
	})
	return st
}

// part is one multipart part of an upload.
type part struct {
	field, filename string
	content         []byte
}

func filePart(name string, content []byte) part {
	return part{field: "file", filename: name, content: content}
}

// multipartBody encodes parts; it returns the body and its Content-Type.
func multipartBody(t *testing.T, parts ...part) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disposition := fmt.Sprintf(`form-data; name=%q`, p.field)
		if p.filename != "" {
			disposition += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", disposition)
		h.Set("Content-Type", "application/octet-stream") // never trusted: the server sniffs
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = pw.Write(p.content)
	}
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

type uploadReply struct {
	status  int
	header  http.Header
	Status  string `json:"status"`
	Message string `json:"message"`
	Files   []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Size        int64  `json:"size"`
		ContentType string `json:"content_type"`
		SHA256      string `json:"sha256"`
		// DeviceOrderID and OrderMatch: a device's result and its order (docs/contract.md §14).
		DeviceOrderID *string `json:"device_order_id"`
		OrderMatch    *string `json:"order_match"`
	} `json:"files"`
	Skipped []struct {
		Name        string `json:"name"`
		ContentType string `json:"content_type"`
	} `json:"skipped"`
}

// upload posts a multipart body with the given headers to path.
func (s *server) upload(t *testing.T, path string, headers map[string]string, parts ...part) uploadReply {
	t.Helper()
	body, contentType := multipartBody(t, parts...)
	return s.post(t, path, contentType, headers, bytes.NewReader(body))
}

// newPost builds a POST of body to path with the given headers; it needs no
// *testing.T, so goroutines that must not call t.Fatal can use it.
func (s *server) newPost(path, contentType string, headers map[string]string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, s.url+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

func (s *server) post(t *testing.T, path, contentType string, headers map[string]string, body io.Reader) uploadReply {
	t.Helper()
	req, err := s.newPost(path, contentType, headers, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	documentOf(t, s).check(t, http.MethodPost, path, reply{status: resp.StatusCode, header: resp.Header, body: raw})
	up := uploadReply{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(raw, &up); err != nil {
		t.Fatalf("POST %s: %d %q is not JSON", path, resp.StatusCode, raw)
	}
	return up
}

func gdtHeaders(c company, customer any) map[string]string {
	return map[string]string{"x-gdt-company": c.ID, "x-gdt-customer": fmt.Sprint(customer), "x-gdt-secret": c.Secret}
}

// TestServerMovesOffATakenAddress: when another process holds the address
// chosen for a server — and answers /readyz there — the harness does not
// take that process for the server: it starts the server on another
// address, and the server answers there.
func TestServerMovesOffATakenAddress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	impostor := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }),
		ReadHeaderTimeout: time.Second}
	go func() { _ = impostor.Serve(ln) }()
	t.Cleanup(func() { _ = impostor.Close() })
	taken := ln.Addr().String()
	s := startServerOn(t, backends[0], taken, true)
	if s.url == "http://"+taken {
		t.Fatalf("the server is said to answer on %s, which another process holds", taken)
	}
	resp, err := http.Get(s.url + "/api/oauth/v2/resource/company")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET company without a token at %s: %d, want praxis's 401", s.url, resp.StatusCode)
	}
}
