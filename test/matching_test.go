// Holds docs/contract.md §14 The GDT round trip: results matched by order.

package test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
)

// TestResultsMatchTheirOrders: 200 results in shuffled order, uploaded
// four at a time with the company's secret (the sender, 8316, names the
// device): those that echo their order's 8314 or 8310 are matched to it,
// those that echo a constant 8310 or nothing are matched when their patient
// has exactly one open order of the device and procedure; every other one
// (two candidates, an echo that names another patient's or another
// device's order) is left unmatched, filed under its own patient. Not one
// result goes to a wrong order.
func TestResultsMatchTheirOrders(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, unlimitedRates)
		p := newGDTPractice(t, s)
		ecg, _, _ := p.device(t, `{"name":"ECG","gdt_id":"EKG1","procedures":[{"code":"EKG04","name":"Resting ECG"}]}`)
		spiro, _, _ := p.device(t, `{"name":"Spiro","gdt_id":"SPIRO","procedures":[{"code":"EKG04","name":"Also an ECG code"}]}`)
		_ = spiro
		type upload struct {
			patient int64
			fields  [][2]string
			want    string // the order it must match, "" for none
		}
		var uploads []upload
		result := func(patient int64, sender string, extra ...[2]string) [][2]string {
			f := [][2]string{{"8000", "6310"}, {"8316", sender}, {"3000", fmt.Sprint(patient)}}
			return append(append(f, extra...), [2]string{"8402", "EKG04"}, [2]string{"6200", "26112026"})
		}
		first := p.patient(t, "Erste", "Bestellung")
		firstOrder := p.order(t, first, ecg, "EKG04") // number 1: what a constant 8310 "1" names
		number := func(id string) string { return fmt.Sprint(p.getOrder(t, id)["number"]) }
		for i := range 200 {
			patient := p.patient(t, "Pat", fmt.Sprintf("Nr%03d", i))
			switch {
			case i < 80: // echoes its 8314
				o := p.order(t, patient, ecg, "EKG04")
				uploads = append(uploads, upload{patient, result(patient, "EKG1", [2]string{"8314", o}), o})
			case i < 120: // echoes its 8310
				o := p.order(t, patient, ecg, "EKG04")
				uploads = append(uploads, upload{patient, result(patient, "EKG1", [2]string{"8310", number(o)}), o})
			case i < 140: // a constant 8310: the one open order of its patient and procedure
				o := p.order(t, patient, ecg, "EKG04")
				uploads = append(uploads, upload{patient, result(patient, "EKG1", [2]string{"8310", "1"}), o})
			case i < 160: // two open orders: never chosen between
				p.order(t, patient, ecg, "EKG04")
				p.order(t, patient, ecg, "EKG04")
				uploads = append(uploads, upload{patient, result(patient, "EKG1"), ""})
			case i < 180: // echoes another patient's order, has none of its own
				uploads = append(uploads, upload{patient, result(patient, "EKG1", [2]string{"8314", firstOrder}), ""})
			default: // another device answers with an ECG order's number
				o := p.order(t, patient, ecg, "EKG04")
				uploads = append(uploads, upload{patient, result(patient, "SPIRO", [2]string{"8310", number(o)}), ""})
			}
		}
		rand.Shuffle(len(uploads), func(i, j int) { uploads[i], uploads[j] = uploads[j], uploads[i] })
		var mu sync.Mutex
		wrong, matched := 0, 0
		var wg sync.WaitGroup
		work := make(chan upload)
		for range 4 {
			wg.Go(func() {
				for u := range work {
					r := s.upload(t, "/api/gdt/upload", gdtHeaders(p.c, u.patient), filePart("result.gdt", gdtRecord(u.fields...)))
					if r.status != http.StatusOK || len(r.Files) != 1 {
						t.Errorf("upload: %d %+v", r.status, r)
						continue
					}
					f := r.Files[0]
					got := ""
					if f.DeviceOrderID != nil {
						got = *f.DeviceOrderID
					}
					state := "matched"
					if u.want == "" {
						state = "unmatched"
					}
					mu.Lock()
					if got != u.want || f.OrderMatch == nil || *f.OrderMatch != state {
						wrong++
						t.Errorf("patient %d (%v): matched %q (%v), want %q", u.patient, u.fields, got, f.OrderMatch, u.want)
					}
					if got != "" {
						matched++
					}
					mu.Unlock()
				}
			})
		}
		for _, u := range uploads {
			work <- u
		}
		close(work)
		wg.Wait()
		t.Logf("%d results: %d matched, %d left for staff, %d wrong", len(uploads), matched, len(uploads)-matched, wrong)
		if o := p.getOrder(t, firstOrder); o["status"] != "open" {
			t.Errorf("the order that 20 results of other patients named is %v", o["status"])
		}
	})
}
