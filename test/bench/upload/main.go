// Command upload is praxis's upload load test: it starts the built binary on
// the embedded defaults, sends concurrent 15 MiB uploads over loopback, and
// prints the throughput and the server's peak RSS next to the throughput of
// writing the same bytes straight to the same disk (with fsync, as the server
// does before it answers 200). Run it with `make bench`.
package main

import (
	"bytes"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/praxis-health/praxis/test/bench/benchserver"
)

func main() {
	binary := flag.String("binary", "bin/praxis", "the praxis binary")
	concurrency := flag.Int("concurrency", 16, "uploads in flight at once")
	rounds := flag.Int("rounds", 4, "how many times each uploader sends its file")
	size := flag.Int("size", 15<<20, "bytes per file")
	maxRSS := flag.Float64("max-rss-mb", 150, "target: peak server RSS in MB")
	minRatio := flag.Float64("min-ratio", 0.5, "target: upload MB/s over raw disk MB/s")
	flag.Parse()
	if err := run(*binary, *concurrency, *rounds, *size, *maxRSS, *minRatio); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(binary string, concurrency, rounds, size int, maxRSS, minRatio float64) error {
	dir, err := os.MkdirTemp("", "praxis-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	payload := make([]byte, size)
	_, _ = rand.Read(payload)
	copy(payload, "%PDF-1.7\n")
	total := float64(concurrency * rounds * size)

	srv, err := benchserver.Start(binary,
		"PRAXIS_DATABASE_URL=sqlite:"+filepath.Join(dir, "praxis.db"),
		"PRAXIS_BLOB_URL=file://"+filepath.Join(dir, "files"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	company, customer, err := seed(srv, int64(concurrency*rounds*size)*2)
	if err != nil {
		return err
	}
	idleRSS := srv.VM("VmRSS")

	body, contentType := multipartBody(payload)
	rawDir := filepath.Join(dir, "raw")
	if err := os.MkdirAll(rawDir, 0o750); err != nil {
		return err
	}
	// Rounds alternate between the two, so that drift in the disk's speed
	// (page cache, a neighbour's load) falls on both sides of the ratio alike.
	var uploadSecs, rawSecs float64
	var n int
	var mu sync.Mutex
	for range rounds {
		began := time.Now()
		if err := parallel(concurrency, 1, func() error { return upload(srv, company, customer, body, contentType) }); err != nil {
			return err
		}
		uploadSecs += time.Since(began).Seconds()

		began = time.Now()
		err := parallel(concurrency, 1, func() error {
			mu.Lock()
			n++
			name := filepath.Join(rawDir, strconv.Itoa(n))
			mu.Unlock()
			return writeSynced(name, payload)
		})
		if err != nil {
			return err
		}
		rawSecs += time.Since(began).Seconds()
	}
	peakRSS := srv.VM("VmHWM")

	uploadMBs, rawMBs := total/uploadSecs/1e6, total/rawSecs/1e6
	ratio := uploadMBs / rawMBs
	fmt.Printf("upload load: %d concurrent × %d rounds × %.1f MiB = %.0f MB\n", concurrency, rounds, float64(size)/(1<<20), total/1e6)
	fmt.Printf("  upload throughput (HTTP, sniff, SHA-256, fsync, SQLite): %8.1f MB/s\n", uploadMBs)
	fmt.Printf("  raw disk write of the same bytes (fsync each file):      %8.1f MB/s\n", rawMBs)
	fmt.Printf("  ratio upload / raw:                                      %8.2f   (target ≥ %.2f)\n", ratio, minRatio)
	fmt.Printf("  server RSS idle %.1f MB, peak during load %.1f MB           (target < %.0f MB)\n", idleRSS, peakRSS, maxRSS)
	var missed []string
	if peakRSS >= maxRSS {
		missed = append(missed, "peak RSS")
	}
	if ratio < minRatio {
		missed = append(missed, "throughput ratio")
	}
	if len(missed) > 0 {
		return fmt.Errorf("targets missed: %s", strings.Join(missed, ", "))
	}
	fmt.Println("  targets met")
	return nil
}

// parallel runs fn rounds times in each of n goroutines.
func parallel(n, rounds int, fn func() error) error {
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := fn(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func writeSynced(name string, data []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func seed(s *benchserver.Server, quota int64) (benchserver.Company, string, error) {
	c, err := s.NewCompany(quota)
	if err != nil {
		return c, "", err
	}
	var cust struct {
		ID int64 `json:"customer_id"`
	}
	if err := s.Admin(&cust, "admin", "customer", "create", "--company", c.ID, "--first-name", "B", "--last-name", "M", "--json"); err != nil {
		return c, "", err
	}
	return c, strconv.FormatInt(cust.ID, 10), nil
}

func multipartBody(payload []byte) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fw, _ := w.CreateFormFile("file", "befund.pdf")
	_, _ = fw.Write(payload)
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func upload(s *benchserver.Server, c benchserver.Company, customer string, body []byte, contentType string) error {
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/gdt/upload", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("x-gdt-company", c.ID)
	req.Header.Set("x-gdt-customer", customer)
	req.Header.Set("x-gdt-secret", c.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("upload: %d %s", resp.StatusCode, reply)
	}
	return nil
}
