package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/praxis-health/praxis/adapters/httpapi"
	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

// FuzzUploadHandler drives the upload endpoint with arbitrary headers and
// bodies: the reply is always 200 or 400 in the contract's shape, and a
// refused request leaves no row, no quota change and no object behind.
func FuzzUploadHandler(f *testing.F) {
	ctx := context.Background()
	env := testenv.NewEmbedded(f)
	companies, bucket := env.Companies, env.Bucket
	company, secret, err := env.Admin.CreateCompany(ctx, usecase.NewCompanyInput{Name: "Fuzz", StorageQuota: 1 << 40})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := env.Admin.CreateCustomer(ctx, usecase.NewCustomerInput{Company: company.ID, ID: 7, FirstName: "A", LastName: "B"}); err != nil {
		f.Fatal(err)
	}
	uploads := env.Uploads
	app := httpapi.Hosted(httpkit.Telemetry{}, nil, httpapi.NewUploads(uploads, nil, nil, httpapi.UploadOptions{IdleTimeout: time.Second}, httpkit.Telemetry{}))

	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	fw, _ := w.CreateFormFile("file", "a.pdf")
	_, _ = fw.Write([]byte("%PDF-1.4\nbody"))
	_ = w.Close()
	valid := body.Bytes()
	ct := w.FormDataContentType()
	for _, seed := range []struct {
		company, customer, secret, contentType string
		body                                   []byte
	}{
		{company.ID.String(), "7", string(secret), ct, valid},
		{company.ID.String(), "007", string(secret), ct, valid[:len(valid)/2]},
		{company.ID.String(), "7", string(secret), "multipart/form-data", valid},
		{company.ID.String(), "7", string(secret), ct, nil},
		{"x", "7", string(secret), ct, valid},
		{company.ID.String(), "8", "nope", "text/plain", []byte("hello")},
	} {
		f.Add(seed.company, seed.customer, seed.secret, seed.contentType, seed.body)
	}

	f.Fuzz(func(t *testing.T, companyHeader, customerHeader, secretHeader, contentType string, payload []byte) {
		before := snapshot(t, ctx, companies, bucket, company.ID)
		req := httptest.NewRequest("POST", "/api/gdt/upload", bytes.NewReader(payload))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("x-gdt-company", companyHeader)
		req.Header.Set("x-sonogdt-customer", customerHeader)
		req.Header.Set("x-gdt-secret", secretHeader)
		resp, err := app.Test(req, int((10 * time.Second).Milliseconds()))
		if err != nil {
			return // net/http refused to build the request (invalid header bytes): nothing reached the server
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var reply struct {
			Status  string `json:"status"`
			Message string `json:"message"`
			Files   []struct {
				Size int64 `json:"size"`
			} `json:"files"`
		}
		if err := json.Unmarshal(raw, &reply); err != nil {
			t.Fatalf("%d %q is not JSON", resp.StatusCode, raw)
		}
		after := snapshot(t, ctx, companies, bucket, company.ID)
		switch resp.StatusCode {
		case 200:
			var added int64
			for _, f := range reply.Files {
				added += f.Size
			}
			if reply.Status != "success" || after.used-before.used != added || after.objects-before.objects != len(reply.Files) {
				t.Fatalf("success %q but storage went from %+v to %+v", raw, before, after)
			}
		case 400, 429: // 429: the company's upload secret is locked out after wrong secrets
			if reply.Status != "error" || reply.Message == "" || after != before {
				t.Fatalf("refusal %q; storage went from %+v to %+v", raw, before, after)
			}
		default:
			t.Fatalf("status %d: %q", resp.StatusCode, raw)
		}
	})
}

type storageState struct {
	used    int64
	objects int
}

func snapshot(t *testing.T, ctx context.Context, companies *sqlstore.CompanyRepository, bucket *blob.Bucket, id domain.CompanyID) storageState {
	t.Helper()
	c, err := companies.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	st := storageState{used: c.StorageUsed}
	iter := bucket.List(nil)
	for {
		if _, err := iter.Next(ctx); err != nil {
			break
		}
		st.objects++
	}
	return st
}
