# praxis — see README.md. Everything installs from the Go module proxy.
GO            ?= go
BIN           := bin/praxis
GOLANGCI_LINT := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
HELM          := helm.sh/helm/v3/cmd/helm@v3.22.0
KUBE_VALIDATE := sigs.k8s.io/kubectl-validate@v0.0.4
OAPI_CODEGEN  := github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
TOOLS         := $(CURDIR)/bin/tools
IMAGE         ?= praxis:dev
FUZZTIME      ?= 30s

.PHONY: build server bridge-windows run test envtest versitygw tools node-tools lint bench fuzz image clean

VERSION       ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

BRIDGE        := bin/praxis-gdt-bridge
OPERATOR      := bin/praxis-operator
LDFLAGS       := -X github.com/praxis-health/praxis/app.Version=$(VERSION)

## build: the server, the GDT bridge and the operator (three programs)
build: server
	$(GO) build -trimpath -o $(BRIDGE) ./app/cmd/praxis-gdt-bridge
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(OPERATOR) ./app/cmd/praxis-operator

## server: the server alone, which is all `make run` needs (no Kubernetes libraries in it)
server:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./app/cmd/praxis

## bridge-windows: the GDT bridge for the practice's Windows PC
bridge-windows:
	GOOS=windows GOARCH=amd64 $(GO) build -trimpath -o $(BRIDGE).exe ./app/cmd/praxis-gdt-bridge

## run: serve on the embedded defaults (SQLite and files under ./data, in-process stores)
run: server
	./$(BIN) serve

## test: every test, with the race detector; PostgreSQL/Redis tests use the local servers
## or PRAXIS_TEST_POSTGRES_URL / PRAXIS_TEST_REDIS_URL (they skip loudly when unreachable, fail under CI=true);
## the operator tests a kube-apiserver and etcd (see envtest), the S3 tests Versity Gateway (see versitygw)
## -parallel 4: the black-box tests wait on the processes they start more than they compute (the CPU is
## ~60 % busy with go's default of GOMAXPROCS at once): four at once, the test package took 299-313 s against 407-415 s on 2 cores
test: tools node-tools
	assets=$$(GO=$(GO) .ci/envtest-assets) || { echo "make: envtest binaries could not be built: the operator tests will skip" >&2; assets=; }; \
	vgw=$$(GO=$(GO) .ci/versitygw) || { echo "make: Versity Gateway could not be built: the S3 tests will skip" >&2; vgw=; }; \
	KUBEBUILDER_ASSETS=$$assets PRAXIS_TEST_VERSITYGW=$$vgw PRAXIS_HELM=$(TOOLS)/helm PRAXIS_KUBECTL_VALIDATE=$(TOOLS)/kubectl-validate $(GO) test -race -count=1 -parallel 4 -timeout 20m ./...

## envtest: etcd and kube-apiserver for the operator tests, built from the Go module proxy
## (their downloads are not reachable) and cached outside the clone, keyed by version
## (~/.cache/praxis-envtest; about 9 minutes cold on 2 cores, instant warm)
envtest:
	GO=$(GO) .ci/envtest-assets

## versitygw: Versity Gateway, a real S3-compatible server for the S3 tests, built from the Go
## module proxy and cached outside the clone (~/.cache/praxis-versitygw; a few minutes cold)
versitygw:
	GO=$(GO) .ci/versitygw

## tools: helm and kubectl-validate (built-in Kubernetes API schemas, offline) for the chart tests,
## and oapi-codegen for the generated-client test, built from the Go module proxy into bin/tools once
tools: $(TOOLS)/helm $(TOOLS)/kubectl-validate $(TOOLS)/oapi-codegen
$(TOOLS)/helm:
	GOBIN=$(TOOLS) $(GO) install $(HELM)
$(TOOLS)/kubectl-validate:
	GOBIN=$(TOOLS) $(GO) install $(KUBE_VALIDATE)
$(TOOLS)/oapi-codegen:
	GOBIN=$(TOOLS) $(GO) install $(OAPI_CODEGEN)

## node-tools: the OpenAPI linters (Redocly, Spectral) and the TypeScript client generator the tests run, from the npm registry,
## exactly as test/node/package-lock.json pins them; reinstalled only when the lock file changes
node-tools: test/node/node_modules/.installed
test/node/node_modules/.installed: test/node/package-lock.json
	cd test/node && npm ci --no-audit --no-fund --ignore-scripts
	touch $@

## lint: go vet, golangci-lint, and the contract check: the served OpenAPI document against the
## last release's (api/releases/) with oasdiff; an undeclared breaking change fails (api/notes.json)
lint:
	$(GO) vet ./...
	$(GO) run $(GOLANGCI_LINT) run ./...
	$(GO) test -count=1 -run 'TestContractChangesAreDeclared|TestReleaseFilesAreCurrent' ./api/

## bench: Go benchmarks, then the load programs against the built binary (figures printed):
## uploads on the embedded defaults; OAuth, booking slots, the million-row sync, reads by id (ids=) and
## import/export, the audit trail's cost (its own build, -tags auditbench), webhook latency and
## in-order throughput, one vs three replicas with a rolling restart, and the hot statements prepared
## vs not (GET company and customer, same build, one run), on PostgreSQL + Redis; and on a Patroni
## cluster of its own (root): planning's share of PostgreSQL's time and a failover's write gap; the
## FHIR door's paging and searches, a FHIR export of a million records against the native sync, and
## a quiet practice's reads beside a busy one with and without its share of the replica.
## Exits non-zero if a target is missed.
bench: build
	$(GO) test -run=NONE -bench=. -benchmem ./...
	$(GO) run ./test/bench/upload -binary $(BIN); upload=$$?; \
	hydra=$$(GO=$(GO) .ci/hydra) || { echo "make: Ory Hydra could not be built: token issuance is not compared with it" >&2; hydra=; }; \
	$(GO) run ./test/bench/oauth -binary $(BIN) -hydra "$$hydra"; oauth=$$?; \
	$(GO) run ./test/bench/booking -binary $(BIN); booking=$$?; \
	$(GO) run ./test/bench/records -binary $(BIN); records=$$?; \
	$(GO) run ./test/bench/batch -binary $(BIN); batch=$$?; \
	$(GO) run ./test/bench/devices -binary $(BIN); devices=$$?; \
	$(GO) run ./test/bench/exchange -binary $(BIN); exchange=$$?; \
	$(GO) run ./test/bench/audit; audit=$$?; \
	$(GO) run ./test/bench/webhooks -binary $(BIN); webhooks=$$?; \
	$(GO) run ./test/bench/replicas -binary $(BIN); replicas=$$?; \
	$(GO) run ./test/bench/prepared -binary $(BIN); prepared=$$?; \
	$(GO) run ./test/bench/failover -binary $(BIN); failover=$$?; \
	$(GO) run ./test/bench/fhir -binary $(BIN); fhir=$$?; \
	$(GO) run ./test/bench/fhirexport -binary $(BIN); fhirexport=$$?; \
	$(GO) run ./test/bench/neighbours -binary $(BIN); neighbours=$$?; \
	exit $$((upload | oauth | booking | records | batch | devices | exchange | audit | webhooks | replicas | prepared | failover | fhir | fhirexport | neighbours))

## fuzz: run each fuzz target for FUZZTIME (their seed corpora run in `make test`), then the
## bad-input suite with 20,000 random requests more per backend (the seed is logged)
fuzz:
	$(GO) test -run=NONE -fuzz=FuzzParseUploadHeaders -fuzztime=$(FUZZTIME) ./domain/
	$(GO) test -run=NONE -fuzz=FuzzParseGDT -fuzztime=$(FUZZTIME) ./domain/gdt/
	$(GO) test -run=NONE -fuzz=FuzzLooksLikeGDT -fuzztime=$(FUZZTIME) ./domain/gdt/
	$(GO) test -run=NONE -fuzz=FuzzGDTPatientCheck -fuzztime=$(FUZZTIME) ./domain/gdt/
	$(GO) test -run=NONE -fuzz=FuzzGDTWriterRoundTrip -fuzztime=$(FUZZTIME) ./domain/gdt/
	$(GO) test -run=NONE -fuzz=FuzzValidObjectID -fuzztime=$(FUZZTIME) ./domain/
	$(GO) test -run=NONE -fuzz=FuzzUploadHandler -fuzztime=$(FUZZTIME) ./adapters/httpapi/
	$(GO) test -run=NONE -fuzz=FuzzTokenEndpoint -fuzztime=$(FUZZTIME) ./adapters/httpapi/
	PRAXIS_BAD_INPUT_RANDOM=20000 $(GO) test -count=1 -run=TestBadInputNeverAnswers5xx -v ./test/

## image: the container image (needs a Docker engine)
image:
	docker build -t $(IMAGE) --build-arg VERSION=$(VERSION) .

clean:
	rm -rf bin
