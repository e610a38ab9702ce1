# praxis — see README.md. Everything installs from the Go module proxy.
GO            ?= go
BIN           := bin/praxis
GOLANGCI_LINT := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
FUZZTIME      ?= 30s

.PHONY: build run test lint bench fuzz clean

build:
	$(GO) build -trimpath -o $(BIN) ./app/cmd/praxis

## run: serve on the embedded defaults (SQLite and files under ./data, in-process stores)
run: build
	./$(BIN) serve

## test: every test, with the race detector; PostgreSQL/Redis tests use the local servers
## or PRAXIS_TEST_POSTGRES_URL / PRAXIS_TEST_REDIS_URL (they skip loudly when unreachable, fail under CI=true)
test:
	$(GO) test -race -count=1 ./...

lint:
	$(GO) vet ./...
	$(GO) run $(GOLANGCI_LINT) run ./...

## bench: Go benchmarks, then the load programs against the built binary (figures printed):
## uploads on the embedded defaults, OAuth on PostgreSQL + Redis. Exits non-zero if a target is missed.
bench: build
	$(GO) test -run=NONE -bench=. -benchmem ./...
	$(GO) run ./test/bench/upload -binary $(BIN); upload=$$?; \
	$(GO) run ./test/bench/oauth -binary $(BIN); oauth=$$?; \
	exit $$((upload | oauth))

## fuzz: run each fuzz target for FUZZTIME (their seed corpora run in `make test`)
fuzz:
	$(GO) test -run=NONE -fuzz=FuzzParseUploadHeaders -fuzztime=$(FUZZTIME) ./domain/
	$(GO) test -run=NONE -fuzz=FuzzUploadHandler -fuzztime=$(FUZZTIME) ./adapters/httpapi/
	$(GO) test -run=NONE -fuzz=FuzzTokenEndpoint -fuzztime=$(FUZZTIME) ./adapters/httpapi/

clean:
	rm -rf bin
