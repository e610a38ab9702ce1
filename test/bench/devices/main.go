// Command devices measures the GDT round trip's way out (docs/contract.md
// §14): an order made through the API until its file lies in the device's
// folder. It starts the built server on PostgreSQL (and Redis), registers
// 100 devices with their own credentials, runs one praxis-gdt-bridge for
// all of them (100 long polls on one server), and stands in for the
// devices: each takes its file away as soon as it appears. Orders are
// made at a steady rate on random devices; the figures are the delay's
// p50 and p95 (target p95 ≤ 2 s), first with the orders made on the
// replica the bridge polls, then on a second replica of the same
// deployment (its long polls are not woken there: they look again each second).
//
// Run it with `make bench`; it exits non-zero when the target is missed.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/praxis-health/praxis/test/bench/benchserver"
)

func main() {
	target := benchserver.TargetFlags()
	devices := flag.Int("devices", 100, "devices on the server, all served by one bridge")
	orders := flag.Int("orders", 400, "orders made")
	rate := flag.Float64("rate", 20, "orders made per second")
	maxP95 := flag.Duration("max-p95", 2*time.Second, "target: the delay's 95th percentile")
	flag.Parse()
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *devices, *orders, *rate, *maxP95); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type api struct {
	c     *http.Client
	base  string
	token string
}

func (a api) post(path, body string, out any) error {
	req, err := http.NewRequest(http.MethodPost, a.base+"/api/oauth/v2/resource/"+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.c.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

type device struct {
	ID, ClientID, Secret, Dir string
}

func run(binary, pgURL, redisURL string, n, orders int, rate float64, maxP95 time.Duration) error {
	srv, err := benchserver.OnPostgres(binary, pgURL, redisURL, "PRAXIS_RATE_LIMITS=basic=1000000/s,pro=1000000/s,enterprise=1000000/s")
	if err != nil {
		return err
	}
	defer srv.Close()
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	in, err := srv.NewIntegrator(httpc, 1<<30, "customers:write devices:write device-orders:write device-orders:read")
	if err != nil {
		return err
	}
	company := in.Company
	a := api{c: httpc, base: srv.URL, token: in.Token}
	var patients []int64
	for i := range 50 {
		var c struct{ ID int64 }
		if err := a.post("customers", fmt.Sprintf(`{"first_name":"Anna","last_name":"Berger %d","birth_date":"1980-02-29"}`, i), &c); err != nil {
			return err
		}
		patients = append(patients, c.ID)
	}
	root, err := os.MkdirTemp("", "praxis-bench-devices-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(root) }()
	devs := make([]device, n)
	var cfg []map[string]string
	for i := range devs {
		var d struct{ ID string }
		if err := a.post("devices", fmt.Sprintf(`{"name":"Device %d","gdt_id":"DEV%d","praxis_gdt_id":"PRAX","procedures":[{"code":"X1","name":"Exam"}]}`, i, i), &d); err != nil {
			return err
		}
		var cred struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := a.post("devices/"+d.ID+"/credential", "", &cred); err != nil {
			return err
		}
		dir := filepath.Join(root, fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
		devs[i] = device{ID: d.ID, ClientID: cred.ClientID, Secret: cred.ClientSecret, Dir: dir}
		cfg = append(cfg, map[string]string{"name": fmt.Sprint(i), "client_id": cred.ClientID, "client_secret": cred.ClientSecret,
			"order_dir": dir, "result_dir": dir})
	}
	config, _ := json.Marshal(map[string]any{"url": srv.URL, "company": company.ID, "state_dir": filepath.Join(root, "state"), "devices": cfg})
	cfgPath := filepath.Join(root, "bridge.json")
	if err := os.WriteFile(cfgPath, config, 0o600); err != nil {
		return err
	}
	bridge := exec.Command(filepath.Join(filepath.Dir(binary), "praxis-gdt-bridge"), "--config", cfgPath, "--log", filepath.Join(root, "bridge.log"))
	if err := bridge.Start(); err != nil {
		return err
	}
	defer func() { _ = bridge.Process.Kill(); _, _ = bridge.Process.Wait() }()

	other, err := srv.Replica("")
	if err != nil {
		return err
	}
	defer other.Stop()

	// The devices: each takes its file away as soon as it is there.
	var mu sync.Mutex
	made := map[string]time.Time{}  // an order's number (8310) → when its create was sent
	early := map[string]time.Time{} // files seen before their create's answer was read
	var delays []time.Duration
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, d := range devs {
		wg.Go(func() { watch(d, &mu, made, early, &delays, stop) })
	}
	time.Sleep(2 * time.Second) // the bridge signs in and starts polling
	failed := false
	for _, at := range []struct{ name, url string }{{"the replica the bridge polls", srv.URL}, {"another replica", other.URL}} {
		a.base = at.url
		d, err := measure(a, devs, patients, orders, rate, &mu, made, early, &delays)
		if err != nil {
			close(stop)
			return err
		}
		slices.Sort(d)
		p := func(q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
		fmt.Printf("devices: order created on %s → file in the device's folder, %d orders at %.0f/s on %d devices, one bridge (PostgreSQL):\n",
			at.name, orders, rate, len(devs))
		fmt.Printf("  p50 %s  p95 %s  p99 %s  max %s (target p95 ≤ %s)\n", p(0.5).Round(time.Millisecond), p(0.95).Round(time.Millisecond),
			p(0.99).Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond), maxP95)
		failed = failed || p(0.95) > maxP95
	}
	close(stop)
	wg.Wait()
	if failed {
		return fmt.Errorf("p95 over the target %s", maxP95)
	}
	return nil
}

// measure makes orders at rate on random devices and waits for every file.
func measure(a api, devs []device, patients []int64, orders int, rate float64, mu *sync.Mutex, made, early map[string]time.Time,
	delays *[]time.Duration) ([]time.Duration, error) {
	mu.Lock()
	*delays = (*delays)[:0]
	mu.Unlock()
	every := time.Duration(float64(time.Second) / rate)
	next := time.Now()
	for i := range orders {
		time.Sleep(time.Until(next))
		next = next.Add(every)
		d := devs[rand.IntN(len(devs))]
		var o struct{ Number int64 }
		start := time.Now()
		if err := a.post("device-orders", fmt.Sprintf(`{"customer_id":%d,"device_id":%q,"procedure":"X1"}`, patients[i%len(patients)], d.ID), &o); err != nil {
			return nil, err
		}
		mu.Lock()
		if seen, ok := early[fmt.Sprint(o.Number)]; ok {
			*delays = append(*delays, seen.Sub(start))
		} else {
			made[fmt.Sprint(o.Number)] = start
		}
		mu.Unlock()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		got := len(*delays)
		mu.Unlock()
		if got == orders {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d orders reached their folder within a minute", got, orders)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(*delays), nil
}

// watch polls one device's folder every 10 ms; an order file found is
// timed by its 8310 (the order's number), then removed, as the device would.
func watch(d device, mu *sync.Mutex, made, early map[string]time.Time, delays *[]time.Duration, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(10 * time.Millisecond):
		}
		entries, err := os.ReadDir(d.Dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(strings.ToLower(e.Name()), ".gdt") {
				continue
			}
			path := filepath.Join(d.Dir, e.Name())
			raw, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			seen := time.Now()
			id := field(raw, "8310")
			_ = os.Remove(path)
			mu.Lock()
			if start, ok := made[id]; ok {
				*delays = append(*delays, seen.Sub(start))
				delete(made, id)
			} else {
				early[id] = seen
			}
			mu.Unlock()
		}
	}
}

// field reads one GDT field of a record.
func field(raw []byte, id string) string {
	for _, line := range bytes.Split(raw, []byte("\r\n")) {
		if len(line) > 7 && string(line[3:7]) == id {
			return string(line[7:])
		}
	}
	return ""
}
