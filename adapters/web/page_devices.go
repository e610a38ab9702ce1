package web

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// The Devices page: the round trip's devices, their credentials, orders sent
// from the page, unmatched results, and the upload secret (docs/contract.md §14).

// deviceBoard is what the tab shows (docs/contract.md §14): the company's
// devices, its latest device orders (newest first) and the device results
// that matched no order, read through the API's own use cases.
type deviceBoard struct {
	Devices   []deviceEntry
	Orders    []orderEntry
	Unmatched []domain.File
}

// deviceEntry and orderEntry are a device and a device order with their id and version.
type deviceEntry struct {
	ID      string
	Version int64
	domain.Device
}

type orderEntry struct {
	ID      string
	Version int64
	domain.DeviceOrder
}

var (
	devicesKind = domain.KindOf("devices")
	ordersKind  = domain.KindOf("device-orders")
)

// boardOrders is how many of the latest orders the tab shows.
const boardOrders = 50

func (s *Site) deviceBoard(ctx context.Context, g domain.Grant) (deviceBoard, error) {
	var board deviceBoard
	err := readAll(ctx, s.api.Records, g, devicesKind, 500, func(o ports.StoredObject) error {
		board.Devices = append(board.Devices, deviceEntry{ID: o.ID, Version: o.Version})
		return json.Unmarshal(o.Payload, &board.Devices[len(board.Devices)-1].Device)
	})
	if err != nil {
		return board, err
	}
	err = readAll(ctx, s.api.Records, g, ordersKind, 10_000, func(o ports.StoredObject) error {
		board.Orders = append(board.Orders, orderEntry{ID: o.ID, Version: o.Version})
		return json.Unmarshal(o.Payload, &board.Orders[len(board.Orders)-1].DeviceOrder)
	})
	if err != nil {
		return board, err
	}
	slices.Reverse(board.Orders)
	board.Orders = board.Orders[:min(len(board.Orders), boardOrders)]
	page, err := s.api.Files.List(ctx, g, domain.ListQuery{Limit: domain.MaxPageSize, Dump: true, Fields: map[string]string{"order_match": "unmatched"}})
	board.Unmatched = page.Files
	return board, err
}

// readAll pages through a section's feed, handing each object to add (at
// most limit objects). It reads every committed write, also those the feed
// still holds back for an older open transaction (Dump): the page is read
// once and never resumed, and a device just registered must be on it.
func readAll(ctx context.Context, records ports.Records, g domain.Grant, kind *domain.Kind, limit int, add func(ports.StoredObject) error) error {
	q := domain.ListQuery{Limit: domain.MaxPageSize, Dump: true}
	for n := 0; n < limit; {
		page, err := records.List(ctx, g, kind, q)
		if err != nil {
			return err
		}
		for _, o := range page.Items {
			if err := add(o); err != nil {
				return err
			}
		}
		n += len(page.Items)
		if !page.HasMore {
			return nil
		}
		q.After = &page.Next
	}
	return nil
}

func (s *Site) devices(c *fiber.Ctx, secret domain.Secret) error {
	return s.devicesView(c, secret, nil, "")
}

// devicesView is the Devices tab: the round trip's devices, orders and
// unmatched results (docs/contract.md §14), and the upload secret; cred is
// a device credential just made (shown once, with a bridge configuration),
// sent the number of an order just made.
func (s *Site) devicesView(c *fiber.Ctx, secret domain.Secret, cred *ports.DeviceCredential, sent string) error {
	m := memberOf(c)
	board, err := s.deviceBoard(ctx(c), m.Grant())
	if err != nil {
		return s.fail(c, err)
	}
	data := map[string]any{"CompanyID": m.Company.String(), "SiteURL": s.opts.SiteURL, "Board": board}
	if sent != "" {
		data["Sent"] = sent
	}
	if cred != nil {
		data["Credential"] = cred
		name := cred.DeviceID
		for _, d := range board.Devices {
			if d.ID == cred.DeviceID {
				name = d.Name
			}
		}
		config, _ := json.MarshalIndent(map[string]any{"url": s.opts.SiteURL, "company": m.Company.String(),
			"devices": []map[string]string{{"name": name, "client_id": string(cred.ClientID),
				"client_secret": string(cred.ClientSecret), "order_dir": `D:\GDT\orders`, "result_dir": `D:\GDT\results`}}}, "", "  ")
		data["DeviceConfig"] = string(config)
	}
	if secret != "" {
		data["Secret"] = secret
		data["Config"] = fmt.Sprintf("# praxis GDT bridge (praxis-gdt-bridge), made %s\n"+
			"PRAXIS_BRIDGE_URL=%s\nPRAXIS_BRIDGE_COMPANY=%s\nPRAXIS_BRIDGE_SECRET=%s\n"+
			"# the GDT exchange folder the devices write to\nPRAXIS_BRIDGE_DIR=D:\\GDT\n"+
			"# gdt, or sonogdt for a SonoGdt device\nPRAXIS_BRIDGE_PREFIX=gdt\n",
			s.now().UTC().Format(time.RFC3339), s.opts.SiteURL, m.Company, secret)
	}
	return s.render(c, "devices", data)
}

func (s *Site) devicesPage(c *fiber.Ctx) error { return s.devices(c, "") }

// registerDevice registers a device from the tab's form: procedures one a
// line, "CODE Name".
func (s *Site) registerDevice(c *fiber.Ctx) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	body := map[string]any{"name": form.Get("name"), "gdt_id": form.Get("gdt_id"), "gdt_version": form.Get("gdt_version"),
		"file_naming": form.Get("file_naming"), "removes_files": form.Get("reads_on_start") == ""}
	for field, v := range map[string]string{"praxis_gdt_id": form.Get("praxis_gdt_id"), "encoding": form.Get("encoding"), "fixed_name": form.Get("fixed_name")} {
		if v = strings.TrimSpace(v); v != "" {
			body[field] = v
		}
	}
	procedures := []map[string]string{}
	for _, line := range strings.Split(form.Get("procedures"), "\n") {
		code, name, _ := strings.Cut(strings.TrimSpace(line), " ")
		if code != "" {
			procedures = append(procedures, map[string]string{"code": code, "name": strings.TrimSpace(name)})
		}
	}
	body["procedures"] = procedures
	resp, err := s.api.Records.Create(ctx(c), memberOf(c).Grant(), devicesKind, domain.DocumentOf(body), nil)
	if err != nil {
		return err
	}
	c.Locals(objectKey{}, resp.Value.ID)
	c.Status(fiber.StatusCreated)
	return s.devices(c, "")
}

// deviceCredential makes or renews a device's credential and shows it once,
// with a configuration file for its bridge.
func (s *Site) deviceCredential(c *fiber.Ctx) error {
	id := c.Params("id")
	if !domain.ValidObjectID(id) {
		return domain.ErrNotFound
	}
	c.Locals(objectKey{}, id)
	cred, err := s.api.Orders.Credential(ctx(c), memberOf(c).Grant(), id, domain.DefaultSecretOverlap)
	if err != nil {
		return err
	}
	return s.devicesView(c, "", &cred, "")
}

// orderAtDevice sends a patient to a device (or asks it to show a result).
func (s *Site) orderAtDevice(c *fiber.Ctx) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	customer, err := strconv.ParseInt(strings.TrimSpace(form.Get("customer_id")), 10, 64)
	if err != nil {
		return &domain.ValidationError{Field: "customer_id", Message: "the patient number must be a number"}
	}
	body := map[string]any{"customer_id": customer, "device_id": form.Get("device_id"), "type": form.Get("type")}
	for _, field := range []string{"procedure", "file_id", "comment"} {
		if v := strings.TrimSpace(form.Get(field)); v != "" {
			body[field] = v
		}
	}
	resp, err := s.api.Orders.Create(ctx(c), memberOf(c).Grant(), domain.DocumentOf(body), nil)
	if err != nil {
		return err
	}
	order, err := domain.DeviceOrderOf(resp.Value.Payload)
	if err != nil {
		return err
	}
	c.Locals(objectKey{}, resp.Value.ID)
	c.Status(fiber.StatusCreated)
	return s.devicesView(c, "", nil, strconv.FormatInt(order.Number, 10))
}

func (s *Site) cancelDeviceOrder(c *fiber.Ctx) error {
	id := c.Params("id")
	if !domain.ValidObjectID(id) {
		return domain.ErrNotFound
	}
	c.Locals(objectKey{}, id)
	form, err := readForm(c)
	if err != nil {
		return err
	}
	v, err := strconv.ParseInt(form.Get("version"), 10, 64)
	if err != nil || v < 1 {
		return &domain.ValidationError{Field: "version", Message: "the form names no version: reload the page"}
	}
	if _, err := s.api.Orders.Cancel(ctx(c), memberOf(c).Grant(), id, ports.Write{IfMatch: atVersion(v)}); err != nil {
		return err
	}
	return s.devices(c, "")
}

// assignResult files an unmatched result under the order the form names ("id:version").
func (s *Site) assignResult(c *fiber.Ctx) error {
	file, err := domain.ParseFileID(c.Params("file"))
	if err != nil {
		return domain.ErrNotFound
	}
	form, err := readForm(c)
	if err != nil {
		return err
	}
	order, version, _ := strings.Cut(form.Get("order"), ":")
	v, err := strconv.ParseInt(version, 10, 64)
	if err != nil || v < 1 || !domain.ValidObjectID(order) {
		return &domain.ValidationError{Field: "order", Message: "the form names no order: reload the page"}
	}
	c.Locals(objectKey{}, order)
	if _, err := s.api.Orders.Assign(ctx(c), memberOf(c).Grant(), order, file, ports.Write{IfMatch: atVersion(v)}); err != nil {
		return err
	}
	return s.devices(c, "")
}

func (s *Site) rotateUploadSecret(c *fiber.Ctx) error {
	m := memberOf(c)
	c.Locals(objectKey{}, m.Company.String())
	secret, err := s.api.Integrations.RotateUploadSecret(ctx(c), m.Grant())
	if err != nil {
		return err
	}
	return s.devices(c, secret)
}
