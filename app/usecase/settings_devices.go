package usecase

import (
	"context"
	"encoding/json"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/staff"
	"github.com/praxis-health/praxis/ports"
)

// WithDevices lets the settings run the GDT round trip through the same
// use cases as the API (the server has them; the admin commands do not).
func (s *Settings) WithDevices(records ports.Records, orders ports.DeviceOrders, files ports.Files) *Settings {
	s.records, s.orders, s.files = records, orders, files
	return s
}

func (s *Settings) devices() error {
	if s.records == nil || s.orders == nil || s.files == nil {
		return domain.ErrNotFound
	}
	return nil
}

// boardOrders is how many of the latest orders the tab shows.
const boardOrders = 50

// DeviceBoard answers the company's devices, its latest orders (newest
// first) and the results that matched no order.
func (s *Settings) DeviceBoard(ctx context.Context, m staff.Member) (ports.DeviceBoard, error) {
	if err := s.devices(); err != nil {
		return ports.DeviceBoard{}, err
	}
	var board ports.DeviceBoard
	g := grantOf(m)
	if err := readAll(ctx, s.records, g, devicesKind, 500, &board.Devices); err != nil {
		return board, err
	}
	if err := readAll(ctx, s.records, g, ordersKind, 10_000, &board.Orders); err != nil {
		return board, err
	}
	for i, j := 0, len(board.Orders)-1; i < j; i, j = i+1, j-1 {
		board.Orders[i], board.Orders[j] = board.Orders[j], board.Orders[i]
	}
	board.Orders = board.Orders[:min(len(board.Orders), boardOrders)]
	page, err := s.files.List(ctx, g, domain.ListQuery{Limit: domain.MaxPageSize, Dump: true, Fields: map[string]string{"order_match": "unmatched"}})
	if err != nil {
		return board, err
	}
	board.Unmatched = page.Files
	return board, nil
}

// readAll pages through a section's feed into out (at most limit objects).
// It reads every committed write, also those the feed still holds back for
// an older open transaction (Dump): the page is read once and never
// resumed, and a device just registered must be on it.
func readAll[T any](ctx context.Context, records ports.Records, g domain.Grant, kind *domain.Kind, limit int, out *[]T) error {
	q := domain.ListQuery{Limit: domain.MaxPageSize, Dump: true}
	for len(*out) < limit {
		page, err := records.List(ctx, g, kind, q)
		if err != nil {
			return err
		}
		var items []T
		if err := json.Unmarshal(page.Data, &items); err != nil {
			return err
		}
		*out = append(*out, items...)
		if !page.HasMore {
			return nil
		}
		cur, err := domain.ParseCursor(page.NextCursor)
		if err != nil {
			return err
		}
		q.After = &cur
	}
	return nil
}

// RegisterDevice registers a device of the company.
func (s *Settings) RegisterDevice(ctx context.Context, m staff.Member, body []byte) (ports.Response, error) {
	if err := mayChange(m); err != nil {
		return ports.Response{}, err
	}
	if err := s.devices(); err != nil {
		return ports.Response{}, err
	}
	return s.records.Create(ctx, grantOf(m), devicesKind, body, nil)
}

// DeviceCredential makes or renews the device's credential for its bridge
// (the old secret valid one more day).
func (s *Settings) DeviceCredential(ctx context.Context, m staff.Member, device string) (ports.DeviceCredential, error) {
	if err := mayChange(m); err != nil {
		return ports.DeviceCredential{}, err
	}
	if err := s.devices(); err != nil {
		return ports.DeviceCredential{}, err
	}
	return s.orders.Credential(ctx, grantOf(m), device, domain.DefaultSecretOverlap)
}

// OrderAtDevice makes a device order.
func (s *Settings) OrderAtDevice(ctx context.Context, m staff.Member, body []byte) (ports.Response, error) {
	if err := mayChange(m); err != nil {
		return ports.Response{}, err
	}
	if err := s.devices(); err != nil {
		return ports.Response{}, err
	}
	return s.orders.Create(ctx, grantOf(m), body, nil)
}

// CancelDeviceOrder cancels an order still at the version the page showed.
func (s *Settings) CancelDeviceOrder(ctx context.Context, m staff.Member, id string, version int64) error {
	if err := mayChange(m); err != nil {
		return err
	}
	if err := s.devices(); err != nil {
		return err
	}
	_, err := s.orders.Cancel(ctx, grantOf(m), id, ports.Write{IfMatch: shown(version)})
	return err
}

// AssignResult files a result that matched no order under an order still
// at the version the page showed.
func (s *Settings) AssignResult(ctx context.Context, m staff.Member, order string, file domain.FileID, version int64) error {
	if err := mayChange(m); err != nil {
		return err
	}
	if err := s.devices(); err != nil {
		return err
	}
	_, err := s.orders.Assign(ctx, grantOf(m), order, file, ports.Write{IfMatch: shown(version)})
	return err
}
