// Command exchange measures the operator's import and the Files download on
// the built binary, PostgreSQL and Redis, in one run:
//   - `praxis admin import` of a million NDJSON lines (notes of one patient):
//     lines/s and the importer's peak RSS (targets ≥ 10,000 lines/s, < 200 MB);
//   - `praxis admin company erase` of that practice afterwards: rows/s next
//     to the import's lines/s (target ≥ 1: ending a practice is not slower
//     than filling it), and how long its one transaction held the rows;
//   - `praxis admin company restore` of a practice of 100,000 notes, every
//     one changed since T, from a copy of its database at T: objects/s next
//     to the import of the same changes (target ≥ 0.5: the restore is that
//     import plus reading and comparing both sides);
//   - GET files/{id}/download of a 15 MiB file in MB/s next to reading the
//     same blob straight from disk (target ≥ 0.5 of it), and the server's RSS
//     while 16 downloads run at once (it must stay flat: bytes stream).
//
// Run it with `make bench`; it exits non-zero when a target is missed.
package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/bench/benchserver"
)

func main() {
	target := benchserver.TargetFlags()
	lines := flag.Int("lines", 1_000_000, "import lines")
	section := flag.String("section", "notes", "what the import's lines are: notes of one patient, customers (patients with names, birth dates and phone numbers: the search index written with them), or measurements of one patient (their observed rows written with them)")
	minLines := flag.Float64("min-lines-per-second", 10_000, "target: import lines/s")
	maxRSS := flag.Float64("max-import-rss-mb", 200, "target: the importer's peak RSS")
	minRatio := flag.Float64("min-download-ratio", 0.5, "target: download MB/s over reading the blob from disk")
	maxGrowth := flag.Float64("max-rss-growth-mb", 64, "target: server RSS growth under 16 parallel 15 MiB downloads")
	restoreObjects := flag.Int("restore-objects", 100_000, "notes of the practice restored (0: no restore)")
	minRestore := flag.Float64("min-restore-ratio", 0.5, "target: restored objects/s over the import's lines/s of the same changes")
	flag.Parse()
	if *section != "notes" && *section != "customers" && *section != "measurements" {
		fmt.Fprintln(os.Stderr, "bench: -section notes, customers or measurements")
		os.Exit(2)
	}
	if *restoreObjects > 0 {
		restored, imported, err := restoreRun(*target.Binary, *target.Postgres, *restoreObjects)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		fmt.Printf("restore of a practice's %d notes, each changed since T, from a copy of its database at T: %.0f objects/s; "+
			"the import of the same changes %.0f lines/s; ratio %.2f (target ≥ %.1f)\n", *restoreObjects, restored, imported, restored/imported, *minRestore)
		if restored/imported < *minRestore {
			fmt.Fprintln(os.Stderr, "bench: target missed")
			os.Exit(1)
		}
	}
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *section, *lines, *minLines, *maxRSS, *minRatio, *maxGrowth); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// restoreRun fills a practice of n notes on a database of its own with the
// admin commands alone (no server holds it open), copies the database
// whole as it is then (CREATE DATABASE … TEMPLATE: the side instance at T),
// changes every note with an import, and restores the practice from the
// copy: the restore's objects/s and the changing import's lines/s.
func restoreRun(binary, pgURL string, n int) (float64, float64, error) {
	dbURL, drop, err := benchserver.FreshDatabase(pgURL)
	if err != nil {
		return 0, 0, err
	}
	defer drop()
	dir, err := os.MkdirTemp("", "praxis-bench-restore-")
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	stores := benchserver.Offline(binary, "PRAXIS_DATABASE_URL="+dbURL, "PRAXIS_BLOB_URL=file://"+filepath.Join(dir, "files"), "PRAXIS_REDIS_URL=")
	company, err := stores.NewCompany(1 << 30)
	if err != nil {
		return 0, 0, err
	}
	customer, err := stores.NewCustomer(company.ID)
	if err != nil {
		return 0, 0, err
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = domain.NewObjectID()
	}
	notes := func(path, text string) error {
		f, err := os.Create(path) //nolint:gosec // the bench's own temporary file
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		for i, id := range ids {
			_, _ = fmt.Fprintf(w, `{"section":"notes","id":%q,"data":{"customer_id":%d,"noted_on":"2026-03-10","title":"Phone call","text":"%s (%d)."}}`+"\n", id, customer, text, i)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		return f.Close()
	}
	var report struct {
		Created map[string]int `json:"created"`
		Updated map[string]int `json:"updated"`
	}
	before, after := filepath.Join(dir, "before.ndjson"), filepath.Join(dir, "after.ndjson")
	if err := notes(before, "Patient called about the blood pressure readings"); err != nil {
		return 0, 0, err
	}
	if err := notes(after, "Changed by an integrator's bug"); err != nil {
		return 0, 0, err
	}
	if err := stores.Admin(&report, "admin", "import", "--company", company.ID, "--json", before); err != nil {
		return 0, 0, err
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return 0, 0, err
	}
	side := *u
	side.Path += "_at_t"
	admin := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(pgURL)))
	defer func() { _ = admin.Close() }()
	if _, err := admin.Exec("CREATE DATABASE " + strings.TrimPrefix(side.Path, "/") + " TEMPLATE " + strings.TrimPrefix(u.Path, "/")); err != nil {
		return 0, 0, fmt.Errorf("the copy at T: %w", err)
	}
	defer func() {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + strings.TrimPrefix(side.Path, "/") + " WITH (FORCE)")
	}()
	t0 := time.Now()
	if err := stores.Admin(&report, "admin", "import", "--company", company.ID, "--json", after); err != nil {
		return 0, 0, err
	}
	imported := float64(n) / time.Since(t0).Seconds()
	if report.Updated["notes"] != n {
		return 0, 0, fmt.Errorf("the changing import updated %v, want %d notes", report.Updated, n)
	}
	var restored struct {
		Reverted  map[string]int `json:"reverted"`
		Conflicts []any          `json:"conflicts"`
	}
	t0 = time.Now()
	if err := stores.Admin(&restored, "admin", "company", "restore", "--from", side.String(), "--company", company.ID, "--json"); err != nil {
		return 0, 0, err
	}
	rate := float64(n) / time.Since(t0).Seconds()
	if restored.Reverted["notes"] != n || len(restored.Conflicts) != 0 {
		return 0, 0, fmt.Errorf("the restore reverted %v with %d conflicts, want %d notes", restored.Reverted, len(restored.Conflicts), n)
	}
	return rate, imported, nil
}

func run(binary, pgURL, redisURL, section string, lines int, minLines, maxRSS, minRatio, maxGrowth float64) error {
	srv, err := benchserver.OnPostgres(binary, pgURL, redisURL)
	if err != nil {
		return err
	}
	defer srv.Close()
	dir := srv.Dir
	blobs := filepath.Join(dir, "files")
	company, err := srv.NewCompany(1 << 30)
	if err != nil {
		return err
	}
	customer, err := srv.NewCustomer(company.ID)
	if err != nil {
		return err
	}

	rate, rss := 0.0, 0.0
	if lines > 0 {
		if rate, rss, err = importRun(binary, srv.Server, company.ID, section, customer, dir, lines); err != nil {
			return err
		}
		fmt.Printf("import of %d lines of %s: %.0f lines/s (target ≥ %.0f); importer peak RSS %.0f MB (target < %.0f)\n", lines, section, rate, minLines, rss, maxRSS)
	}
	// The download.
	var client struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := srv.Admin(&client, "admin", "client", "create", "--company", company.ID, "--scopes", "files:read", "--json"); err != nil {
		return err
	}
	token, err := tokenFor(srv.URL, client.ID, client.Secret)
	if err != nil {
		return err
	}
	id, err := upload(srv.URL, company, customer)
	if err != nil {
		return err
	}
	blobPath := filepath.Join(blobs, company.ID, id)
	const size = 15 << 20
	rounds := 20
	diskRate, err := measure(rounds, size, func() (int64, error) {
		f, err := os.Open(blobPath)
		if err != nil {
			return 0, err
		}
		defer func() { _ = f.Close() }()
		return io.Copy(io.Discard, f)
	})
	if err != nil {
		return err
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	get := func() (int64, error) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/oauth/v2/resource/files/"+id+"/download", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := httpc.Do(req)
		if err != nil {
			return 0, err
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("download: %d", resp.StatusCode)
		}
		return io.Copy(io.Discard, resp.Body)
	}
	downRate, err := measure(rounds, size, get)
	if err != nil {
		return err
	}
	tcpRate, err := rawTCPRate(blobPath, rounds, size)
	if err != nil {
		return err
	}
	ratio := downRate / diskRate
	fmt.Printf("15 MiB download: %.0f MB/s; reading the blob from disk (page cache): %.0f MB/s; ratio %.2f (target ≥ %.1f)\n", downRate, diskRate, ratio, minRatio)
	fmt.Printf("  the same file sent raw over loopback TCP (sendfile, no HTTP): %.0f MB/s; download / raw TCP %.2f\n", tcpRate, downRate/tcpRate)

	before := srv.VM("VmRSS")
	peak := before
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				peak = max(peak, srv.VM("VmRSS"))
			}
		}
	}()
	for range 16 {
		wg.Go(func() {
			for range 4 {
				if _, err := get(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	growth := peak - before
	fmt.Printf("server RSS under 16 parallel downloads (64 × 15 MiB): %.0f MB before, %.0f MB peak, growth %.0f MB (target < %.0f)\n",
		before, peak, growth, maxGrowth)
	eraseRatio := 0.0
	if lines > 0 {
		erased, elapsed, err := eraseRun(srv, company.ID)
		if err != nil {
			return err
		}
		eraseRatio = float64(erased) / elapsed.Seconds() / rate
		fmt.Printf("erasure of the practice afterwards: %d rows and objects in %.1f s, %.0f rows/s; over the import's lines/s %.2f (target ≥ 1)\n",
			erased, elapsed.Seconds(), float64(erased)/elapsed.Seconds(), eraseRatio)
	}
	if lines > 0 && (rate < minLines || rss >= maxRSS || eraseRatio < 1) || ratio < minRatio || growth >= maxGrowth {
		return fmt.Errorf("target missed")
	}
	return nil
}

// eraseRun erases the company with the built binary: the rows it deleted
// and the time the command took.
func eraseRun(srv *benchserver.Deployment, company string) (int64, time.Duration, error) {
	var report struct {
		Rows    int64 `json:"rows_erased"`
		Objects int64 `json:"objects_erased"`
	}
	t0 := time.Now()
	if err := srv.Admin(&report, "admin", "company", "erase", "--company", company, "--confirm", company, "--by", "bench", "--json"); err != nil {
		return 0, 0, fmt.Errorf("erase: %w", err)
	}
	return report.Rows + report.Objects, time.Since(t0), nil
}

// importRun imports lines of section (notes of one patient, or customers)
// with the built binary: lines/s and its peak RSS in MB.
func importRun(binary string, srv *benchserver.Server, company, section string, customer int64, dir string, lines int) (float64, float64, error) {
	path := filepath.Join(dir, "import.ndjson")
	if err := writeImport(path, section, customer, lines); err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(binary, "admin", "import", "--company", company, "--json", path)
	cmd.Env = srv.Env
	cmd.Stderr = os.Stderr
	t0 := time.Now()
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("import: %w", err)
	}
	elapsed := time.Since(t0)
	var report struct {
		Created map[string]int `json:"created"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		return 0, 0, fmt.Errorf("import report %s: %w", out, err)
	}
	if report.Created[section] != lines {
		return 0, 0, fmt.Errorf("import report %s: want %d %s created", out, lines, section)
	}
	rss := float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) * 1024 / 1e6
	return float64(lines) / elapsed.Seconds(), rss, nil
}

// rawTCPRate is the network floor of a download: the file sent with sendfile
// over a loopback connection to a client that discards it, rounds times.
func rawTCPRate(path string, rounds int, size int64) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f, err := os.Open(path) //nolint:gosec // the bench's own blob
			if err == nil {
				_, _ = c.(*net.TCPConn).ReadFrom(f) // sendfile
				_ = f.Close()
			}
			_ = c.Close()
		}
	}()
	return measure(rounds, size, func() (int64, error) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return 0, err
		}
		defer func() { _ = c.Close() }()
		return io.Copy(io.Discard, c)
	})
}

// importFamilies and importGivens name the imported customers.
var (
	importFamilies = []string{"Gruber", "Huber", "Bauer", "Wagner", "Müller-Lüdenscheidt", "Pichler", "Steiner", "Moser", "Mayer", "Hofer", "O'Brien", "Überreiter"}
	importGivens   = []string{"Anna", "Maria", "Lena", "Sophie", "Lukas", "David", "Hans Peter", "Jakob", "Ödön"}
)

func writeImport(path, section string, customer int64, lines int) error {
	f, err := os.Create(path) //nolint:gosec // the bench's own temporary file
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range lines {
		var err error
		switch section {
		case "customers": // numbered after the bench's own patient; names, birth dates and phone numbers for the index
			_, err = fmt.Fprintf(w, `{"section":"customers","id":%d,"data":{"first_name":%q,"last_name":%q,"birth_date":"19%02d-%02d-%02d","phone":"+43664%07d"}}`+"\n",
				customer+1+int64(i), importGivens[i%len(importGivens)], importFamilies[i%len(importFamilies)], 30+i%70, 1+i%12, 1+i%28, i)
		case "measurements": // pulses of the bench's patient, a minute apart: the observed rows written with them
			_, err = fmt.Fprintf(w, `{"section":"measurements","id":%q,"data":{"customer_id":%d,"measured_at":%q,"type":"pulse","value":"%d","unit":"/min"}}`+"\n",
				domain.NewObjectID(), customer, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Minute).Format(time.RFC3339), 50+i%60)
		default:
			_, err = fmt.Fprintf(w, `{"section":"notes","id":%q,"data":{"customer_id":%d,"noted_on":"2026-03-10","title":"Phone call","text":"Patient called about the blood pressure readings (%d)."}}`+"\n",
				domain.NewObjectID(), customer, i)
		}
		if err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// measure runs fn rounds times and returns MB/s.
func measure(rounds int, size int64, fn func() (int64, error)) (float64, error) {
	t0 := time.Now()
	for range rounds {
		n, err := fn()
		if err != nil {
			return 0, err
		}
		if n != size {
			return 0, fmt.Errorf("read %d bytes, want %d", n, size)
		}
	}
	return float64(rounds) * float64(size) / 1e6 / time.Since(t0).Seconds(), nil
}

func upload(base string, c benchserver.Company, customer int64) (string, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	fw, _ := w.CreateFormFile("file", "befund.pdf")
	data := bytes.Repeat([]byte("0"), 15<<20)
	copy(data, "%PDF-1.4\n")
	_, _ = fw.Write(data)
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/gdt/upload", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("x-gdt-company", c.ID)
	req.Header.Set("x-gdt-customer", fmt.Sprint(customer))
	req.Header.Set("x-gdt-secret", c.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var out struct {
		Files []struct {
			ID string `json:"id"`
		} `json:"files"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("upload: %d: %w", resp.StatusCode, err)
	}
	if len(out.Files) != 1 {
		return "", fmt.Errorf("upload: %d, %d files stored", resp.StatusCode, len(out.Files))
	}
	return out.Files[0].ID, nil
}

func tokenFor(base, id, secret string) (string, error) {
	resp, err := http.PostForm(base+"/api/oauth/v2/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}})
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var t struct {
		AccessToken string `json:"access_token"`
	}
	return t.AccessToken, json.NewDecoder(resp.Body).Decode(&t)
}
