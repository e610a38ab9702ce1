// Holds docs/contract.md §5 Operations, Failover: Redis with Sentinel.

package test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/praxis-health/praxis/test/testenv"
)

// sentinelSet is a Redis master, one replica and three Sentinels watching
// them: the test's own. The replica replicates from the master's own address:
// a Sentinel that finds a replica replicating from any other address (a proxy
// in between) points it at the master once failover-timeout has passed, so a
// link cut in a proxy may already be bypassed when it is cut.
type sentinelSet struct {
	master, replica   process
	masterAddr        string
	replicaAddr       string
	deadEnd           string // an address that refuses every connection
	sentinels         []string
	masterName        string
	masterC, replicaC *redis.Client
}

func startSentinelSet(t *testing.T) *sentinelSet {
	t.Helper()
	needTool(t, "redis-sentinel")
	set := &sentinelSet{masterName: "praxis"}
	set.master, set.masterAddr = startRedis(t)
	masterHost, masterPort, _ := net.SplitHostPort(set.masterAddr)
	set.replica, set.replicaAddr = startRedis(t, "--replicaof", masterHost, masterPort)
	deadEnd := newCuttable(t, set.masterAddr)
	deadEnd.cut() // before anything dials it: it never reaches the master
	set.deadEnd = deadEnd.ln.Addr().String()
	set.masterC = redis.NewClient(&redis.Options{Addr: set.masterAddr})
	set.replicaC = redis.NewClient(&redis.Options{Addr: set.replicaAddr})
	t.Cleanup(func() { _ = set.masterC.Close(); _ = set.replicaC.Close() })
	ctx := context.Background()
	eventually(t, 20*time.Second, "the replica in sync", func() bool {
		info, err := set.replicaC.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	dir := t.TempDir()
	for i := range 3 {
		addr := testenv.FreeAddr(t)
		_, port, _ := net.SplitHostPort(addr)
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
		// Down after 1 s without an answer; a failover that stalls is
		// retried after 20 s (twice failover-timeout), and a replica
		// found replicating from elsewhere is pointed back at the master
		// 10 s after a Sentinel noticed (cutReplica).
		text := fmt.Sprintf("port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %s 2\n"+
			"sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 10000\nsentinel parallel-syncs %s 1\n",
			port, dir, set.masterName, masterPort, set.masterName, set.masterName, set.masterName)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("redis-sentinel", conf)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p := process{cmd}
		t.Cleanup(p.kill)
		waitForPort(t, addr)
		set.sentinels = append(set.sentinels, addr)
	}
	s0 := redis.NewSentinelClient(&redis.Options{Addr: set.sentinels[0]})
	t.Cleanup(func() { _ = s0.Close() })
	eventually(t, 30*time.Second, "the Sentinels know the replica and each other", func() bool {
		replicas, err := s0.Replicas(ctx, set.masterName).Result()
		if err != nil || len(replicas) != 1 {
			return false
		}
		others, err := s0.Sentinels(ctx, set.masterName).Result()
		return err == nil && len(others) == 2
	})
	return set
}

// url is PRAXIS_REDIS_URL in its Sentinel form.
func (set *sentinelSet) url() string {
	u := "redis://" + set.sentinels[0] + "/0?master_name=" + set.masterName
	for _, s := range set.sentinels[1:] {
		u += "&addr=" + s
	}
	return u
}

// cutReplica parts the replica from the master: it is told to replicate from
// an address that refuses every connection, and keeps what it holds. The
// command closes its link to the master before it answers, so nothing the
// master is told afterwards reaches it. A Sentinel would point it back at
// the master only failover-timeout (10 s) after it next reads the replica's
// INFO — later than the drill kills the master (the figures say when).
func (set *sentinelSet) cutReplica(t *testing.T) {
	t.Helper()
	host, port, _ := net.SplitHostPort(set.deadEnd)
	if err := set.replicaC.ReplicaOf(context.Background(), host, port).Err(); err != nil {
		t.Fatal(err)
	}
}

// masterNow is the address the Sentinels give for the master.
func (set *sentinelSet) masterNow(t *testing.T) string {
	t.Helper()
	c := redis.NewSentinelClient(&redis.Options{Addr: set.sentinels[1]})
	defer func() { _ = c.Close() }()
	addr, err := c.GetMasterAddrByName(context.Background(), set.masterName).Result()
	if err != nil || len(addr) != 2 {
		return ""
	}
	return net.JoinHostPort(addr[0], addr[1])
}

// TestRedisFailoverKeepsRevocations: Redis replicates asynchronously, so a
// master killed right after a revocation can take the deletion with it. The
// drill makes that certain (the replica is parted from the master before the
// revocations) and kills the master under token traffic: the bearer check
// fails for a few seconds and only with 503; afterwards the revoked token,
// the revoked client's token and the signed-out session are refused
// although the promoted replica still holds them, and a token issued
// after the cut (lost with the master) is 401 and counted.
func TestRedisFailoverKeepsRevocations(t *testing.T) {
	t.Parallel()
	set := startSentinelSet(t)
	addr, site := settingsAddr(t)
	pg := backend{"postgres+sentinel", backends[1].databaseURL, func(*testing.T) string { return set.url() }}
	s := startServerAt(t, pg, addr, unlimitedRates, "PRAXIS_PUBLIC_URL="+site)
	c := s.newCompany(t, 1<<20)
	keeper, doomed := s.newClient(t, c, ""), s.newClient(t, c, "")
	kept, revoked, ofDoomed := s.tokenFor(t, keeper), s.tokenFor(t, keeper), s.tokenFor(t, doomed)

	// A member signed in to the settings (a passkey in a real browser).
	b := newBrowser(t, site, shotsDir(t, "redis-failover"))
	b.join(s.invite(t, c, site, "anna@praxis.example"))
	cookies, csrf := b.cookies(), b.csrf()
	if code := settingsPage(t, site, cookies); code != http.StatusOK {
		t.Fatalf("the settings answer %d while signed in", code)
	}

	ctx := context.Background()
	if n, err := set.masterC.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d replicas in step, %v", n, err)
	}
	set.cutReplica(t)
	cutAt := time.Now()
	// From here on the replica sees nothing the master is told.
	if r := s.request(t, http.MethodPost, "/api/oauth/v2/revoke", formType, form("token", revoked), basic(keeper)); r.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	s.praxis(t, nil, "admin", "client", "revoke", "--client-id", doomed.ID, "--json")
	if code := forge(t, site, "/settings/signout", cookies, url.Values{"_csrf": {csrf}}); code >= 400 {
		t.Fatalf("sign-out: %d", code)
	}
	lost := s.tokenFor(t, keeper)
	for _, tok := range []string{revoked, ofDoomed} {
		if r := s.getCompany(t, tok); r.status != http.StatusUnauthorized {
			t.Fatalf("before the failover a revoked token answers %d", r.status)
		}
	}

	// Token traffic: bearer checks with the kept token, new tokens.
	type tally struct{ ok, unavailable, other atomic.Int64 }
	var checks, issued tally
	var firstFail, lastFail atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second}
	t0 := time.Now()
	count := func(tl *tally, status int) {
		switch status {
		case http.StatusOK:
			tl.ok.Add(1)
			return
		case http.StatusServiceUnavailable:
			tl.unavailable.Add(1)
		default:
			tl.other.Add(1)
			t.Errorf("during the failover: %d", status)
		}
		at := int64(time.Since(t0))
		firstFail.CompareAndSwap(0, at)
		lastFail.Store(at)
	}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if w == 0 {
					req, _ := http.NewRequest(http.MethodPost, s.url+"/api/oauth/v2/token", strings.NewReader("grant_type=client_credentials"))
					req.Header.Set("Content-Type", formType)
					req.SetBasicAuth(keeper.ID, keeper.Secret)
					count(&issued, do(client, req))
					continue
				}
				req, _ := http.NewRequest(http.MethodGet, s.url+"/api/oauth/v2/resource/company", nil)
				req.Header.Set("Authorization", "Bearer "+kept)
				count(&checks, do(client, req))
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	killedAt := time.Since(t0)
	sinceCut := time.Since(cutAt)
	set.master.kill()
	eventually(t, 60*time.Second, "a new master", func() bool { return set.masterNow(t) == set.replicaAddr })
	promoted := time.Since(t0)
	// Until the bearer check has answered 200 for two seconds on end.
	eventually(t, 60*time.Second, "the bearer check back", func() bool {
		return time.Since(t0)-time.Duration(lastFail.Load()) > 2*time.Second
	})
	close(stop)
	wg.Wait()

	// The promoted master still holds what was revoked after the cut:
	// without the tombstones, it would be valid again.
	hash := sha256.Sum256([]byte(revoked))
	keys, err := set.replicaC.Keys(ctx, "*token:"+hex.EncodeToString(hash[:])).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Fatalf("the promoted replica holds %d keys of the revoked token: the drill did not lose the revocation", len(keys))
	}
	for what, tok := range map[string]string{"the revoked token": revoked, "the revoked client's token": ofDoomed} {
		if r := s.getCompany(t, tok); r.status != http.StatusUnauthorized {
			t.Errorf("after the failover %s answers %d, want 401", what, r.status)
		}
	}
	if code := settingsPage(t, site, cookies); code == http.StatusOK {
		t.Error("after the failover the signed-out session shows the settings again")
	}
	if r := s.getCompany(t, kept); r.status != http.StatusOK {
		t.Errorf("the kept token answers %d after the failover", r.status)
	}
	lostStatus := s.getCompany(t, lost).status
	if lostStatus != http.StatusUnauthorized && lostStatus != http.StatusOK {
		t.Errorf("the token issued after the cut answers %d", lostStatus)
	}
	if r := s.getCompany(t, s.tokenFor(t, keeper)); r.status != http.StatusOK {
		t.Errorf("a new token answers %d", r.status)
	}
	window := time.Duration(lastFail.Load() - firstFail.Load())
	if firstFail.Load() == 0 {
		window = 0
	}
	t.Logf("Redis failover: master killed %s after the replica was parted from it (%s into the traffic), replica promoted %s later; bearer checks %d ok, %d 503, %d other; tokens issued %d ok, %d 503, %d other; "+
		"failures within %s; the token issued after the cut answers %d (lost with the master: 401)",
		sinceCut.Round(time.Millisecond), killedAt.Round(time.Millisecond), (promoted - killedAt).Round(time.Millisecond), checks.ok.Load(), checks.unavailable.Load(), checks.other.Load(),
		issued.ok.Load(), issued.unavailable.Load(), issued.other.Load(), window.Round(time.Millisecond), lostStatus)
	if window > 15*time.Second {
		t.Errorf("the bearer check failed for %s, want a few seconds", window)
	}
}

// do sends req and answers its status, 0 when no answer came.
func do(client *http.Client, req *http.Request) int {
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// settingsPage is the status of the settings' first page with cookies,
// redirects not followed.
func settingsPage(t *testing.T, site, cookies string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, site+"/settings/", nil)
	req.Header.Set("Cookie", cookies)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 20 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}
