// Holds docs/contract.md §14 The GDT round trip, end to end.

package test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// threeDevices registers the round trip's three devices: an ECG on GDT 2.1
// that wants receiver+sender names and shares one folder with its results
// (echoes 8310), a spirometer on 2.1 with a fixed export.gdt (echoes
// nothing: matched by patient and procedure), an ultrasound on 3.0 with a
// counter (echoes 8314).
func threeDevices(t *testing.T, p gdtPractice, root string) ([]*simDevice, []string, []bridgeDevice) {
	t.Helper()
	specs := []struct {
		body string
		sim  *simDevice
	}{
		{`{"name":"ECG","gdt_id":"EKG1","praxis_gdt_id":"PRAX","procedures":[{"code":"EKG04","name":"Resting ECG"}]}`,
			&simDevice{gdtID: "EKG1", praxisID: "PRAX", naming: "receiver_sender", removes: true, echo8310: true}},
		{`{"name":"Spiro","gdt_id":"SPIRO","praxis_gdt_id":"PRAX","file_naming":"fixed","fixed_name":"export.gdt","procedures":[{"code":"LUFU","name":"Spirometry"}]}`,
			&simDevice{gdtID: "SPIRO", praxisID: "PRAX", naming: "fixed", fixedName: "export.gdt", removes: true}},
		{`{"name":"Sono","gdt_id":"SONO3","praxis_gdt_id":"PRAX","gdt_version":"3.0","file_naming":"counter","procedures":[{"code":"SONO01","name":"Abdomen"}]}`,
			&simDevice{gdtID: "SONO3", praxisID: "PRAX", naming: "counter", removes: true, echo8314: true}},
	}
	var sims []*simDevice
	var ids []string
	var cfg []bridgeDevice
	for i, spec := range specs {
		id, clientID, secret := p.device(t, spec.body)
		sim := spec.sim
		sim.orderDir = filepath.Join(root, sim.gdtID, "orders")
		sim.resultDir = sim.orderDir
		if i > 0 { // the first shares one folder for orders and results
			sim.resultDir = filepath.Join(root, sim.gdtID, "results")
		}
		for _, d := range []string{sim.orderDir, sim.resultDir} {
			if err := os.MkdirAll(d, 0o750); err != nil {
				t.Fatal(err)
			}
		}
		sim.examine = 100 * time.Millisecond
		sims = append(sims, sim)
		ids = append(ids, id)
		cfg = append(cfg, bridgeDevice{Name: sim.gdtID, ClientID: clientID, ClientSecret: secret, OrderDir: sim.orderDir, ResultDir: sim.resultDir})
	}
	return sims, ids, cfg
}

var procedures = []string{"EKG04", "LUFU", "SONO01"}

// TestGDTRoundTrip: 50 orders on three devices go out as files, the devices
// (which type nothing) answer, and 50 results come back matched to their
// orders, each under the order's patient.
func TestGDTRoundTrip(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, unlimitedRates)
		p := newGDTPractice(t, s)
		root := t.TempDir()
		sims, devices, cfg := threeDevices(t, p, root)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		for _, sim := range sims {
			go sim.run(ctx, t)
		}
		type placed struct {
			id      string
			patient int64
			device  int
		}
		var orders []placed
		for i := range 50 {
			patient := p.patient(t, "Anna", fmt.Sprintf("Patient%02d", i))
			d := i % 3
			orders = append(orders, placed{id: p.order(t, patient, devices[d], procedures[d]), patient: patient, device: d})
		}
		startDeviceBridge(t, s.url, p.c, filepath.Join(root, "state"), cfg...)
		eventually(t, 3*time.Minute, "50 orders done", func() bool {
			return len(p.list(t, "device-orders?status=done&limit=100")) == 50
		})
		eventually(t, 30*time.Second, "every order reported taken", func() bool {
			for _, o := range p.list(t, "device-orders?status=done&limit=100") {
				if o.(map[string]any)["taken_at"] == nil {
					return false
				}
			}
			return true
		})
		for _, o := range orders {
			got := p.getOrder(t, o.id)
			files := got["result_file_ids"].([]any)
			if len(files) != 2 {
				t.Errorf("order %v: result files %v, want the result and its PDF", got["number"], files)
				continue
			}
			for _, f := range files {
				file := p.must(t, http.StatusOK, http.MethodGet, "files/"+f.(string), "")
				if int64(file["customer_id"].(float64)) != o.patient || file["device_order_id"] != o.id || file["order_match"] != "matched" {
					t.Errorf("order %v: file %v is %v's, order %v, %v", got["number"], f, file["customer_id"], file["device_order_id"], file["order_match"])
				}
			}
			if got["written_at"] == nil || got["taken_at"] == nil {
				t.Errorf("order %v: written %v, taken %v", got["number"], got["written_at"], got["taken_at"])
			}
		}
		if n := len(p.list(t, "files?order_match=unmatched")); n != 0 {
			t.Errorf("%d files not matched", n)
		}
		read := 0
		for i, sim := range sims {
			for _, o := range sim.orders() {
				read++
				if o.Fields["8315"] != sim.gdtID || o.Fields["8316"] != "PRAX" {
					t.Errorf("device %d read an order for %s from %s", i, o.Fields["8315"], o.Fields["8316"])
				}
			}
			if sim.mostSeen() > 1 && sim.naming != "counter" {
				t.Errorf("device %s saw %d order files at once", sim.gdtID, sim.mostSeen())
			}
		}
		if read != 50 {
			t.Errorf("the devices read %d order files, want each of 50 once", read)
		}
		if leftovers := strings.Join(orderFiles(t, sims), ", "); leftovers != "" {
			t.Errorf("files left in the order folders: %s", leftovers)
		}
	})
}

// orderFiles lists what is left in the devices' order folders besides the bridge's own folders.
func orderFiles(t *testing.T, sims []*simDevice) []string {
	t.Helper()
	var out []string
	for _, sim := range sims {
		entries, err := os.ReadDir(sim.orderDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() && sim.isOrderFile(e.Name()) {
				out = append(out, filepath.Join(sim.gdtID, e.Name()))
			}
		}
	}
	return out
}
