package test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-health/praxis/test/testenv"
)

// patroniCluster is a PostgreSQL primary and a synchronous standby run by
// Debian's Patroni on a private etcd, on loopback ports of the test's own
// (never the machine's 5432), as the postgres user.
type patroniCluster struct {
	t     *testing.T
	dir   string
	etcd  string
	nodes []*patroniNode
	cred  *syscall.Credential
}

type patroniNode struct {
	name, conf, data string
	pgAddr, apiAddr  string
	cmd              *exec.Cmd
	exited           chan struct{}
	log              *os.File // a file, not a pipe: the postmaster inherits it, and a pipe would hold Wait until it exits
}

func startPatroni(t *testing.T) *patroniCluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the failover drill runs PostgreSQL as the postgres user: it needs root")
	}
	patroni, etcd := needTool(t, "patroni"), needTool(t, "etcd")
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(bins) == 0 {
		needTool(t, "initdb")
	}
	pgUser, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(pgUser.Uid)
	gid, _ := strconv.Atoi(pgUser.Gid)
	dir, err := os.MkdirTemp("", "praxis-patroni-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(dir)
		}
	})
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	c := &patroniCluster{t: t, dir: dir, cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}

	// etcd, alone: the DCS Patroni keeps its leader key in (v3 API).
	client, peer := testenv.FreeAddr(t), testenv.FreeAddr(t)
	c.etcd = client
	etcdLog := &testenv.SyncBuffer{}
	cmd := exec.Command(etcd, "--name", "drill", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", "http://"+client, "--advertise-client-urls", "http://"+client,
		"--listen-peer-urls", "http://"+peer, "--initial-advertise-peer-urls", "http://"+peer,
		"--initial-cluster", "drill=http://"+peer)
	cmd.Stdout, cmd.Stderr = etcdLog, etcdLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(process{cmd}.kill)
	waitForPort(t, client)

	for i := range 2 {
		n := &patroniNode{name: fmt.Sprintf("node%d", i), pgAddr: testenv.FreeAddr(t), apiAddr: testenv.FreeAddr(t),
			data: filepath.Join(dir, fmt.Sprintf("node%d", i)), conf: filepath.Join(dir, fmt.Sprintf("node%d.yml", i))}
		_, pgPort, _ := net.SplitHostPort(n.pgAddr)
		// ttl 20 (Patroni's least): a dead leader's key expires within it.
		conf := fmt.Sprintf(`scope: praxis-drill
name: %s
restapi:
  listen: %s
  connect_address: %s
etcd3:
  host: %s
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 2
    retry_timeout: 5
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: "on"
  initdb:
  - encoding: UTF8
  pg_hba:
  - local all all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:%s
  connect_address: 127.0.0.1:%s
  data_dir: %s
  bin_dir: %s
  pgpass: %s
  authentication:
    superuser: {username: postgres, password: drill}
    replication: {username: replicator, password: drill}
    rewind: {username: postgres, password: drill}
  parameters:
    unix_socket_directories: %s
`, n.name, n.apiAddr, n.apiAddr, client, pgPort, pgPort, n.data, bins[len(bins)-1], filepath.Join(dir, n.name+".pgpass"), dir)
		if err := os.WriteFile(n.conf, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, n)
		c.start(n, patroni)
		if i == 0 {
			c.waitRole(n, "primary", 90*time.Second)
		}
	}
	c.waitRole(c.nodes[1], "sync", 90*time.Second)
	return c
}

// start runs node's Patroni as the postgres user.
func (c *patroniCluster) start(n *patroniNode, patroni string) {
	c.t.Helper()
	logFile, err := os.OpenFile(filepath.Join(c.dir, n.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	n.log = logFile
	n.cmd = exec.Command(patroni, n.conf)
	n.cmd.Env = append(os.Environ(), "HOME="+c.dir)
	n.cmd.Dir = c.dir
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	if err := n.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	n.exited = make(chan struct{})
	go func() { _ = n.cmd.Wait(); _ = logFile.Close(); close(n.exited) }()
	c.t.Cleanup(func() {
		_ = n.cmd.Process.Kill()
		<-n.exited
		c.killPostmaster(n) // Patroni killed leaves its postmaster running
		if c.t.Failed() {
			c.t.Logf("patroni %s:\n%s", n.name, c.logOf(n))
		}
	})
}

// logOf is the end of node's Patroni log.
func (c *patroniCluster) logOf(n *patroniNode) string {
	raw, _ := os.ReadFile(filepath.Join(c.dir, n.name+".log"))
	if len(raw) > 3000 {
		raw = raw[len(raw)-3000:]
	}
	return string(raw)
}

// role asks node's REST API: primary, replica or sync answer 200 when the
// node is that.
func (c *patroniCluster) is(n *patroniNode, role string) bool {
	client := &http.Client{Timeout: time.Second}
	resp, err := client.Get("http://" + n.apiAddr + "/" + role)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (c *patroniCluster) waitRole(n *patroniNode, role string, d time.Duration) time.Duration {
	c.t.Helper()
	t0 := time.Now()
	for !c.is(n, role) {
		if time.Since(t0) > d {
			c.t.Fatalf("%s is not %s within %s:\n%s", n.name, role, d, c.logOf(n))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(t0)
}

// killPostmaster sends SIGKILL to node's postmaster, if one runs.
func (c *patroniCluster) killPostmaster(n *patroniNode) {
	raw, err := os.ReadFile(filepath.Join(n.data, "postmaster.pid"))
	if err != nil {
		return
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && pid > 0 {
		err := syscall.Kill(pid, syscall.SIGKILL)
		c.t.Logf("kill -9 of %s's postmaster %d: %v", n.name, pid, err)
	}
}

// url is the multi-host URL praxis is given: both nodes, the one that
// takes writes.
func (c *patroniCluster) url() string {
	hosts := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		hosts[i] = n.pgAddr
	}
	return "postgres://postgres:drill@" + strings.Join(hosts, ",") + "/postgres?sslmode=disable&target_session_attrs=read-write"
}

// TestPostgresFailoverLosesNothing: two replicas of praxis on a Patroni
// cluster (a primary and a synchronous standby) behind a balancer that
// follows /readyz, under a steady mixed load whose writes carry an
// Idempotency-Key. The primary's Patroni and postmaster are killed
// together (a failover), the old primary is started again and rejoins;
// then the new primary's postmaster alone is killed (Patroni restarts it).
// Every create and upload answered 2xx is there afterwards, none twice; no
// answer is a 500; writes resume within 3 s of the new leader.
func TestPostgresFailoverLosesNothing(t *testing.T) {
	t.Parallel()
	cluster := startPatroni(t)
	patroni, _ := exec.LookPath("patroni")
	be := backend{"patroni", func(*testing.T) string { return cluster.url() }, backends[1].redisURL}
	first := startServer(t, be, unlimitedRates)
	replicas := []*server{first, first.replica(t)}
	_, base := frontOf(t, replicas...)

	p := newPractice(t, first)
	cl := first.newClient(t, p.company, "company:read")
	roomy := first.newCompany(t, 1<<30)
	roomyCustomer := first.newCustomer(t, roomy)
	roomyAuth := "Authorization: Bearer " + first.tokenFor(t, first.newClient(t, roomy, ""))
	load := startMixedLoad(t, base, 90*time.Second, 4, p, roomy, roomyCustomer, cl)
	time.Sleep(2 * time.Second)

	// A failover: the primary's Patroni and postmaster killed together.
	old, standby := cluster.nodes[0], cluster.nodes[1]
	killed := time.Since(load.start)
	_ = old.cmd.Process.Kill()
	<-old.exited
	cluster.killPostmaster(old)
	leaderAfter := cluster.waitRole(standby, "primary", 90*time.Second)
	leader := killed + leaderAfter
	eventually(t, 30*time.Second, "a write after the failover", func() bool { return load.firstWriteAfter(leader) >= 0 })
	firstWrite := load.firstWriteAfter(leader)
	failoverGap := load.writeGap(killed - time.Second)

	// The old primary rejoins as a standby.
	cluster.start(old, patroni)
	rejoined := cluster.waitRole(old, "replica", 120*time.Second)

	// A local restart: the new primary's postmaster alone killed; its
	// Patroni starts it again and keeps the leader key.
	time.Sleep(2 * time.Second)
	restartAt := time.Since(load.start)
	cluster.killPostmaster(standby)
	time.Sleep(time.Second)
	cluster.waitRole(standby, "primary", 60*time.Second)
	eventually(t, 30*time.Second, "a write after the restart", func() bool { return load.firstWriteAfter(restartAt+time.Second) >= 0 })
	restartGap := load.writeGap(restartAt - time.Second)
	time.Sleep(2 * time.Second)
	load.halt()

	t.Logf("PostgreSQL failover drill: new leader %s after the kill, first write %s after the new leader, write gap %s; "+
		"old primary rejoined in %s; local restart write gap %s; %s",
		leaderAfter.Round(time.Millisecond), firstWrite.Round(time.Millisecond), failoverGap.Round(time.Millisecond),
		rejoined.Round(time.Millisecond), restartGap.Round(time.Millisecond), load)
	if n := load.statuses[http.StatusInternalServerError]; n > 0 {
		t.Errorf("%d answers were 500", n)
	}
	if firstWrite > 3*time.Second {
		t.Errorf("the first write came %s after the new leader, want within 3 s", firstWrite)
	}
	load.verify(t, first, p, roomy, roomyAuth, 1)
}
