// Command upload is praxis's upload load test: it starts the built binary on
// the embedded defaults, sends concurrent 15 MiB uploads over loopback, and
// prints the throughput and the server's peak RSS next to the throughput of
// writing the same bytes straight to the same disk (with fsync, as the server
// does before it answers 200). Run it with `make bench`.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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

	srv, err := start(binary, dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	company, customer, err := srv.seed(int64(concurrency*rounds*size) * 2)
	if err != nil {
		return err
	}
	idleRSS := vm(srv.cmd.Process.Pid, "VmRSS")

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
		if err := parallel(concurrency, 1, func() error { return srv.upload(company, customer, body, contentType) }); err != nil {
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
	peakRSS := vm(srv.cmd.Process.Pid, "VmHWM")

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

// vm reads a memory figure of a process from /proc, in MB.
func vm(pid int, field string) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024 / 1e6
		}
	}
	return -1
}

type server struct {
	url string
	env []string
	cmd *exec.Cmd
	bin string
}

func start(binary, dir string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{url: "http://" + addr, bin: binary}
	s.env = append(os.Environ(),
		"PRAXIS_HTTP_ADDR="+addr,
		"PRAXIS_DATABASE_URL=sqlite:"+filepath.Join(dir, "praxis.db"),
		"PRAXIS_BLOB_URL=file://"+filepath.Join(dir, "files"),
	)
	s.cmd = exec.Command(binary, "serve")
	s.cmd.Env = s.env
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(s.url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, nil
			}
		}
	}
	s.stop()
	return nil, fmt.Errorf("server did not become ready")
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
}

func (s *server) admin(out any, args ...string) error {
	cmd := exec.Command(s.bin, args...)
	cmd.Env = s.env
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("praxis %s: %w", strings.Join(args, " "), err)
	}
	return json.Unmarshal(raw, out)
}

type company struct {
	ID     string `json:"company_id"`
	Secret string `json:"upload_secret"`
}

func (s *server) seed(quota int64) (company, string, error) {
	var c company
	if err := s.admin(&c, "admin", "company", "create", "--name", "Bench", "--storage-quota", strconv.FormatInt(quota, 10), "--json"); err != nil {
		return c, "", err
	}
	var cust struct {
		ID int64 `json:"customer_id"`
	}
	if err := s.admin(&cust, "admin", "customer", "create", "--company", c.ID, "--first-name", "B", "--last-name", "M", "--json"); err != nil {
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

func (s *server) upload(c company, customer string, body []byte, contentType string) error {
	req, err := http.NewRequest(http.MethodPost, s.url+"/api/gdt/upload", bytes.NewReader(body))
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
