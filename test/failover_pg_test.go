// Holds docs/contract.md §5 Operations, Failover: PostgreSQL with Patroni.

package test

import (
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/praxis-health/praxis/test/testenv"
)

// startPatroni is the failover cluster of testenv, stopped with the test
// (its folder, with the logs, kept when the test failed).
func startPatroni(t *testing.T) *testenv.Patroni {
	t.Helper()
	c, err := testenv.StartPatroni()
	if errors.Is(err, testenv.ErrPatroniMissing) {
		needTool(t, "patroni") // skips loudly, or fails under CI=true
		needTool(t, "etcd")
		if os.Geteuid() != 0 {
			t.Skip("the failover drill runs PostgreSQL as the postgres user: it needs root")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range c.Nodes {
				t.Logf("patroni %s (logs kept in %s):\n%s", n.Name, c.Dir, c.Log(n))
			}
			c.CloseKeeping()
			return
		}
		c.Close()
	})
	return c
}

// waitRole is Patroni.WaitRole that fails t.
func waitRole(t *testing.T, c *testenv.Patroni, n *testenv.PatroniNode, role string, d time.Duration) time.Duration {
	t.Helper()
	took, err := c.WaitRole(n, role, d)
	if err != nil {
		t.Fatal(err)
	}
	return took
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
	be := backend{"patroni", func(*testing.T) string { return cluster.URL() }, backends[1].redisURL}
	first := startServer(t, be, unlimitedRates)
	replicas := []*server{first, first.replica(t)}
	_, base := frontOf(t, replicas...)

	load := startMixedLoad(t, first, base, 90*time.Second, 4)
	time.Sleep(2 * time.Second)

	// A failover: the primary's Patroni and postmaster killed together.
	old, standby := cluster.Nodes[0], cluster.Nodes[1]
	killed := time.Since(load.start)
	cluster.Kill(old)
	cluster.KillPostmaster(old)
	leaderAfter := waitRole(t, cluster, standby, "primary", 90*time.Second)
	leader := killed + leaderAfter
	eventually(t, 30*time.Second, "a write after the failover", func() bool { return load.firstWriteAfter(leader) >= 0 })
	firstWrite := load.firstWriteAfter(leader)
	failoverGap := load.writeGap(killed - time.Second)

	// The old primary rejoins as a standby.
	if err := cluster.Start(old); err != nil {
		t.Fatal(err)
	}
	rejoined := waitRole(t, cluster, old, "replica", 120*time.Second)

	// A local restart: the new primary's postmaster alone killed; its
	// Patroni starts it again and keeps the leader key.
	time.Sleep(2 * time.Second)
	restartAt := time.Since(load.start)
	cluster.KillPostmaster(standby)
	time.Sleep(time.Second)
	waitRole(t, cluster, standby, "primary", 60*time.Second)
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
	load.verify(t, first)
}
