package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// Orders keeps one device's order folder in step with its orders in praxis
// (docs/contract.md §14): it fetches them by long poll (no inbound port at
// the practice), writes each as a file the way the device wants it, never
// over a file the device has not taken, and reports written, taken and
// withdrawn. Its state folder holds one small file per order in hand, so
// that a crash at any moment writes no order twice and loses none: the
// name is chosen and kept before the file appears, the file is written
// under a temporary name and renamed in the same folder.
type Orders struct {
	cred   *Credential
	url    string
	dir    string
	state  string
	log    *slog.Logger
	client *http.Client

	mu     sync.Mutex
	device *domain.DeviceOutbox
	ready  chan struct{}
	once   sync.Once
}

// NewOrders prepares the order folder dir and the state folder of one device.
func NewOrders(cred *Credential, url, dir, state string, log *slog.Logger) (*Orders, error) {
	for _, d := range []string{dir, filepath.Join(state, "orders")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, err
		}
	}
	// A bridge killed while keeping an order's state left the state's
	// temporary file: a state that never took effect (held skips it).
	// Nothing keeps a state yet, so it can go.
	stale, _ := filepath.Glob(filepath.Join(state, "orders", "*.tmp"))
	for _, f := range stale {
		_ = os.Remove(f)
	}
	return &Orders{cred: cred, url: strings.TrimRight(url, "/"), dir: dir, state: state, log: log,
		client: &http.Client{Timeout: 90 * time.Second}, ready: make(chan struct{})}, nil
}

// pollWait is how long a poll waits at the service when nothing is to be
// done; watchWait while a written file is watched for the device to take it.
const (
	pollWait    = 25
	watchWait   = 1
	blockedWait = 300 * time.Millisecond
	maxOffline  = 20 * time.Second
)

// Run polls and acts until ctx ends. Offline, it tries again with a
// backoff of at most maxOffline, so that the first waiting order is
// written well within a minute of the service's return.
func (o *Orders) Run(ctx context.Context) error {
	backoff := time.Second
	wait := 0
	for ctx.Err() == nil {
		box, err := o.poll(ctx, wait)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			o.log.Warn("fetch orders", "error", err.Error(), "retry_in", backoff.String())
			sleep(ctx, backoff)
			backoff = min(2*backoff, maxOffline)
			continue
		}
		backoff = time.Second
		o.setDevice(box.Device)
		blocked, watching := o.act(ctx, box)
		switch {
		case blocked:
			sleep(ctx, blockedWait)
			wait = 0
		case watching:
			wait = watchWait
		default:
			wait = pollWait
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (o *Orders) setDevice(d domain.DeviceOutbox) {
	o.mu.Lock()
	o.device = &d
	o.mu.Unlock()
	o.once.Do(func() { close(o.ready) })
}

// Ready is closed once the device's settings are known.
func (o *Orders) Ready() <-chan struct{} { return o.ready }

// Own reports whether name is, or may be, an order file of the device: the
// results side leaves those alone. Before the device is known, every name is.
func (o *Orders) Own(name string) bool {
	o.mu.Lock()
	d := o.device
	o.mu.Unlock()
	if d == nil {
		return true
	}
	if d.FileNaming == "fixed" && d.FixedName != nil {
		return strings.EqualFold(name, *d.FixedName)
	}
	stem := d.GDTID + d.PraxisGDTID
	return len(name) == len(stem)+4 && strings.EqualFold(name[:len(stem)], stem)
}

// outbox is the service's answer to a poll.
type outbox struct {
	Device domain.DeviceOutbox  `json:"device"`
	Data   []domain.OutboxOrder `json:"data"`
}

func (o *Orders) poll(ctx context.Context, wait int) (outbox, error) {
	var box outbox
	resp, err := o.call(ctx, http.MethodGet, "/api/oauth/v2/resource/device-outbox?wait="+strconv.Itoa(wait), nil)
	if err != nil {
		return box, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return box, fmt.Errorf("%d %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	return box, json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&box)
}

// call sends one request with the device's token, getting a new token once
// when the one kept is refused.
func (o *Orders) call(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		token, err := o.cred.Token(ctx)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, method, o.url+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := o.client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusUnauthorized || attempt > 0 {
			return resp, nil
		}
		_ = resp.Body.Close()
		o.cred.Expire()
	}
}

// held is what the state folder keeps of one order in hand: the file name
// chosen for it and how far it got.
type held struct {
	ID     string `json:"id"`
	Number int64  `json:"number"`
	File   string `json:"file"`
	// Phase is writing (the name is chosen; the temporary file may or may
	// not have been renamed yet) or written (the file was put in place).
	Phase string `json:"phase"`
}

const (
	phaseWriting = "writing"
	phaseWritten = "written"
)

func (o *Orders) heldPath(id string) string { return filepath.Join(o.state, "orders", id+".json") }

func (o *Orders) tmpPath(id string) string { return filepath.Join(o.dir, ".praxis-"+id+".tmp") }

func (o *Orders) held() (map[string]held, error) {
	entries, err := os.ReadDir(filepath.Join(o.state, "orders"))
	if err != nil {
		return nil, err
	}
	out := map[string]held{}
	for _, e := range entries {
		// Only a state that was put in place counts: a bridge killed while
		// keeping one leaves its temporary file (writeSynced), a state that
		// never took effect — read as an order in hand, drop could never
		// remove it, and its file name stayed held for good.
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(o.state, "orders", e.Name())) //nolint:gosec // the bridge's own state folder
		if err != nil {
			return nil, err
		}
		var h held
		if json.Unmarshal(raw, &h) == nil && h.ID != "" {
			out[h.ID] = h
		}
	}
	return out, nil
}

// keep writes the order's state durably (a temporary file, synced, renamed).
func (o *Orders) keep(h held) error {
	raw, _ := json.Marshal(h)
	return writeSynced(o.heldPath(h.ID), raw)
}

func (o *Orders) drop(id string) {
	if err := os.Remove(o.heldPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		o.log.Warn("drop order state", "error", err.Error())
	}
}

// writeSynced puts data at path atomically: a temporary file in the same
// folder, synced, then renamed over path.
func writeSynced(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600) //nolint:gosec // a path the bridge chose
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// act does what the poll asks: reports the files the device took, writes
// open orders in number order where their file may go, withdraws cancelled
// ones. blocked: an order waits for the device to take a file; watching:
// a written file is still in the folder.
func (o *Orders) act(ctx context.Context, box outbox) (blocked, watching bool) {
	inHand, err := o.held()
	if err != nil {
		o.log.Warn("read the order state", "error", err.Error())
		return true, false
	}
	d := box.Device
	// Files the device took: reported before another order may take their name.
	for _, h := range sortedHeld(inHand) {
		if !d.RemovesFiles {
			continue
		}
		if h.Phase == phaseWriting && o.putInPlace(h) && !o.present(h.File) {
			// Put in place and taken by the device before the state said
			// written (a bridge killed in between): the order may be done
			// by its result already, so it is no longer in the outbox, and
			// its name would stay held for good. Report both steps (a
			// refusal, for a closed order, counts as reported).
			if !o.report(ctx, h.ID, "written") {
				continue
			}
			h.Phase = phaseWritten
		}
		if h.Phase != phaseWritten {
			continue
		}
		if o.present(h.File) {
			watching = true
			continue
		}
		if o.report(ctx, h.ID, "taken") {
			o.drop(h.ID)
			delete(inHand, h.ID)
		}
	}
	for _, order := range box.Data {
		h, mine := inHand[order.ID]
		switch order.Status {
		case domain.OrderOpen:
			if mine {
				blocked = !o.finish(ctx, d, h) || blocked
				watching = watching || d.RemovesFiles
				continue
			}
			if blocked { // later orders wait behind an earlier one: they go in number order
				continue
			}
			name, free := o.slot(d)
			if !free {
				blocked = true
				continue
			}
			h = held{ID: order.ID, Number: order.Number, File: name, Phase: phaseWriting}
			if len(order.GDT) == 0 { // nothing to write, ever: the practice is told
				if o.report(ctx, order.ID, "failed", "the service sent no GDT record for the order") {
					o.drop(order.ID)
				}
				continue
			}
			if err := o.write(h, order.GDT); err != nil {
				// A share that is away or full: the order stays open and is
				// tried again, in its turn; the log says why.
				o.log.Warn("write an order", "number", order.Number, "error", err.Error())
				blocked = true
				continue
			}
			blocked = !o.finish(ctx, d, h)
			watching = watching || d.RemovesFiles
		case domain.OrderWritten:
			if mine && h.Phase == phaseWriting {
				o.finish(ctx, d, h) // reported before its state was kept: put the state right
			}
		case domain.OrderCancelled:
			o.withdraw(ctx, d, order, h, mine)
		}
	}
	return blocked, watching
}

func sortedHeld(m map[string]held) []held {
	out := make([]held, 0, len(m))
	for _, h := range m {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b held) int { return int(a.Number - b.Number) })
	return out
}

// putInPlace reports whether an order of phase writing has left its
// temporary file: write keeps that phase only once the file is there, so
// without it the file was renamed into the order folder.
func (o *Orders) putInPlace(h held) bool {
	_, err := os.Stat(o.tmpPath(h.ID))
	return errors.Is(err, fs.ErrNotExist)
}

// present reports whether a file of that name is in the order folder, in
// any letter case (Windows and shares see one file).
func (o *Orders) present(name string) bool {
	_, err := findFile(filepath.Join(o.dir, name))
	return err == nil
}

// slot is the name the next order's file gets, and whether it may be
// written now: a counter always has a free name; a fixed or
// receiver+sender name is free once the device removed the last file and
// that was reported (so a name is never watched for two orders), or at once
// for a device that only reads when its program starts (the new order then
// replaces the unread one).
func (o *Orders) slot(d domain.DeviceOutbox) (string, bool) {
	stem := d.GDTID + d.PraxisGDTID
	name := stem + ".gdt"
	switch d.FileNaming {
	case "counter":
		return o.nextCounterName(stem)
	case "fixed":
		if d.FixedName != nil {
			name = *d.FixedName
		}
	}
	return name, !d.RemovesFiles || (!o.present(name) && !o.heldName(name))
}

// nextCounterName is stem.001, .002, … counted on in the state folder, the
// next number whose file is not in the folder.
func (o *Orders) nextCounterName(stem string) (string, bool) {
	path := filepath.Join(o.state, "counter")
	raw, _ := os.ReadFile(path) //nolint:gosec // the bridge's own state
	last, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	for i := 1; i <= 999; i++ {
		n := (last+i-1)%999 + 1
		name := fmt.Sprintf("%s.%03d", stem, n)
		if !o.present(name) && !o.heldName(name) {
			if err := writeSynced(path, []byte(strconv.Itoa(n))); err != nil {
				return "", false
			}
			return name, true
		}
	}
	return "", false
}

// heldName reports whether an order in hand has that file name.
func (o *Orders) heldName(name string) bool {
	inHand, _ := o.held()
	for _, h := range inHand {
		if strings.EqualFold(h.File, name) {
			return true
		}
	}
	return false
}

// write puts the order's record under its temporary name beside the
// target, synced, and only then keeps the name chosen for it: a state of
// phase writing without the temporary file means the file was put in place.
func (o *Orders) write(h held, gdt []byte) error {
	if err := writeSynced(o.tmpPath(h.ID), gdt); err != nil {
		return err
	}
	return o.keep(h)
}

// finish puts an order's file in place (when its temporary file is still
// there and the name is free), keeps it as written and reports it. The
// rename is the one moment the device sees the file: a crash before it
// leaves the temporary file, after it none, so the order is never written
// twice. false while the order waits for its name to be free.
func (o *Orders) finish(ctx context.Context, d domain.DeviceOutbox, h held) bool {
	if h.Phase == phaseWriting {
		tmp := o.tmpPath(h.ID)
		if _, err := os.Stat(tmp); err == nil {
			if d.RemovesFiles && o.present(h.File) {
				return false // the device has not taken the file before it: wait
			}
			o.replaced(h)
			if err := os.Rename(tmp, filepath.Join(o.dir, h.File)); err != nil {
				o.log.Warn("put an order in place", "number", h.Number, "error", err.Error())
				return false
			}
		}
		h.Phase = phaseWritten
		if err := o.keep(h); err != nil {
			o.log.Warn("keep an order's state", "number", h.Number, "error", err.Error())
			return true
		}
		o.log.Info("order written", "number", h.Number, "file", h.File)
	}
	if o.report(ctx, h.ID, "written") && !d.RemovesFiles {
		o.drop(h.ID) // nothing to watch: the device never removes it
	}
	return true
}

// replaced forgets the orders whose file a new one replaces (a device that
// reads only when its program starts).
func (o *Orders) replaced(next held) {
	inHand, _ := o.held()
	for _, h := range inHand {
		if h.ID != next.ID && h.Phase == phaseWritten && strings.EqualFold(h.File, next.File) {
			o.drop(h.ID)
		}
	}
}

// withdraw takes a cancelled order back: its unread file is deleted (the
// bridge deletes no file but its own); a GDT 3.0 device that took it gets
// a 6303; then the service is told.
func (o *Orders) withdraw(ctx context.Context, d domain.DeviceOutbox, order domain.OutboxOrder, h held, mine bool) {
	if mine {
		_ = os.Remove(o.tmpPath(h.ID))
		if h.Phase == phaseWritten && d.RemovesFiles && o.present(h.File) {
			if err := os.Remove(filepath.Join(o.dir, h.File)); err != nil {
				o.log.Warn("withdraw an order", "number", order.Number, "error", err.Error())
				return
			}
			order.Cancel = nil // unread: nothing to cancel at the device
		}
	}
	if len(order.Cancel) > 0 {
		name, free := o.slot(d)
		if !free {
			return // after the device took what lies there
		}
		if err := writeSynced(filepath.Join(o.dir, ".praxis-cancel-"+order.ID+".tmp"), order.Cancel); err != nil {
			o.log.Warn("write a cancellation", "number", order.Number, "error", err.Error())
			return
		}
		if err := os.Rename(filepath.Join(o.dir, ".praxis-cancel-"+order.ID+".tmp"), filepath.Join(o.dir, name)); err != nil {
			o.log.Warn("write a cancellation", "number", order.Number, "error", err.Error())
			return
		}
	}
	if o.report(ctx, order.ID, "withdrawn") {
		o.drop(order.ID)
	}
}

// report tells the service what became of an order; true once it has
// heard (or the order is no longer one to report on).
func (o *Orders) report(ctx context.Context, id, status string, reason ...string) bool {
	var body []byte
	if len(reason) > 0 {
		body, _ = json.Marshal(map[string]string{"reason": truncate(reason[0], 500)})
	}
	resp, err := o.call(ctx, http.MethodPost, "/api/oauth/v2/resource/device-orders/"+id+"/"+status, body)
	if err != nil {
		o.log.Warn("report an order", "status", status, "error", err.Error())
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true
	case http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity:
		o.log.Warn("report refused", "status", status, "answer", resp.StatusCode)
		return true
	}
	o.log.Warn("report postponed", "status", status, "answer", resp.StatusCode)
	return false
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}
