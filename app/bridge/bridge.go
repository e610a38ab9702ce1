// Package bridge is praxis-gdt-bridge (docs/contract.md §8): it watches a practice's
// GDT exchange folder and delivers each complete result (record 6310/6311)
// with the files its 6305 lines reference in one upload. Delivery is exactly
// once: the upload carries an Idempotency-Key (a hash of the bundle), a
// marker in the state directory is written after the 200 and before the
// bundle moves to done/, and a restart, a crash or a day offline neither
// loses a bundle nor delivers it twice.
package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/praxis-health/praxis/domain/gdt"
)

// Config is the bridge's settings (flags or PRAXIS_BRIDGE_* variables).
type Config struct {
	Dir, URL, Company, Secret string
	Prefix                    string // gdt or sonogdt
	StateDir                  string // default <Dir>/.praxis-bridge
	Stable                    time.Duration
	Rescan                    time.Duration
	MaxBackoff                time.Duration
	// MissingFileTimeout is how long a result waits for a file its 6305
	// lines reference before it goes to failed/ (default 10 minutes).
	MissingFileTimeout time.Duration
	// CrashAfterUpload exits right after a 200, before the bundle is marked:
	// a fault-injection point for the tests of crash recovery, nothing else.
	CrashAfterUpload bool
	// Device, when set, uploads with a device's own credential instead of
	// the company's secret (docs/contract.md §14).
	Device *Credential
	// Ignore names files of the folder that are no results: the order
	// files the bridge writes for a device that shares the folder.
	Ignore func(name string) bool
}

// Bridge delivers one exchange folder.
type Bridge struct {
	cfg     Config
	client  *http.Client
	log     *slog.Logger
	seen    map[string]observation
	retries map[string]retry
	status  Status
	written Status // what status.json says (Queue -1 before the first write)
}

type observation struct {
	size  int64
	mtime time.Time
	since time.Time
}

type retry struct {
	attempts int
	next     time.Time
	missing  time.Time // since when a referenced file is missing; zero when none is
}

// Status is what the bridge reports in <state>/status.json.
type Status struct {
	Queue     int `json:"queue"`
	Delivered int `json:"delivered"`
	Failed    int `json:"failed"`
}

// New checks cfg and prepares the folders.
func New(cfg Config, log *slog.Logger) (*Bridge, error) {
	if cfg.Dir == "" || cfg.URL == "" || cfg.Company == "" || (cfg.Secret == "" && cfg.Device == nil) {
		return nil, errors.New("--dir, --url, --company and --secret are required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "gdt"
	}
	if cfg.Prefix != "gdt" && cfg.Prefix != "sonogdt" {
		return nil, errors.New("--prefix is gdt or sonogdt")
	}
	if cfg.StateDir == "" {
		cfg.StateDir = filepath.Join(cfg.Dir, ".praxis-bridge")
	}
	cfg.Stable = orDefault(cfg.Stable, 2*time.Second)
	cfg.Rescan = orDefault(cfg.Rescan, 10*time.Second)
	cfg.MaxBackoff = orDefault(cfg.MaxBackoff, 5*time.Minute)
	cfg.MissingFileTimeout = orDefault(cfg.MissingFileTimeout, 10*time.Minute)
	for _, d := range []string{filepath.Join(cfg.StateDir, "delivered"), filepath.Join(cfg.Dir, "done"), filepath.Join(cfg.Dir, "failed")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, err
		}
	}
	return &Bridge{cfg: cfg, client: &http.Client{Timeout: 10 * time.Minute}, log: log,
		seen: map[string]observation{}, retries: map[string]retry{}, written: Status{Queue: -1}}, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Run delivers until ctx ends: file-system events wake it, a periodic
// rescan catches what events miss (network shares lose them), and while a
// file is settling it looks again twice a second.
func (b *Bridge) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer func() { _ = w.Close() }()
	if err := w.Add(b.cfg.Dir); err != nil {
		b.log.Warn("no file-system events, rescanning only", "error", err.Error())
	}
	b.log.Info("watching", "dir", b.cfg.Dir, "url", b.cfg.URL)
	for {
		wait := b.scan(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-w.Events:
		case err := <-w.Errors:
			b.log.Warn("file-system events", "error", fmt.Sprint(err))
		case <-time.After(wait):
		}
	}
}

// isResultName tells the names a device gives its results: *.gdt, or a
// counter (*.001, *.002, …); a name starting with a dot is a temporary file.
func isResultName(name string) bool {
	ext := filepath.Ext(name)
	return !strings.HasPrefix(name, ".") && (strings.EqualFold(ext, ".gdt") || (len(ext) == 4 && allDigits(ext[1:])))
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// settleCheck is how often a file that is still settling is looked at again.
const settleCheck = 500 * time.Millisecond

// scan looks at every result in the folder once and returns how long the
// folder can be left alone: until a settling file is worth another look,
// a postponed delivery is due, or the next rescan.
func (b *Bridge) scan(ctx context.Context) time.Duration {
	entries, err := os.ReadDir(b.cfg.Dir)
	if err != nil {
		b.log.Warn("read the exchange folder", "error", err.Error())
		return settleCheck
	}
	wait, queue := b.cfg.Rescan, 0
	now := time.Now()
	for _, e := range entries {
		if e.IsDir() || !isResultName(e.Name()) || (b.cfg.Ignore != nil && b.cfg.Ignore(e.Name())) {
			continue
		}
		queue++
		path := filepath.Join(b.cfg.Dir, e.Name())
		if !b.complete(path, now) {
			wait = min(wait, settleCheck)
			continue
		}
		if r := b.retries[path]; now.Before(r.next) {
			wait = min(wait, r.next.Sub(now))
			continue
		}
		if b.deliver(ctx, path) {
			queue--
		} else { // postponed: later() set when to try again
			wait = min(wait, time.Until(b.retries[path].next))
		}
	}
	b.status.Queue = queue
	b.writeStatus()
	return max(wait, 0)
}

// complete is the contract's test: size and modification time unchanged for
// Stable, and the file opens.
func (b *Bridge) complete(path string, now time.Time) bool {
	info, err := os.Stat(path)
	if err != nil {
		delete(b.seen, path)
		return false
	}
	o, ok := b.seen[path]
	if !ok || o.size != info.Size() || !o.mtime.Equal(info.ModTime()) {
		b.seen[path] = observation{size: info.Size(), mtime: info.ModTime(), since: now}
		return false
	}
	if now.Sub(o.since) < b.cfg.Stable {
		return false
	}
	f, err := os.Open(path) //nolint:gosec // a file of the exchange folder the practice configured
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
}

// bundle is one result and the files it references.
type bundle struct {
	gdt     string
	raw     []byte
	patient string
	files   []string
	key     string
	problem string // a permanent reason not to deliver, e.g. not a result
}

func (b *Bridge) read(path string) (bundle, error) {
	raw, err := os.ReadFile(path) //nolint:gosec // a file of the exchange folder
	if err != nil {
		return bundle{}, err
	}
	g := gdt.Parse(raw)
	bd := bundle{gdt: path, raw: raw}
	if len(g.Records) == 0 {
		bd.problem = "no GDT record"
		return bd, nil
	}
	if rt, _ := g.Records[0].Get("8000"); rt != "6310" && rt != "6311" {
		bd.problem = "record type " + rt + " is no examination result (6310/6311)"
		return bd, nil
	}
	// The same rule as the service's (docs/contract.md §7): one file, one patient.
	switch patients := g.Patients(); len(patients) {
	case 0:
		bd.problem = "no patient (field 3000)"
		return bd, nil
	case 1:
		bd.patient = strings.TrimSpace(patients[0])
	default:
		bd.problem = fmt.Sprintf("the records of this file name more than one patient (field 3000: %s); "+
			"it was not uploaded, so that no result is filed under another patient", strings.Join(patients, ", "))
		return bd, nil
	}
	h := sha256.New()
	h.Write(raw)
	for _, r := range g.Records {
		for _, ref := range r.All("6305") {
			ref = strings.ReplaceAll(strings.TrimSpace(ref), `\`, string(filepath.Separator))
			if !filepath.IsAbs(ref) {
				ref = filepath.Join(filepath.Dir(path), ref)
			}
			ref, err = findFile(ref)
			if err == nil {
				h.Write([]byte{0})
				err = hashFile(h, ref)
			}
			if err != nil {
				return bd, &missingFile{name: filepath.Base(ref), err: err}
			}
			bd.files = append(bd.files, ref)
		}
	}
	bd.key = "gdt-bridge-" + hex.EncodeToString(h.Sum(nil))
	return bd, nil
}

// missingFile is a referenced file that is not there (yet), or cannot be read.
type missingFile struct {
	name string
	err  error
}

func (m *missingFile) Error() string { return "referenced file " + m.name + ": " + m.err.Error() }

// findFile is path, or the one file in its folder whose name differs from
// it only in letter case: on Windows and on network shares, where practices
// run the bridge, "BILD.JPG" and "bild.jpg" are one file.
func findFile(path string) (string, error) {
	_, err := os.Stat(path)
	if !errors.Is(err, os.ErrNotExist) {
		return path, err
	}
	entries, derr := os.ReadDir(filepath.Dir(path))
	if derr != nil {
		return path, err
	}
	for _, e := range entries { // sorted by name: the same choice every time
		if !e.IsDir() && strings.EqualFold(e.Name(), filepath.Base(path)) {
			return filepath.Join(filepath.Dir(path), e.Name()), nil
		}
	}
	return path, err
}

// hashFile streams a file into h: an image may be 15 MiB.
func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path) //nolint:gosec // a file the result names
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	_, err = io.Copy(h, f)
	return err
}

// deliver uploads one complete result; true when it left the queue.
func (b *Bridge) deliver(ctx context.Context, path string) bool {
	bd, err := b.read(path)
	var missing *missingFile
	if errors.As(err, &missing) { // a referenced file not there (yet): wait for it, but not forever
		r := b.retries[path]
		if r.missing.IsZero() {
			r.missing = time.Now()
			b.retries[path] = r
		}
		if waited := time.Since(r.missing); waited >= b.cfg.MissingFileTimeout {
			b.fail(bd, fmt.Sprintf("%s did not appear within %s; the result was not uploaded", missing.Error(), b.cfg.MissingFileTimeout))
			return true
		}
		b.later(path, 0, err.Error())
		return false
	}
	if err != nil {
		b.later(path, 0, err.Error())
		return false
	}
	if bd.problem != "" {
		b.fail(bd, bd.problem)
		return true
	}
	if b.delivered(bd.key) { // delivered before a crash, not yet moved
		b.done(bd)
		return true
	}
	status, message, skipped, retryAfter, err := b.upload(ctx, bd)
	switch {
	case err != nil || status >= 500 || status == http.StatusTooManyRequests:
		reason := message
		if err != nil {
			reason = err.Error()
		}
		b.later(path, retryAfter, reason)
		return false
	case status == http.StatusOK:
		if b.cfg.CrashAfterUpload {
			os.Exit(3)
		}
		if err := b.markDelivered(bd.key); err != nil {
			b.later(path, 0, err.Error())
			return false
		}
		b.setAside(&bd, skipped)
		b.done(bd)
		b.log.Info("delivered", "file", filepath.Base(path), "attachments", len(bd.files))
		return true
	default: // a refusal of the contract: it will not succeed by trying again
		b.fail(bd, fmt.Sprintf("%d %s", status, message))
		return true
	}
}

// later schedules another attempt with exponential backoff (or the server's Retry-After).
func (b *Bridge) later(path string, retryAfter time.Duration, reason string) {
	r := b.retries[path]
	r.attempts++
	wait := min(time.Duration(1<<min(r.attempts, 10))*time.Second, b.cfg.MaxBackoff)
	if retryAfter > 0 {
		wait = min(retryAfter, b.cfg.MaxBackoff)
	}
	r.next = time.Now().Add(wait)
	b.retries[path] = r
	b.log.Warn("delivery postponed", "file", filepath.Base(path), "reason", reason, "retry_in", wait.String())
}

func (b *Bridge) upload(ctx context.Context, bd bundle) (status int, message string, skipped []skippedFile, retryAfter time.Duration, err error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := writeParts(mw, bd)
		if err == nil {
			err = mw.Close()
		}
		_ = pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(b.cfg.URL, "/")+"/api/"+b.cfg.Prefix+"/upload", pr)
	if err != nil {
		return 0, "", nil, 0, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("x-"+b.cfg.Prefix+"-company", b.cfg.Company)
	req.Header.Set("x-"+b.cfg.Prefix+"-customer", bd.patient)
	if b.cfg.Device != nil {
		token, err := b.cfg.Device.Token(ctx)
		if err != nil {
			_ = pr.CloseWithError(err)
			return 0, "", nil, 0, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	} else {
		req.Header.Set("x-"+b.cfg.Prefix+"-secret", b.cfg.Secret)
	}
	req.Header.Set("Idempotency-Key", bd.key)
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, "", nil, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	var answer struct {
		Message string        `json:"message"`
		Skipped []skippedFile `json:"skipped"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&answer)
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		retryAfter = time.Duration(s) * time.Second
	}
	if b.cfg.Device != nil && resp.StatusCode == http.StatusBadRequest && answer.Message == secretRefused {
		// The token ran out or was revoked: a new one, and another try.
		b.cfg.Device.Expire()
		return http.StatusServiceUnavailable, answer.Message, nil, time.Second, nil
	}
	return resp.StatusCode, answer.Message, answer.Skipped, retryAfter, nil
}

// secretRefused is the upload doors' answer to a wrong secret or a token that is not live.
const secretRefused = "Secret not valid."

// skippedFile is a part the service did not store: not one of the accepted formats.
type skippedFile struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
}

// setAside moves the attachments the service skipped to failed/ with the
// reason, so that nobody believes them delivered; the rest of the bundle
// was stored.
func (b *Bridge) setAside(bd *bundle, skipped []skippedFile) {
	for _, sk := range skipped {
		for i, path := range bd.files {
			if filepath.Base(path) != sk.Name {
				continue
			}
			b.fail(bundle{gdt: path}, fmt.Sprintf("not stored by the service: %s is not an accepted format (PDF, JPEG, PNG, GIF, TIFF, BMP, WebP, DICOM, GDT/text, XML); the result %s was delivered without it", sk.ContentType, filepath.Base(bd.gdt)))
			bd.files = append(bd.files[:i], bd.files[i+1:]...)
			break
		}
	}
}

// writeParts sends the result as it was read and hashed, then streams the
// files it references.
func writeParts(mw *multipart.Writer, bd bundle) error {
	w, err := mw.CreateFormFile("file", filepath.Base(bd.gdt))
	if err != nil {
		return err
	}
	if _, err := w.Write(bd.raw); err != nil {
		return err
	}
	for _, path := range bd.files {
		w, err := mw.CreateFormFile("file", filepath.Base(path))
		if err != nil {
			return err
		}
		f, err := os.Open(path) //nolint:gosec // a file of the bundle
		if err != nil {
			return err
		}
		_, err = io.Copy(w, f)
		_ = f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *Bridge) markerPath(key string) string {
	return filepath.Join(b.cfg.StateDir, "delivered", key)
}

func (b *Bridge) delivered(key string) bool {
	_, err := os.Stat(b.markerPath(key))
	return err == nil
}

// markDelivered records a 200 durably before the bundle moves.
func (b *Bridge) markDelivered(key string) error {
	f, err := os.Create(b.markerPath(key))
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// done moves a delivered bundle into done/.
func (b *Bridge) done(bd bundle) {
	b.moveAll(bd, "done")
	b.status.Delivered++
	delete(b.retries, bd.gdt)
	delete(b.seen, bd.gdt)
}

// fail moves a refused bundle into failed/ with the reason beside it.
func (b *Bridge) fail(bd bundle, reason string) {
	moved := b.moveAll(bd, "failed") // beside the file, under the name it got there
	if err := os.WriteFile(moved+".reason.txt", []byte(reason+"\n"), 0o600); err != nil {
		b.log.Warn("write the reason", "error", err.Error())
	}
	b.status.Failed++
	b.log.Warn("refused", "file", filepath.Base(bd.gdt), "reason", reason)
	delete(b.retries, bd.gdt)
	delete(b.seen, bd.gdt)
}

// moveAll moves the bundle's files into folder and returns where the
// result (the first file) went.
func (b *Bridge) moveAll(bd bundle, folder string) (first string) {
	for i, path := range append([]string{bd.gdt}, bd.files...) {
		target := filepath.Join(b.cfg.Dir, folder, filepath.Base(path))
		if _, err := os.Stat(target); err == nil { // never overwrite an earlier bundle's file
			target = filepath.Join(b.cfg.Dir, folder, time.Now().Format("20060102-150405.000000")+"-"+filepath.Base(path))
		}
		if err := os.Rename(path, target); err != nil {
			b.log.Warn("move", "file", filepath.Base(path), "error", err.Error())
		}
		if i == 0 {
			first = target
		}
	}
	return first
}

// writeStatus replaces status.json when something changed.
func (b *Bridge) writeStatus() {
	if b.status == b.written {
		return
	}
	b.written = b.status
	raw, _ := json.Marshal(b.status)
	tmp := filepath.Join(b.cfg.StateDir, "status.json.tmp")
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o600); err == nil {
		_ = os.Rename(tmp, filepath.Join(b.cfg.StateDir, "status.json"))
	}
}
