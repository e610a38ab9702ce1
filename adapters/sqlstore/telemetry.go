package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
	"github.com/uptrace/opentelemetry-go-extra/otelsql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/dbconv"
	"go.opentelemetry.io/otel/trace"
	"modernc.org/sqlite"

	"github.com/praxis-health/praxis/adapters/internal/otelattr"
)

const instrumentation = "github.com/praxis-health/praxis/adapters/sqlstore"

// Instrument gives db a client span per query and the query duration
// histogram, both in the stable OpenTelemetry database conventions
// (db.system.name, db.operation.name, db.collection.name, db.query.text as
// written with its placeholders — never an argument), and reports the
// connection pool as metrics. databaseURL names the server and database; its
// password is never read.
func Instrument(db *bun.DB, databaseURL string, tp trace.TracerProvider, mp metric.MeterProvider) (*bun.DB, error) {
	h := &queryHook{tracer: tp.Tracer(instrumentation)}
	h.system, h.common = describe(db, databaseURL)
	h.series = otelattr.NewSets(maxSeries, func(k querySeries) []attribute.KeyValue {
		return append(k.attrs(), attribute.String("db.system.name", string(h.system)))
	})
	var err error
	if h.duration, err = dbconv.NewClientOperationDuration(mp.Meter(instrumentation)); err != nil {
		return nil, err
	}
	otelsql.ReportDBStatsMetrics(db.DB, otelsql.WithMeterProvider(mp),
		otelsql.WithAttributes(attribute.String("db.system", string(h.system))))
	out := db.WithQueryHook(h)
	queryHooks.Store(out, h)
	return out, nil
}

// describe is what every span of this database shares: its system, and for
// PostgreSQL the server and the database (from the URL, without user or password).
func describe(db *bun.DB, databaseURL string) (dbconv.SystemNameAttr, []attribute.KeyValue) {
	if db.Dialect().Name().String() == "sqlite" {
		return dbconv.SystemNameSQLite, []attribute.KeyValue{semconv.DBSystemNameSQLite}
	}
	attrs := []attribute.KeyValue{semconv.DBSystemNamePostgreSQL}
	if u, err := url.Parse(databaseURL); err == nil {
		host, port := u.Hostname(), 5432
		if p, err := strconv.Atoi(u.Port()); err == nil {
			port = p
		}
		if host != "" {
			attrs = append(attrs, semconv.ServerAddress(host), semconv.ServerPort(port))
		}
		if name := strings.TrimPrefix(u.Path, "/"); name != "" {
			attrs = append(attrs, semconv.DBNamespace(name))
		}
	}
	return dbconv.SystemNamePostgreSQL, attrs
}

type queryHook struct {
	tracer   trace.Tracer
	duration dbconv.ClientOperationDuration
	system   dbconv.SystemNameAttr
	common   []attribute.KeyValue
	series   *otelattr.Sets[querySeries] // of the queries that succeeded
}

// querySeries names the duration series of a query that succeeded.
type querySeries struct{ operation, table string }

func (k querySeries) attrs() []attribute.KeyValue {
	attrs := []attribute.KeyValue{semconv.DBOperationName(k.operation)}
	if k.table != "" {
		attrs = append(attrs, semconv.DBCollectionName(k.table))
	}
	return attrs
}

// maxSeries bounds the query series whose attributes are kept built:
// operations × tables.
const maxSeries = 1024

func (h *queryHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	ctx, _ = h.tracer.Start(ctx, "db", trace.WithSpanKind(trace.SpanKindClient))
	return ctx
}

func (h *queryHook) AfterQuery(ctx context.Context, event *bun.QueryEvent) {
	series := querySeries{operation: strings.ToUpper(event.Operation())}
	if event.IQuery != nil {
		series.table = strings.Trim(event.IQuery.GetTableName(), `"`)
	}
	took := time.Since(event.StartTime).Seconds()
	failed := event.Err != nil && !errors.Is(event.Err, sql.ErrNoRows) && !errors.Is(event.Err, sql.ErrTxDone)
	var failure []attribute.KeyValue
	if failed {
		code, kind := errorCode(event.Err)
		if code != "" {
			failure = append(failure, semconv.DBResponseStatusCode(code))
		}
		failure = append(failure, semconv.ErrorTypeKey.String(kind))
		h.duration.Record(context.WithoutCancel(ctx), took, h.system, append(series.attrs(), failure...)...)
	} else {
		h.duration.RecordSet(context.WithoutCancel(ctx), took, h.series.Of(series))
	}

	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	defer span.End()
	name := series.operation
	if series.table != "" {
		name += " " + series.table
	}
	span.SetName(name)
	span.SetAttributes(h.common...)
	span.SetAttributes(series.attrs()...)
	span.SetAttributes(failure...)
	span.SetAttributes(semconv.DBQueryText(queryText(event)))
	if failed {
		// The kind of failure only: a driver's message may quote a value.
		span.SetStatus(codes.Error, "")
	}
}

// queryText is the statement as the code wrote it: placeholders in place of
// every argument, so that no value (a token hash, a name) reaches a span.
func queryText(event *bun.QueryEvent) string {
	const limit = 4096
	text := event.QueryTemplate
	if event.IQuery != nil {
		if b, err := event.IQuery.AppendQuery(schema.NewNopQueryGen(), nil); err == nil {
			text = string(b)
		}
	}
	if len(text) > limit {
		text = text[:limit]
	}
	return text
}

// errorCode is the database's own code for a failure (SQLSTATE, SQLite's
// extended result code) and error.type: that code, or the kind of error.
func errorCode(err error) (code, kind string) {
	var pgErr *pgconn.PgError
	var liteErr *sqlite.Error
	var netErr net.Error
	switch {
	case errors.As(err, &pgErr):
		code = pgErr.Code
		return code, code
	case errors.As(err, &liteErr):
		code = strconv.Itoa(liteErr.Code())
		return code, code
	case errors.Is(err, context.DeadlineExceeded):
		return "", "timeout"
	case errors.Is(err, context.Canceled):
		return "", "canceled"
	case errors.As(err, &netErr):
		return "", "network"
	}
	return "", fmt.Sprintf("%T", err)
}
