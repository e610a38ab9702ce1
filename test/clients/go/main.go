// Command praxissync is an integrator's first sync, written against the Go
// client that oapi-codegen generates with its default options from the
// served OpenAPI document (the test writes client.gen.go beside this file).
// It exits non-zero, naming the step, when the API does not behave as the
// document says.
package main

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
)

func main() {
	if err := run(context.Background(), os.Getenv("PRAXIS_URL"), os.Getenv("CLIENT_ID"), os.Getenv("CLIENT_SECRET"), os.Getenv("CUSTOMER_ID")); err != nil {
		fmt.Fprintln(os.Stderr, "sync:", err)
		os.Exit(1)
	}
	fmt.Println("first sync done")
}

func run(ctx context.Context, base, clientID, clientSecret, customerParam string) error {
	customer, err := strconv.Atoi(customerParam)
	if err != nil {
		return fmt.Errorf("CUSTOMER_ID: %w", err)
	}
	anon, err := NewClientWithResponses(base)
	if err != nil {
		return err
	}
	// 1. A token, client_secret_basic.
	tok, err := anon.TokenWithFormdataBodyWithResponse(ctx, TokenFormdataRequestBody{GrantType: ClientCredentials},
		func(_ context.Context, r *http.Request) error { r.SetBasicAuth(clientID, clientSecret); return nil })
	if err != nil || tok.JSON200 == nil {
		return fmt.Errorf("token: %v %s", err, body(tok))
	}
	bearer := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+tok.JSON200.AccessToken)
		return nil
	}
	api, err := NewClientWithResponses(base, WithRequestEditorFn(bearer))
	if err != nil {
		return err
	}
	// 2. The practice's patients, paged to the end.
	limit := Limit(1)
	var cursor *Cursor
	patients := 0
	for {
		page, err := api.ListCustomerWithResponse(ctx, &ListCustomerParams{Limit: &limit, Cursor: cursor})
		if err != nil || page.JSON200 == nil {
			return fmt.Errorf("list customers: %v %s", err, body(page))
		}
		patients += len(page.JSON200.Data)
		c := page.JSON200.NextCursor
		cursor = &c
		if !page.JSON200.HasMore {
			break
		}
	}
	if patients == 0 {
		return fmt.Errorf("list customers: no patient")
	}
	// 2b. A patient found by what an integrator types, and matched by what a lab knows.
	if err := find(ctx, api); err != nil {
		return err
	}
	// 3. A note, created twice with one Idempotency-Key: once.
	key := IdempotencyKey("first-sync-note-1")
	text := "Befund besprochen"
	first, err := api.CreateNoteWithResponse(ctx, &CreateNoteParams{IdempotencyKey: &key}, CreateNoteJSONRequestBody{CustomerId: customer, Text: text})
	if err != nil || first.JSON201 == nil {
		return fmt.Errorf("create note: %v %s", err, body(first))
	}
	again, err := api.CreateNoteWithResponse(ctx, &CreateNoteParams{IdempotencyKey: &key}, CreateNoteJSONRequestBody{CustomerId: customer, Text: text})
	if err != nil || again.JSON201 == nil || again.JSON201.Id != first.JSON201.Id || again.Headers201 == nil ||
		again.Headers201.IdempotentReplayed == nil || *again.Headers201.IdempotentReplayed != "true" {
		return fmt.Errorf("replayed create: %v %s", err, body(again))
	}
	// 4. Notes paged to the end; the last cursor is kept.
	notes, cursor, err := pageNotes(ctx, api, nil)
	if err != nil {
		return err
	}
	if len(notes) != 1 {
		return fmt.Errorf("notes: %d, want the one created", len(notes))
	}
	// 5. A later write; the kept cursor answers exactly it.
	later, err := api.CreateNoteWithResponse(ctx, &CreateNoteParams{}, CreateNoteJSONRequestBody{CustomerId: customer, Text: "Kontrolle in 3 Monaten"})
	if err != nil || later.JSON201 == nil {
		return fmt.Errorf("create a later note: %v %s", err, body(later))
	}
	resumed, _, err := pageNotes(ctx, api, cursor)
	if err != nil {
		return err
	}
	if len(resumed) != 1 || resumed[0].Id != later.JSON201.Id {
		return fmt.Errorf("resume: %d notes, want only the later one", len(resumed))
	}
	// 6. A patient changed with the version read (If-Match), a stale
	// version refused (412), a current copy not sent again (304).
	if err := conditional(ctx, api, customerParam); err != nil {
		return err
	}
	// 7. A file up and down again.
	pdf := []byte("%PDF-1.4\n% first sync\n" + string(bytes.Repeat([]byte("x"), 4000)))
	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	_ = w.WriteField("customer_id", customerParam)
	part, _ := w.CreateFormFile("file", "befund.pdf")
	_, _ = part.Write(pdf)
	_ = w.Close()
	up, err := api.UploadFilesWithBodyWithResponse(ctx, &UploadFilesParams{}, w.FormDataContentType(), &form)
	if err != nil || up.JSON201 == nil || len(up.JSON201.Data) != 1 {
		return fmt.Errorf("upload: %v %s", err, body(up))
	}
	down, err := api.DownloadFileWithResponse(ctx, up.JSON201.Data[0].Id.String(), &DownloadFileParams{})
	if err != nil || down.StatusCode() != http.StatusOK || !bytes.Equal(down.Body, pdf) {
		return fmt.Errorf("download: %v, %d, %d bytes", err, down.StatusCode(), len(down.Body))
	}
	return nil
}

// find writes a patient, finds it by a word of its name as an integrator
// types it (folded: Ueberr finds Überreiter), sorted and counted, and
// matches it by its names and birth date, as a lab would.
func find(ctx context.Context, api *ClientWithResponses) error {
	patient := `{"first_name":"Karl","last_name":"Überreiter","birth_date":"1944-04-04"}`
	made, err := api.CreateCustomerWithBodyWithResponse(ctx, &CreateCustomerParams{}, "application/json", strings.NewReader(patient))
	if err != nil || made.JSON201 == nil {
		return fmt.Errorf("create a patient: %v %s", err, body(made))
	}
	id := made.JSON201.Id
	q, sort, total := "ueberr karl", "last_name,-birth_date", true
	found, err := api.ListCustomerWithResponse(ctx, &ListCustomerParams{Q: &q, Sort: &sort, Total: &total})
	if err != nil || found.JSON200 == nil || found.JSON200.Total == nil || *found.JSON200.Total != 1 || len(found.JSON200.Data) != 1 {
		return fmt.Errorf("search q=%s: %v %s", q, err, body(found))
	}
	if c, err := found.JSON200.Data[0].AsCustomer(); err != nil || c.Id != id {
		return fmt.Errorf("search q=%s: %v %s, want patient %d", q, err, body(found), id)
	}
	matched, err := api.MatchCustomerWithBodyWithResponse(ctx, &MatchCustomerParams{}, "application/json",
		strings.NewReader(`{"customer":{"first_name":"Karl","last_name":"Ueberreiter","birth_date":"1944-04-04"}}`))
	if err != nil || matched.JSON200 == nil || len(matched.JSON200.Data) == 0 {
		return fmt.Errorf("match: %v %s", err, body(matched))
	}
	if best := matched.JSON200.Data[0]; best.Customer.Id != id || best.Grade != "probable" || best.Score <= 0 {
		return fmt.Errorf("match: the best candidate %d %s %v, want %d probable", best.Customer.Id, best.Grade, best.Score, id)
	}
	return nil
}

// conditional changes the patient with the version it read, then holds
// that version against If-Match again (412) and the new one against
// If-None-Match (304).
func conditional(ctx context.Context, api *ClientWithResponses, id string) error {
	read, err := api.GetCustomerWithResponse(ctx, id, &GetCustomerParams{})
	if err != nil || read.JSON200 == nil {
		return fmt.Errorf("read a patient: %v %s", err, body(read))
	}
	etag := IfMatch(read.HTTPResponse.Header.Get("ETag"))
	if string(etag) != fmt.Sprintf("%q", fmt.Sprint(read.JSON200.Version)) {
		return fmt.Errorf("read a patient: ETag %s for version %d", etag, read.JSON200.Version)
	}
	key := IdempotencyKey("first-sync-patch-1")
	patch := func(phone string, key *IdempotencyKey) (*PatchCustomerResponse, error) {
		return api.PatchCustomerWithBodyWithResponse(ctx, id, &PatchCustomerParams{IfMatch: &etag, IdempotencyKey: key},
			"application/merge-patch+json", strings.NewReader(`{"phone":"`+phone+`"}`))
	}
	changed, err := patch("+4315551234", &key)
	if err != nil || changed.JSON200 == nil || changed.JSON200.Version != read.JSON200.Version+1 {
		return fmt.Errorf("conditional patch: %v %s", err, body(changed))
	}
	stale, err := patch("+4315559999", nil)
	if err != nil || stale.StatusCode() != http.StatusPreconditionFailed {
		return fmt.Errorf("stale patch: %v %s", err, body(stale))
	}
	current := IfNoneMatch(changed.HTTPResponse.Header.Get("ETag"))
	same, err := api.GetCustomerWithResponse(ctx, id, &GetCustomerParams{IfNoneMatch: &current})
	if err != nil || same.StatusCode() != http.StatusNotModified {
		return fmt.Errorf("conditional read: %v %d", err, same.StatusCode())
	}
	return nil
}

// pageNotes reads the notes after cursor to the end and returns the cursor to resume from.
func pageNotes(ctx context.Context, api *ClientWithResponses, cursor *Cursor) ([]Note, *Cursor, error) {
	var out []Note
	for {
		page, err := api.ListNoteWithResponse(ctx, &ListNoteParams{Cursor: cursor})
		if err != nil || page.JSON200 == nil {
			return nil, nil, fmt.Errorf("list notes: %v %s", err, body(page))
		}
		for _, item := range page.JSON200.Data {
			n, err := item.AsNote()
			if err != nil {
				return nil, nil, fmt.Errorf("a listed note: %w", err)
			}
			out = append(out, n)
		}
		c := page.JSON200.NextCursor
		cursor = &c
		if !page.JSON200.HasMore {
			return out, cursor, nil
		}
	}
}

// body is an answer's status and body for an error message.
func body(r any) string {
	v := reflect.ValueOf(r)
	if !v.IsValid() || v.IsNil() {
		return "(no answer)"
	}
	resp, _ := v.Elem().FieldByName("HTTPResponse").Interface().(*http.Response)
	if resp == nil {
		return "(no answer)"
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, v.Elem().FieldByName("Body").Bytes())
}
