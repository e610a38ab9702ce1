// Package benchserver starts the built praxis binary for the load programs
// under test/bench and reads the figures of its process.
package benchserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/praxis-health/praxis/test/testenv"
)

// Server is one running praxis process.
type Server struct {
	URL string
	Env []string
	Cmd *exec.Cmd
	bin string
	// extra is the environment the program gave it, which its replicas share.
	extra []string
}

// Start runs `praxis serve` with env on a free loopback port and waits until it is ready.
func Start(binary string, env ...string) (*Server, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	// Load programs measure throughput: the per-client rate limits would cap
	// it, and so would a practice's share of the replica (64 clients of one
	// practice); test/bench/neighbours sets the share it measures.
	return StartAt(binary, addr, append([]string{"PRAXIS_RATE_LIMITS=basic=100000000/m,pro=100000000/m,enterprise=100000000/m",
		"PRAXIS_COMPANY_CONCURRENCY=100000"}, env...)...)
}

// StartAt runs `praxis serve` with env on addr and waits until it is ready.
func StartAt(binary, addr string, env ...string) (*Server, error) {
	s := &Server{URL: "http://" + addr, bin: binary, extra: env}
	s.Env = append(append(os.Environ(), env...), "PRAXIS_HTTP_ADDR="+addr)
	s.Cmd = exec.Command(binary, "serve")
	s.Cmd.Env = s.Env
	s.Cmd.Stderr = os.Stderr
	if err := s.Cmd.Start(); err != nil {
		return nil, err
	}
	if err := testenv.WaitReady(s.URL, 30*time.Second, nil); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Replica starts another process of s's deployment (its stores, its
// settings) on addr, or on a free port when addr is empty: another pod, or
// the same pod started again.
func (s *Server) Replica(addr string) (*Server, error) {
	if addr == "" {
		var err error
		if addr, err = FreeAddr(); err != nil {
			return nil, err
		}
	}
	return StartAt(s.bin, addr, s.extra...)
}

// FreeAddr is a loopback address no one listens on, for a program to take.
func FreeAddr() (string, error) { return testenv.FreeLoopback() }

// Offline is a deployment's stores without a server: its admin commands
// run with env (a database and a blob store), and no process holds the
// database open.
func Offline(binary string, env ...string) *Server {
	return &Server{Env: append(os.Environ(), env...), bin: binary, extra: env}
}

// Stop sends SIGTERM and waits for the process.
func (s *Server) Stop() {
	if s.Cmd == nil {
		return
	}
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	_ = s.Cmd.Wait()
}

// Admin runs a praxis subcommand on the server's stores and decodes its JSON output.
func (s *Server) Admin(out any, args ...string) error {
	cmd := exec.Command(s.bin, args...)
	cmd.Env = s.Env
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("praxis %s: %w", strings.Join(args, " "), err)
	}
	return json.Unmarshal(raw, out)
}

// Company is what `admin company create --json` prints.
type Company struct {
	ID     string `json:"company_id"`
	Secret string `json:"upload_secret"`
}

// Client is what `admin client create --json` prints.
type Client struct {
	ID     string `json:"client_id"`
	Secret string `json:"client_secret"`
}

// NewClient creates an OAuth client of company with the space-separated scopes.
func (s *Server) NewClient(company, scopes string) (Client, error) {
	var c Client
	err := s.Admin(&c, "admin", "client", "create", "--company", company, "--scopes", scopes, "--json")
	return c, err
}

// NewCompany creates a company with the given storage quota.
func (s *Server) NewCompany(quota int64) (Company, error) {
	var c Company
	err := s.Admin(&c, "admin", "company", "create", "--name", "Bench", "--storage-quota", strconv.FormatInt(quota, 10), "--json")
	return c, err
}

// VM reads a memory figure (VmRSS, VmHWM) of the server process from /proc, in MB.
func (s *Server) VM(field string) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.Cmd.Process.Pid))
	if err != nil {
		return -1
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024 / 1e6
		}
	}
	return -1
}

// Rate runs fn in n goroutines for d and returns the completed calls per second.
func Rate(n int, d time.Duration, fn func() error) (float64, error) {
	var total atomic.Int64
	errs := make(chan error, n)
	var wg sync.WaitGroup
	began := time.Now()
	stop := began.Add(d)
	for range n {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if err := fn(); err != nil {
					errs <- err
					return
				}
				total.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(total.Load()) / time.Since(began).Seconds(), nil
}

// CPU is the CPU time (user + system) used so far by processes, by name:
// "praxis" for the server, "load" for this process, and every process whose
// command is postgres or redis-server, summed.
func (s *Server) CPU() map[string]time.Duration {
	out := map[string]time.Duration{
		"praxis": CPUOf(strconv.Itoa(s.Cmd.Process.Pid)),
		"load":   CPUOf("self"),
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		switch name := strings.TrimSpace(string(comm)); name {
		case "postgres", "redis-server":
			out[name] += CPUOf(e.Name())
		}
	}
	return out
}

// AddCPU adds to sum what each process spent between the readings before
// and after of CPU.
func AddCPU(sum, before, after map[string]time.Duration) {
	for name, d := range after {
		sum[name] += d - before[name]
	}
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// CPUOf is what the process pid ("self": this one) has spent on the CPU.
func CPUOf(pid string) time.Duration {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) start after ")".
	_, rest, _ := strings.Cut(string(raw), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// Integrator is a company of a server and a signed-in OAuth client of it.
type Integrator struct {
	Company Company
	Token   string
}

// NewIntegrator creates a company with a storage quota and a client with
// the space-separated scopes, and gets the client a token over c.
func (s *Server) NewIntegrator(c *http.Client, quota int64, scopes string) (Integrator, error) {
	company, err := s.NewCompany(quota)
	if err != nil {
		return Integrator{}, err
	}
	client, err := s.NewClient(company.ID, scopes)
	if err != nil {
		return Integrator{}, err
	}
	token, err := testenv.ClientToken(c, s.URL, client.ID, client.Secret)
	return Integrator{Company: company, Token: token}, err
}

// Percentile is the p-th percentile of d (p 50: the median), d left unsorted.
func Percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
