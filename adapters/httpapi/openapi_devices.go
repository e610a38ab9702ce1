package httpapi

import (
	"github.com/praxis-health/praxis/domain"
)

// addDeviceRoutes documents the GDT round trip beyond the generic reads
// (device_orders_handler.go): the order's create and actions, the bridge's
// long poll, a device's credential.
func addDeviceRoutes(paths, schemas object) {
	order := domain.KindOf("device-orders")
	write := domain.WriteScope(order.Slug)
	forDevice := "403 device-credential-required: the token is not a device's own credential"
	schemas["DeviceOutbox"] = object{"type": "object", "additionalProperties": false, "required": []any{"device", "data"}, "properties": object{
		"device": object{"type": "object", "additionalProperties": false,
			"required": []any{"id", "name", "gdt_id", "praxis_gdt_id", "file_naming", "fixed_name", "removes_files"},
			"properties": object{"id": object{"type": "string", "format": "uuid"}, "name": object{"type": "string"},
				"gdt_id": object{"type": "string"}, "praxis_gdt_id": object{"type": "string"},
				"file_naming": object{"type": "string", "enum": []any{"receiver_sender", "counter", "fixed"}},
				"fixed_name":  object{"type": []any{"string", "null"}}, "removes_files": object{"type": "boolean"}}},
		"data": object{"type": "array", "items": object{"type": "object", "additionalProperties": false,
			"required": []any{"id", "number", "status", "version", "gdt"},
			"properties": object{"id": object{"type": "string", "format": "uuid"}, "number": object{"type": "integer"},
				"status":  object{"type": "string", "enum": []any{domain.OrderOpen, domain.OrderWritten, domain.OrderCancelled}},
				"version": object{"type": "integer"},
				"gdt": object{"type": []any{"string", "null"}, "contentEncoding": "base64",
					"description": "an open order's GDT record, in the device's encoding, to be written as it is"},
				"cancel": object{"type": "string", "contentEncoding": "base64",
					"description": "a cancelled GDT 3.0 examination's 6303, for a device that took the order already"}}}},
	}}
	schemas["DeviceCredential"] = object{"type": "object", "additionalProperties": false,
		"required": []any{"client_id", "client_secret", "device_id", "scope", "previous_secret_expires_at"},
		"properties": object{"client_id": object{"type": "string"}, "client_secret": object{"type": "string", "description": "shown this once"},
			"device_id": object{"type": "string", "format": "uuid"}, "scope": object{"type": "string"},
			"previous_secret_expires_at": object{"type": []any{"string", "null"}, "format": "date-time",
				"description": "until when the secret this one replaced keeps working"}}}
	create := paths[resourcePrefix+"/"+order.Slug].(object)["post"].(object)
	create["responses"].(object)["422"] = problemResponse("invalid fields, every one listed in errors[]: another company's customer or device " +
		"is named as a missing one, a procedure the device does not offer, a customer without a field the GDT record needs; or a reused Idempotency-Key")

	action := func(id, summary, scope string, ok string, extra object) object {
		responses := object{
			"200": object{"description": ok, "content": jsonContent(ref("schemas", order.Name))},
			"404": problemResponse("no such order in this company (or, for the bridge, of its device)"),
			"409": problemResponse("order-closed: the order is done, cancelled or failed"),
			"413": problemResponse("the body is over 1 MiB"),
			"415": problemResponse("the body is not application/json"),
			"422": problemResponse("invalid fields"),
		}
		op := operation(id, summary, domain.Scope(scope), responses)
		for k, v := range extra { // after the shared answers, which they replace
			op["responses"].(object)[k] = v
		}
		conditionalWrite(op)
		return op
	}
	item := resourcePrefix + "/" + order.Slug + "/{id}"
	idParam := []any{ref("parameters", "id")}
	paths[item+"/cancel"] = object{"parameters": idParam, "post": action("cancelDeviceOrder",
		"Cancel an order that is not done (the bridge withdraws a file it wrote)", string(write), "the cancelled order", nil)}
	reason := object{"required": false, "content": jsonContent(object{"type": "object", "additionalProperties": false,
		"properties": object{"reason": object{"type": "string", "maxLength": 500}}})}
	for _, r := range []struct{ status, summary string }{
		{"written", "The bridge put the order's file in the device's folder"},
		{"taken", "The device removed the order's file"},
		{"failed", "The bridge could not write the order (reason required)"},
		{"withdrawn", "The bridge took a cancelled order's file back"},
	} {
		op := action("report"+upperFirst(r.status)+"DeviceOrder", r.summary+" (a device's credential)", string(domain.ScopeDeviceBridge), "the order as it now stands",
			object{"403": object{"description": forDevice + "; or insufficient_scope", "content": object{
				"application/problem+json": object{"schema": ref("schemas", "Problem")},
				"application/json":         object{"schema": ref("schemas", "BearerError")}}}})
		op["requestBody"] = reason
		paths[item+"/"+r.status] = object{"parameters": idParam, "post": op}
	}
	assign := action("assignDeviceOrderResult", "File a result that matched no order under this order (it is then done)", string(write),
		"the done order, naming the file", nil)
	assign["requestBody"] = object{"required": true, "content": jsonContent(object{"type": "object", "additionalProperties": false,
		"required": []any{"file_id"}, "properties": object{"file_id": object{"type": "string", "format": "uuid"}}})}
	paths[item+"/assign"] = object{"parameters": idParam, "post": assign}

	outbox := operation("deviceOutbox", "The bridge's long poll: the orders of its device to write, watch or withdraw",
		domain.ScopeDeviceBridge, object{
			"200": object{"description": "the device and its orders by number; an empty list once wait ran out",
				"content": jsonContent(ref("schemas", "DeviceOutbox"))},
			"422": problemResponse("wait is not 0 to 50, or an unknown parameter"),
		})
	outbox["responses"].(object)["403"] = object{"description": forDevice + "; or insufficient_scope", "content": object{
		"application/problem+json": object{"schema": ref("schemas", "Problem")},
		"application/json":         object{"schema": ref("schemas", "BearerError")}}}
	outbox["parameters"] = []any{object{"name": "wait", "in": "query", "required": false,
		"description": "seconds to wait for an order when there is none to act on (0 to 50)",
		"schema":      object{"type": "integer", "minimum": 0, "maximum": 50, "default": 0}}}
	paths[resourcePrefix+"/device-outbox"] = object{"get": outbox}

	credential := operation("deviceCredential", "Make the device's OAuth client for its bridge, or give it a new secret",
		domain.WriteScope("devices"), object{
			"200": object{"description": "the client and its secret, shown this once",
				"content": jsonContent(ref("schemas", "DeviceCredential")),
				"headers": object{"Cache-Control": object{"schema": object{"type": "string", "enum": []any{"no-store"}}}}},
			"404": problemResponse("no such device in this company"),
			"413": problemResponse("the body is over 1 MiB"),
			"415": problemResponse("the body is not application/json"),
			"422": problemResponse("overlap_seconds is not 0 to 604800"),
		})
	credential["requestBody"] = object{"required": false, "content": jsonContent(object{"type": "object", "additionalProperties": false,
		"properties": object{"overlap_seconds": object{"type": "integer", "minimum": 0, "maximum": 604800, "default": 86400,
			"description": "how long the replaced secret keeps working"}}})}
	paths[resourcePrefix+"/devices/{id}/credential"] = object{"parameters": idParam, "post": credential}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
