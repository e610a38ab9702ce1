// Holds docs/contract.md §5 Operations, Failover: a network partition.

package test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// testNetwork is a network namespace of the test's own, joined to the
// machine's by a veth pair: a second host, reached only at its address on
// a /30 of its own. Cutting it takes the namespace's end of the link down:
// packets to it are dropped, never refused (no RST, no ICMP), as in a
// partition.
type testNetwork struct {
	name, hostIf, nsIf string
	hostAddr, nsAddr   string
}

func newTestNetwork(t *testing.T) *testNetwork {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the partition drill makes a network namespace: it needs root")
	}
	needTool(t, "ip")
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	octet := 1 + mrand.IntN(250)
	n := &testNetwork{name: "praxis-" + id, hostIf: "pxh" + id, nsIf: "pxn" + id,
		hostAddr: fmt.Sprintf("10.213.%d.1", octet), nsAddr: fmt.Sprintf("10.213.%d.2", octet)}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "netns", "add", n.name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.name).Run() })
	run("ip", "link", "add", n.hostIf, "type", "veth", "peer", "name", n.nsIf)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", n.hostIf).Run() })
	run("ip", "link", "set", n.nsIf, "netns", n.name)
	run("ip", "addr", "add", n.hostAddr+"/30", "dev", n.hostIf)
	run("ip", "link", "set", n.hostIf, "up")
	in := n.exec()
	run(append(in, "ip", "addr", "add", n.nsAddr+"/30", "dev", n.nsIf)...)
	run(append(in, "ip", "link", "set", n.nsIf, "up")...)
	run(append(in, "ip", "link", "set", "lo", "up")...)
	return n
}

// exec is the prefix that runs a command inside the namespace.
func (n *testNetwork) exec() []string { return []string{"ip", "netns", "exec", n.name} }

// cut drops every packet between the machine and the namespace; heal ends that.
func (n *testNetwork) cut(t *testing.T)  { n.link(t, "down") }
func (n *testNetwork) heal(t *testing.T) { n.link(t, "up") }

func (n *testNetwork) link(t *testing.T, state string) {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "exec", n.name, "ip", "link", "set", n.nsIf, state).CombinedOutput(); err != nil {
		t.Fatalf("link %s: %v\n%s", state, err, out)
	}
}

// TestPartitionEndsRequestsWithinTheirDeadline: PostgreSQL and Redis on a
// host of the test's own (a network namespace); the path to it is cut, so
// that packets are dropped, not refused. Every request, read, write or
// token, ends within its deadline as 503 with Retry-After; /readyz turns
// 503; nothing answers 500 or hangs. When the path heals, praxis recovers
// by itself, and each create retried with its Idempotency-Key is stored
// once.
func TestPartitionEndsRequestsWithinTheirDeadline(t *testing.T) {
	t.Parallel()
	n := newTestNetwork(t)
	_, dbURL := startPostgresOn(t, n.nsAddr, net.JoinHostPort(n.nsAddr, "15432"), n.exec())
	redisAddr := net.JoinHostPort(n.nsAddr, "16379")
	redis := exec.Command("ip", append(n.exec()[1:], "redis-server", "--port", "16379", "--bind", n.nsAddr, "--protected-mode", "no", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())...)
	if err := redis.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(process{redis}.kill)
	waitForPort(t, redisAddr)
	const deadline = 3 * time.Second
	be := backend{"partition", func(*testing.T) string { return dbURL }, func(*testing.T) string { return "redis://" + redisAddr + "/0" }}
	s := startServer(t, be, unlimitedRates, "PRAXIS_REQUEST_TIMEOUT="+deadline.String())
	c := s.newCompany(t, 1<<20)
	cl := s.newClient(t, c, "company:read customers:read customers:write")
	token := s.tokenFor(t, cl)
	auth := "Bearer " + token

	type answer struct {
		status     int
		retryAfter string
		took       time.Duration
	}
	client := &http.Client{Timeout: 30 * time.Second}
	send := func(method, path, body string, headers ...string) answer {
		req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
		for _, h := range headers {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Set(k, v)
		}
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return answer{took: time.Since(t0)}
		}
		_ = resp.Body.Close()
		return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(t0)}
	}
	create := func(key string) answer {
		return send(http.MethodPost, resource+"customers", `{"first_name":"Cut","last_name":"Off","birth_date":"1980-01-01"}`,
			"Authorization: "+auth, "Content-Type: application/json", "Idempotency-Key: "+key)
	}
	if a := send(http.MethodGet, resource+"company", "", "Authorization: "+auth); a.status != http.StatusOK {
		t.Fatalf("before the cut: %d", a.status)
	}
	if a := create("before"); a.status != http.StatusCreated {
		t.Fatalf("a create before the cut: %d", a.status)
	}

	n.cut(t)
	cutAt := time.Now()
	readyDown := eventuallyStatus(t, s.url+"/readyz", http.StatusServiceUnavailable, 10*time.Second)
	// Four clients for eight seconds: reads, creates (each key kept for
	// its retries after the heal), tokens.
	var mu sync.Mutex
	var answers []answer
	keys := map[string]bool{}
	ctx, stop := context.WithTimeout(context.Background(), 8*time.Second)
	defer stop()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				var a answer
				switch i % 3 {
				case 0:
					a = send(http.MethodGet, resource+"company", "", "Authorization: "+auth)
				case 1:
					key := fmt.Sprintf("cut-%d-%d", w, i)
					a = create(key)
					mu.Lock()
					keys[key] = true
					mu.Unlock()
				case 2:
					a = send(http.MethodPost, "/api/oauth/v2/token", form("grant_type", "client_credentials"), basic(cl), "Content-Type: "+formType)
				}
				mu.Lock()
				answers = append(answers, a)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	n.heal(t)
	healedAt := time.Now()
	readyUp := eventuallyStatus(t, s.url+"/readyz", http.StatusOK, 60*time.Second)
	var slowest time.Duration
	statuses := map[int]int{}
	for _, a := range answers {
		statuses[a.status]++
		slowest = max(slowest, a.took)
		if a.status != http.StatusServiceUnavailable || a.retryAfter == "" {
			t.Errorf("during the partition: %d (Retry-After %q) after %s, want 503 with Retry-After", a.status, a.retryAfter, a.took.Round(time.Millisecond))
		}
		if a.took > deadline+2*time.Second {
			t.Errorf("a request took %s during the partition, past its deadline of %s", a.took.Round(time.Millisecond), deadline)
		}
	}
	if len(answers) < 8 {
		t.Fatalf("only %d requests during the partition", len(answers))
	}
	// After the heal: every create again with its key, as a client does.
	var firstOK time.Duration
	for key := range keys {
		var a answer
		for range 100 {
			if a = create(key); a.status != http.StatusServiceUnavailable {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if a.status != http.StatusCreated {
			t.Errorf("create %s after the heal: %d", key, a.status)
		}
		if firstOK == 0 {
			firstOK = time.Since(healedAt)
		}
	}
	if a := send(http.MethodGet, resource+"company", "", "Authorization: "+auth); a.status != http.StatusOK {
		t.Errorf("after the heal: %d", a.status)
	}
	db := s.openDB(t)
	defer func() { _ = db.Close() }()
	var stored int
	if err := db.NewRaw("SELECT count(*) FROM customers WHERE company_id = ?", c.ID).Scan(context.Background(), &stored); err != nil {
		t.Fatal(err)
	}
	if stored != len(keys)+1 {
		t.Errorf("%d customers stored for %d keys (+1 before the cut): a key made two, or one was lost", stored, len(keys))
	}
	t.Logf("partition of PostgreSQL and Redis (packets dropped) for %s: /readyz 503 after %s; %d requests, answers %v, the slowest %s (deadline %s); "+
		"healed: /readyz 200 after %s, first write %s after",
		healedAt.Sub(cutAt).Round(100*time.Millisecond), readyDown.Round(time.Millisecond), len(answers), statuses, slowest.Round(time.Millisecond),
		deadline, readyUp.Round(time.Millisecond), firstOK.Round(time.Millisecond))
}

// eventuallyStatus waits until url answers want and says how long that took.
func eventuallyStatus(t *testing.T, url string, want int, d time.Duration) time.Duration {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	return eventually(t, d, fmt.Sprintf("%s answering %d", url, want), func() bool {
		resp, err := client.Get(url)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == want
	})
}
