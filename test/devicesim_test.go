// Helpers: a simulated GDT device and the round trip's practice.

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain/gdt"
)

// simDevice behaves as device programs do (docs/contract.md §14): it
// looks for its order file in its order folder, reads it, deletes it (or,
// reading only when its program starts, leaves it), examines for a while
// and writes a 6310 naming a PDF (6305) into its result folder, echoing the
// order's 8310 and 8314 or not, per variant. It types nothing: every
// patient field of its result comes from the order it read.
type simDevice struct {
	gdtID, praxisID string
	orderDir        string
	resultDir       string
	naming          string // receiver_sender, counter, fixed
	fixedName       string
	removes         bool // false: reads only when its program starts, never removes
	echo8310        bool
	echo8314        bool
	examine         time.Duration // how long an examination takes
	startEvery      time.Duration // a device that reads only on start "starts" this often
	pickup          time.Duration // a slow device: how long a file lies before it is read

	mu    sync.Mutex
	read  []readOrder // every order file read, in order
	most  int         // the most order files seen in the folder at once
	count int
}

// readOrder is one order file as the device read it.
type readOrder struct {
	File   string
	Record string
	UUID   string // 8314
	Number string // 8310
	Fields map[string]string
}

func (d *simDevice) isOrderFile(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	stem := d.gdtID + d.praxisID
	switch d.naming {
	case "fixed":
		return strings.EqualFold(name, d.fixedName)
	case "counter":
		return len(name) == len(stem)+4 && strings.EqualFold(name[:len(stem)], stem) && name[len(stem)] == '.' && allDigits(name[len(stem)+1:])
	}
	return strings.EqualFold(name, stem+".gdt")
}

func allDigits(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil && !strings.ContainsAny(s, "+-")
}

// run watches the order folder until ctx ends.
func (d *simDevice) run(ctx context.Context, t *testing.T) {
	last := time.Now()
	for ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		entries, err := os.ReadDir(d.orderDir)
		if err != nil {
			continue
		}
		var orders []string
		for _, e := range entries {
			if !e.IsDir() && d.isOrderFile(e.Name()) {
				orders = append(orders, e.Name())
			}
		}
		d.mu.Lock()
		d.most = max(d.most, len(orders))
		d.mu.Unlock()
		if len(orders) > 0 && d.pickup > 0 {
			time.Sleep(d.pickup)
		}
		if !d.removes {
			if time.Since(last) < d.startEvery || len(orders) == 0 {
				continue
			}
			last = time.Now() // the program starts: it reads what lies there now
		}
		for _, name := range orders { // a counter's names sort in the order written
			path := filepath.Join(d.orderDir, name)
			raw, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			f := gdt.Parse(raw)
			if len(f.Records) != 1 || len(f.Warnings) != 0 {
				t.Errorf("device %s read a broken order %s: %+v", d.gdtID, name, f)
				continue
			}
			if d.removes {
				if err := os.Remove(path); err != nil {
					t.Errorf("device %s: remove %s: %v", d.gdtID, name, err)
				}
			}
			r := f.Records[0]
			o := readOrder{File: name, Fields: map[string]string{}}
			for _, fl := range r.Fields {
				o.Fields[fl.ID] = fl.Value
			}
			o.Record, o.UUID, o.Number = o.Fields["8000"], o.Fields["8314"], o.Fields["8310"]
			d.mu.Lock()
			d.read = append(d.read, o)
			d.mu.Unlock()
			if o.Record == gdt.Examination {
				time.Sleep(d.examine)
				d.result(t, o)
			}
			if !d.removes {
				break
			}
		}
	}
}

// result writes the examination's 6310 and its PDF, the PDF first and the
// result under a temporary name, then renamed, as careful programs do.
func (d *simDevice) result(t *testing.T, o readOrder) {
	d.mu.Lock()
	d.count++
	n := d.count
	d.mu.Unlock()
	pdf := fmt.Sprintf("%s_%04d.pdf", d.gdtID, n)
	if err := os.WriteFile(filepath.Join(d.resultDir, pdf), pdfOfSize(2000+n), 0o600); err != nil {
		t.Error(err)
		return
	}
	fields := [][2]string{{"8000", "6310"}, {"8315", d.praxisID}, {"8316", d.gdtID}, {"3000", o.Fields["3000"]},
		{"3101", o.Fields["3101"]}, {"3102", o.Fields["3102"]}, {"3103", o.Fields["3103"]}}
	if d.echo8310 && o.Number != "" {
		fields = append(fields, [2]string{"8310", o.Number})
	}
	if d.echo8314 && o.UUID != "" {
		fields = append(fields, [2]string{"8314", o.UUID})
	}
	fields = append(fields, [2]string{"8402", o.Fields["8402"]}, [2]string{"6200", time.Now().Format("02012006")},
		[2]string{"6201", time.Now().Format("150405")}, [2]string{"6220", "Befund ohne Auffälligkeiten"}, [2]string{"6305", pdf})
	name := fmt.Sprintf("%s%s_%04d.gdt", d.praxisID, d.gdtID, n)
	tmp := filepath.Join(d.resultDir, "."+name+".tmp")
	if err := os.WriteFile(tmp, gdtRecord(fields...), 0o600); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(tmp, filepath.Join(d.resultDir, name)); err != nil {
		t.Error(err)
	}
}

// mostSeen is the most order files the device saw in its folder at once.
func (d *simDevice) mostSeen() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.most
}

func (d *simDevice) orders() []readOrder {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]readOrder(nil), d.read...)
}

// gdtPractice is a company with an integrator's token for the round trip.
type gdtPractice struct {
	s     *server
	c     company
	token string
}

func newGDTPractice(t *testing.T, s *server) gdtPractice {
	t.Helper()
	c := s.newCompany(t, 1<<30)
	cl := s.newClient(t, c, "customers:read customers:write devices:read devices:write device-orders:read device-orders:write files:read")
	return gdtPractice{s: s, c: c, token: s.tokenFor(t, cl)}
}

func (p gdtPractice) call(t *testing.T, method, path, body string, headers ...string) reply {
	t.Helper()
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	return p.s.request(t, method, "/api/oauth/v2/resource/"+path, contentType, body, append([]string{"Authorization: Bearer " + p.token}, headers...)...)
}

// must is call that expects status.
func (p gdtPractice) must(t *testing.T, status int, method, path, body string) map[string]any {
	t.Helper()
	r := p.call(t, method, path, body)
	if r.status != status {
		t.Fatalf("%s %s: %d %s", method, path, r.status, r.body)
	}
	return r.decode(t)
}

func (p gdtPractice) patient(t *testing.T, first, last string) int64 {
	t.Helper()
	out := p.must(t, http.StatusCreated, http.MethodPost, "customers",
		fmt.Sprintf(`{"first_name":%q,"last_name":%q,"birth_date":"1970-01-%02d","sex":"female"}`, first, last, 1+len(last)%28))
	return int64(out["id"].(float64))
}

// device registers a device and makes its credential: its id, client id and secret.
func (p gdtPractice) device(t *testing.T, body string) (id, clientID, secret string) {
	t.Helper()
	d := p.must(t, http.StatusCreated, http.MethodPost, "devices", body)
	id = d["id"].(string)
	cred := p.must(t, http.StatusOK, http.MethodPost, "devices/"+id+"/credential", "")
	return id, cred["client_id"].(string), cred["client_secret"].(string)
}

func (p gdtPractice) order(t *testing.T, patient int64, device, procedure string) string {
	t.Helper()
	o := p.must(t, http.StatusCreated, http.MethodPost, "device-orders",
		fmt.Sprintf(`{"customer_id":%d,"device_id":%q,"procedure":%q}`, patient, device, procedure))
	return o["id"].(string)
}

// list is the data of a page that must answer 200.
func (p gdtPractice) list(t *testing.T, path string) []any {
	t.Helper()
	return p.must(t, http.StatusOK, http.MethodGet, path, "")["data"].([]any)
}

func (p gdtPractice) getOrder(t *testing.T, id string) map[string]any {
	t.Helper()
	return p.must(t, http.StatusOK, http.MethodGet, "device-orders/"+id, "")
}

// bridgeDevice is one device in a bridge's configuration file.
type bridgeDevice struct {
	Name         string `json:"name"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	OrderDir     string `json:"order_dir"`
	ResultDir    string `json:"result_dir"`
}

// startDeviceBridge runs praxis-gdt-bridge for devices with a configuration file.
func startDeviceBridge(t *testing.T, url string, c company, state string, devices ...bridgeDevice) *bridge {
	t.Helper()
	cfg, _ := json.Marshal(map[string]any{"url": url, "company": c.ID, "state_dir": state, "devices": devices})
	path := filepath.Join(t.TempDir(), "bridge.json")
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return startBridgeArgs(t, "--config", path, "--rescan", "1s")
}
