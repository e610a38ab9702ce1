package testenv

import (
	"errors"
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
	"time"
)

// Patroni is a PostgreSQL primary and a synchronous standby run by Debian's
// Patroni on a private etcd, on loopback ports of its own (never the
// machine's 5432), as the postgres user: the failover drill's and the
// failover benchmark's cluster.
type Patroni struct {
	Dir   string
	Nodes []*PatroniNode
	bin   string
	cred  *syscall.Credential
	etcd  *exec.Cmd
	logs  []*os.File
}

// PatroniNode is one member: its PostgreSQL and REST addresses.
type PatroniNode struct {
	Name, PGAddr, APIAddr string
	conf, data            string
	cmd                   *exec.Cmd
	exited                chan struct{}
}

// ErrPatroniMissing is a machine without root, Patroni, etcd or PostgreSQL.
var ErrPatroniMissing = errors.New("the failover cluster needs root and Debian's patroni, etcd-server and postgresql")

// StartPatroni bootstraps the cluster, extra lines under PostgreSQL's
// bootstrap parameters (e.g. "shared_preload_libraries: pg_stat_statements"),
// and waits until the standby is synchronous. Close stops it and removes it.
func StartPatroni(parameters ...string) (*Patroni, error) {
	patroni, errP := exec.LookPath("patroni")
	etcd, errE := exec.LookPath("etcd")
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if os.Geteuid() != 0 || errP != nil || errE != nil || len(bins) == 0 {
		return nil, ErrPatroniMissing
	}
	pgUser, err := user.Lookup("postgres")
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.Atoi(pgUser.Uid)
	gid, _ := strconv.Atoi(pgUser.Gid)
	dir, err := os.MkdirTemp("", "praxis-patroni-")
	if err != nil {
		return nil, err
	}
	c := &Patroni{Dir: dir, bin: patroni, cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	fail := func(err error) (*Patroni, error) {
		c.Close()
		return nil, err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return fail(err)
	}
	addrs, err := freeAddrs(6)
	if err != nil {
		return fail(err)
	}
	client, peer := addrs[0], addrs[1]
	c.etcd = exec.Command(etcd, "--name", "drill", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", "http://"+client, "--advertise-client-urls", "http://"+client,
		"--listen-peer-urls", "http://"+peer, "--initial-advertise-peer-urls", "http://"+peer,
		"--initial-cluster", "drill=http://"+peer)
	etcdLog, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return fail(err)
	}
	c.logs = append(c.logs, etcdLog)
	c.etcd.Stdout, c.etcd.Stderr = etcdLog, etcdLog
	if err := c.etcd.Start(); err != nil {
		return fail(err)
	}
	if err := WaitTCP(client, 20*time.Second); err != nil {
		return fail(err)
	}
	params := ""
	for _, p := range parameters {
		params += "\n        " + p
	}
	for i := range 2 {
		n := &PatroniNode{Name: fmt.Sprintf("node%d", i), PGAddr: addrs[2+2*i], APIAddr: addrs[3+2*i],
			data: filepath.Join(dir, fmt.Sprintf("node%d", i)), conf: filepath.Join(dir, fmt.Sprintf("node%d.yml", i))}
		_, pgPort, _ := net.SplitHostPort(n.PGAddr)
		// ttl 20 (Patroni's least): a dead leader's key expires within it.
		// wal_retrieve_retry_interval 500ms (PostgreSQL's default 5s): a
		// promotion that comes right after the standby's last failed try to
		// reach the dead primary first waits out the rest of that interval
		// (seen in CI: the leader key taken, writes refused 5 s longer).
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
        wal_retrieve_retry_interval: 500ms%s
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
`, n.Name, n.APIAddr, n.APIAddr, client, params, pgPort, pgPort, n.data, bins[len(bins)-1], filepath.Join(dir, n.Name+".pgpass"), dir)
		if err := os.WriteFile(n.conf, []byte(conf), 0o644); err != nil {
			return fail(err)
		}
		c.Nodes = append(c.Nodes, n)
		if err := c.Start(n); err != nil {
			return fail(err)
		}
		if i == 0 {
			if _, err := c.WaitRole(n, "primary", 90*time.Second); err != nil {
				return fail(err)
			}
		}
	}
	if _, err := c.WaitRole(c.Nodes[1], "sync", 90*time.Second); err != nil {
		return fail(err)
	}
	return c, nil
}

func freeAddrs(n int) ([]string, error) {
	var out []string
	var held []net.Listener
	defer func() {
		for _, ln := range held {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		held = append(held, ln)
		out = append(out, ln.Addr().String())
	}
	return out, nil
}

// Start runs n's Patroni as the postgres user, its output in a file: a
// pipe would hold Wait until the postmaster, which inherits it, exits.
func (c *Patroni) Start(n *PatroniNode) error {
	log, err := os.OpenFile(filepath.Join(c.Dir, n.Name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	n.cmd = exec.Command(c.bin, n.conf)
	n.cmd.Env = append(os.Environ(), "HOME="+c.Dir)
	n.cmd.Dir = c.Dir
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	n.cmd.Stdout, n.cmd.Stderr = log, log
	if err := n.cmd.Start(); err != nil {
		_ = log.Close()
		return err
	}
	n.exited = make(chan struct{})
	go func() { _ = n.cmd.Wait(); _ = log.Close(); close(n.exited) }()
	return nil
}

// Kill sends SIGKILL to n's Patroni and waits for it; its postmaster runs on.
func (c *Patroni) Kill(n *PatroniNode) {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	<-n.exited
}

// KillPostmaster sends SIGKILL to n's postmaster, if one runs, and answers its pid.
func (c *Patroni) KillPostmaster(n *PatroniNode) int {
	raw, err := os.ReadFile(filepath.Join(n.data, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return pid
}

// Is asks n's REST API whether it is role: primary, replica or sync.
func (c *Patroni) Is(n *PatroniNode, role string) bool {
	client := &http.Client{Timeout: time.Second}
	resp, err := client.Get("http://" + n.APIAddr + "/" + role)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// WaitRole waits until n is role and answers how long that took.
func (c *Patroni) WaitRole(n *PatroniNode, role string, d time.Duration) (time.Duration, error) {
	t0 := time.Now()
	for !c.Is(n, role) {
		if time.Since(t0) > d {
			return 0, fmt.Errorf("%s is not %s within %s:\n%s", n.Name, role, d, c.Log(n))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(t0), nil
}

// Log is the end of n's Patroni log.
func (c *Patroni) Log(n *PatroniNode) string {
	raw, _ := os.ReadFile(filepath.Join(c.Dir, n.Name+".log"))
	if len(raw) > 3000 {
		raw = raw[len(raw)-3000:]
	}
	return string(raw)
}

// URL is the multi-host URL praxis is given: every node, the one that takes writes.
func (c *Patroni) URL() string {
	hosts := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		hosts[i] = n.PGAddr
	}
	return "postgres://postgres:drill@" + strings.Join(hosts, ",") + "/postgres?sslmode=disable&target_session_attrs=read-write"
}

// Close stops every process and removes the cluster's folder.
func (c *Patroni) Close() { c.close(false) }

// CloseKeeping stops every process and leaves the folder.
func (c *Patroni) CloseKeeping() { c.close(true) }

func (c *Patroni) close(keep bool) {
	for _, n := range c.Nodes {
		c.Kill(n)
		c.KillPostmaster(n)
	}
	if c.etcd != nil && c.etcd.Process != nil {
		_ = c.etcd.Process.Kill()
		_ = c.etcd.Wait()
	}
	for _, f := range c.logs {
		_ = f.Close()
	}
	if !keep {
		_ = os.RemoveAll(c.Dir)
	}
}
