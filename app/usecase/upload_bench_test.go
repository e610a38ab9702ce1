package usecase_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"testing"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
	"github.com/praxis-health/praxis/test/testenv"
)

type oneFile struct {
	data []byte
	done bool
}

func (o *oneFile) Next() (ports.Part, error) {
	if o.done {
		return ports.Part{}, io.EOF
	}
	o.done = true
	return ports.Part{FileName: "befund.pdf", Body: bytes.NewReader(o.data)}, nil
}

// BenchmarkStore is the upload use case without HTTP: sniffing, SHA-256,
// blob writes (in memory) and the accounting transaction (SQLite in memory).
func BenchmarkStore(b *testing.B) {
	for _, size := range []int{64 << 10, 15 << 20} {
		b.Run(byteSize(size), func(b *testing.B) {
			ctx := context.Background()
			env := testenv.NewEmbedded(b)
			company, secret, _ := env.Admin.CreateCompany(ctx, usecase.NewCompanyInput{Name: "Bench", StorageQuota: 1 << 50})
			customer, _ := env.Admin.CreateCustomer(ctx, usecase.NewCustomerInput{Company: company.ID, FirstName: "A", LastName: "B"})
			uploads := env.Uploads
			target, err := uploads.Authorize(ctx, ports.UploadCredentials{
				Company: ports.Header{Value: company.ID.String()}, Customer: ports.Header{Value: "1"}, Secret: ports.Header{Value: string(secret)},
			})
			if err != nil || target.Customer != customer.ID {
				b.Fatal(err)
			}
			data := make([]byte, size)
			_, _ = rand.Read(data)
			copy(data, "%PDF-1.7\n")
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := uploads.Store(ctx, target, domain.SourceGDT, &oneFile{data: data}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<20 {
		return itoa(n>>20) + "MiB"
	}
	return itoa(n>>10) + "KiB"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
