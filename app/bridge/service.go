package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"
)

// Settings is the bridge's configuration file (--config): the service, the
// company, and the devices it serves, each with its own credential and
// folders. The settings page's Devices tab writes one to download.
type Settings struct {
	URL     string `json:"url"`
	Company string `json:"company"`
	// Secret and Dir are the company's upload secret and a folder of
	// results only, as before devices had credentials (optional).
	Secret   string           `json:"secret,omitempty"`
	Dir      string           `json:"dir,omitempty"`
	StateDir string           `json:"state_dir,omitempty"`
	Devices  []DeviceSettings `json:"devices"`
}

// DeviceSettings is one device: its credential, where the bridge writes
// its orders and where it reads its results (the same folder, when the
// device wants it so).
type DeviceSettings struct {
	Name         string `json:"name"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	OrderDir     string `json:"order_dir"`
	ResultDir    string `json:"result_dir"`
}

// ReadSettings reads and checks a configuration file.
func ReadSettings(path string) (Settings, error) {
	raw, err := os.ReadFile(path) //nolint:gosec // the file the practice named
	if err != nil {
		return Settings{}, err
	}
	var s Settings
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	if s.URL == "" || s.Company == "" {
		return Settings{}, fmt.Errorf("%s: url and company are required", path)
	}
	for i, d := range s.Devices {
		if d.ClientID == "" || d.ClientSecret == "" || d.OrderDir == "" || d.ResultDir == "" {
			return Settings{}, fmt.Errorf("%s: devices[%d]: client_id, client_secret, order_dir and result_dir are required", path, i)
		}
	}
	if len(s.Devices) == 0 && s.Dir == "" {
		return Settings{}, fmt.Errorf("%s: no devices and no dir: nothing to do", path)
	}
	return s, nil
}

// Run serves every device of s (and the results-only folder, if any) until
// ctx ends; base carries the settings of result delivery (stability wait,
// rescan, prefix).
func Run(ctx context.Context, s Settings, base Config, log *slog.Logger) error {
	g, ctx := errgroup.WithContext(ctx)
	state := s.StateDir
	if state == "" && len(s.Devices) > 0 {
		state = filepath.Join(s.Devices[0].OrderDir, ".praxis-bridge")
	}
	if s.Dir != "" {
		cfg := base
		cfg.Dir, cfg.URL, cfg.Company, cfg.Secret = s.Dir, s.URL, s.Company, s.Secret
		if state != "" {
			cfg.StateDir = filepath.Join(state, "results")
		}
		b, err := New(cfg, log)
		if err != nil {
			return err
		}
		g.Go(func() error { return b.Run(ctx) })
	}
	for _, d := range s.Devices {
		dlog := log.With("device", d.Name)
		cred := NewCredential(s.URL, d.ClientID, d.ClientSecret)
		deviceState := filepath.Join(state, d.ClientID)
		orders, err := NewOrders(cred, s.URL, d.OrderDir, deviceState, dlog)
		if err != nil {
			return err
		}
		cfg := base
		cfg.Dir, cfg.URL, cfg.Company, cfg.Secret, cfg.Device = d.ResultDir, s.URL, s.Company, "", cred
		cfg.StateDir = filepath.Join(deviceState, "results")
		if sameDir(d.OrderDir, d.ResultDir) {
			cfg.Ignore = orders.Own
		}
		results, err := New(cfg, dlog)
		if err != nil {
			return err
		}
		g.Go(func() error { return orders.Run(ctx) })
		g.Go(func() error { return results.Run(ctx) })
	}
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func sameDir(a, b string) bool {
	x, errA := filepath.Abs(a)
	y, errB := filepath.Abs(b)
	return errA == nil && errB == nil && strings.EqualFold(filepath.Clean(x), filepath.Clean(y))
}
