// Holds docs/contract.md §14 The GDT round trip: the bridge writing orders.

package test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// oneDevice registers a device and runs its simulator and a bridge for it.
func oneDevice(t *testing.T, p gdtPractice, url, body string, sim *simDevice) (string, bridgeDevice) {
	t.Helper()
	id, clientID, secret := p.device(t, body)
	root := t.TempDir()
	sim.orderDir, sim.resultDir = filepath.Join(root, "orders"), filepath.Join(root, "results")
	for _, d := range []string{sim.orderDir, sim.resultDir} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go sim.run(ctx, t)
	return id, bridgeDevice{Name: sim.gdtID, ClientID: clientID, ClientSecret: secret, OrderDir: sim.orderDir, ResultDir: sim.resultDir}
}

// numbers are the 8310s of the orders a device read, in the order read.
func numbers(orders []readOrder) []int {
	var out []int
	for _, o := range orders {
		n, _ := strconv.Atoi(o.Number)
		out = append(out, n)
	}
	return out
}

// TestSlowDeviceGetsOneFileAtATime: a device with a fixed file name that
// takes a second to pick each file up gets ten orders one after another,
// none written over another.
func TestSlowDeviceGetsOneFileAtATime(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, unlimitedRates)
		p := newGDTPractice(t, s)
		sim := &simDevice{gdtID: "SLOW", praxisID: "PRAX", naming: "fixed", fixedName: "export.gdt", removes: true, pickup: time.Second}
		device, cfg := oneDevice(t, p, s.url, `{"name":"Slow","gdt_id":"SLOW","praxis_gdt_id":"PRAX","file_naming":"fixed","fixed_name":"export.gdt",`+
			`"procedures":[{"code":"X1","name":"Exam"}]}`, sim)
		patient := p.patient(t, "Langsam", "Gerät")
		var want []int
		for range 10 {
			o := p.getOrder(t, p.order(t, patient, device, "X1"))
			want = append(want, int(o["number"].(float64)))
		}
		startDeviceBridge(t, s.url, p.c, filepath.Join(t.TempDir(), "state"), cfg)
		eventually(t, 90*time.Second, "ten orders read", func() bool { return len(sim.orders()) >= 10 })
		time.Sleep(1500 * time.Millisecond) // nothing more may come
		if got := numbers(sim.orders()); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the device read orders %v, want %v one after another", got, want)
		}
		if sim.mostSeen() != 1 {
			t.Errorf("%d order files at once, want one", sim.mostSeen())
		}
	})
}

// TestDeviceThatReadsOnStart: a device that never removes its order file
// and reads it only when its program starts has each new order replace the
// unread one: never two in its folder, the last order always the one there.
func TestDeviceThatReadsOnStart(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, unlimitedRates)
		p := newGDTPractice(t, s)
		sim := &simDevice{gdtID: "OLD", praxisID: "PRAX", naming: "receiver_sender", removes: false, startEvery: 1500 * time.Millisecond}
		device, cfg := oneDevice(t, p, s.url, `{"name":"Old","gdt_id":"OLD","praxis_gdt_id":"PRAX","removes_files":false,`+
			`"procedures":[{"code":"X1","name":"Exam"}]}`, sim)
		startDeviceBridge(t, s.url, p.c, filepath.Join(t.TempDir(), "state"), cfg)
		var last string
		for i := range 5 {
			patient := p.patient(t, "Start", fmt.Sprintf("Nr%d", i))
			last = p.order(t, patient, device, "X1")
			eventually(t, 30*time.Second, "the order written", func() bool { return p.getOrder(t, last)["status"] == "written" })
			time.Sleep(400 * time.Millisecond)
		}
		raw, err := os.ReadFile(filepath.Join(sim.orderDir, "OLDPRAX.gdt"))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint(p.getOrder(t, last)["number"]); !containsField(raw, "8310", want) {
			t.Errorf("the file holds %q, want the last order %s", raw, want)
		}
		if sim.mostSeen() != 1 {
			t.Errorf("%d order files at once, want one", sim.mostSeen())
		}
		if len(sim.orders()) == 0 {
			t.Error("the device never read an order at its starts")
		}
	})
}

func containsField(raw []byte, id, value string) bool {
	return bytes.Contains(raw, fmt.Appendf(nil, "%03d%s%s\r\n", len(value)+9, id, value))
}

// TestBridgeKilledWritesEveryOrderOnce: the bridge killed with SIGKILL at
// ten random moments while twenty orders go out and their results come
// back: every order is read by the device once, every result stored once.
func TestBridgeKilledWritesEveryOrderOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, unlimitedRates)
		p := newGDTPractice(t, s)
		// One file at a time, picked up after 300 ms: the kills fall while
		// orders go out, results come back and reports are on their way.
		sim := &simDevice{gdtID: "SONO", praxisID: "PRAX", naming: "receiver_sender", removes: true, echo8314: true,
			pickup: 300 * time.Millisecond, examine: 100 * time.Millisecond}
		device, cfg := oneDevice(t, p, s.url, `{"name":"Sono","gdt_id":"SONO","praxis_gdt_id":"PRAX","gdt_version":"3.0",`+
			`"procedures":[{"code":"S1","name":"Sono"}]}`, sim)
		var orders []string
		for i := range 20 {
			orders = append(orders, p.order(t, p.patient(t, "Kill", fmt.Sprintf("Nr%02d", i)), device, "S1"))
		}
		state := filepath.Join(t.TempDir(), "state")
		for i := range 10 {
			br := startDeviceBridge(t, s.url, p.c, state, cfg)
			time.Sleep(time.Duration(200+rand.IntN(1300)) * time.Millisecond)
			_ = br.cmd.Process.Signal(syscall.SIGKILL)
			<-br.exited // closed: the test's cleanup does not wait for it again
			t.Logf("kill %d after %d orders read", i+1, len(sim.orders()))
		}
		startDeviceBridge(t, s.url, p.c, state, cfg)
		took := eventually(t, 2*time.Minute, "every order done", func() bool {
			return len(p.list(t, "device-orders?status=done&limit=100")) == len(orders)
		})
		t.Logf("every order done %s after the last restart", took.Round(100*time.Millisecond))
		reads := map[string]int{}
		for _, o := range sim.orders() {
			reads[o.UUID]++
		}
		for _, id := range orders {
			if reads[id] != 1 {
				t.Errorf("order %s was read %d times", id, reads[id])
			}
			if files := p.getOrder(t, id)["result_file_ids"].([]any); len(files) != 2 {
				t.Errorf("order %s has result files %v, want its result and PDF once", id, files)
			}
		}
		if st := s.storageOf(t, p.c.ID); st.files != 2*int64(len(orders)) {
			t.Errorf("%d files stored, want %d", st.files, 2*len(orders))
		}
	})
}

// cuttable is a TCP proxy whose network can be cut: every connection is
// closed and new ones are refused until it is joined again.
type cuttable struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func newCuttable(t *testing.T, target string) *cuttable {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cuttable{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close() })
	go c.serve()
	return c
}

func (c *cuttable) url() string { return "http://" + c.ln.Addr().String() }

func (c *cuttable) serve() {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		down := c.down
		if !down {
			c.conns = append(c.conns, in)
		}
		c.mu.Unlock()
		if down {
			_ = in.Close()
			continue
		}
		out, err := net.Dial("tcp", c.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, out)
		c.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

func (c *cuttable) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = true
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.conns = nil
}

func (c *cuttable) join() {
	c.mu.Lock()
	c.down = false
	c.mu.Unlock()
}

// TestBridgeBackOnline: orders made while the practice is offline: the
// first is written within 60 s of the network's return, the rest follow in
// order as the device takes them.
func TestBridgeBackOnline(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, unlimitedRates)
		p := newGDTPractice(t, s)
		net := newCuttable(t, s.url[len("http://"):])
		sim := &simDevice{gdtID: "EKG", praxisID: "PRAX", naming: "receiver_sender", removes: true, echo8310: true}
		device, cfg := oneDevice(t, p, net.url(), `{"name":"ECG","gdt_id":"EKG","praxis_gdt_id":"PRAX","procedures":[{"code":"E1","name":"ECG"}]}`, sim)
		startDeviceBridge(t, net.url(), p.c, filepath.Join(t.TempDir(), "state"), cfg)
		patient := p.patient(t, "Offline", "Praxis")
		p.order(t, patient, device, "E1")
		eventually(t, 30*time.Second, "the first order read", func() bool { return len(sim.orders()) == 1 })
		net.cut()
		var want []int
		for range 3 {
			o := p.getOrder(t, p.order(t, patient, device, "E1"))
			want = append(want, int(o["number"].(float64)))
		}
		time.Sleep(12 * time.Second) // the bridge backs off: 1, 2, 4, 8 s
		net.join()
		delay := eventually(t, 60*time.Second, "the first waiting order written after the return", func() bool { return len(sim.orders()) >= 2 })
		t.Logf("first waiting order read %s after the network came back", delay.Round(100*time.Millisecond))
		eventually(t, 60*time.Second, "every waiting order read", func() bool { return len(sim.orders()) == 4 })
		if got := numbers(sim.orders())[1:]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("read %v after the return, want %v", got, want)
		}
	})
}
