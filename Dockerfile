# syntax=docker/dockerfile:1
# praxis: static binaries (the server, and the operator) on a distroless base, running as a non-root user.
#   docker build -t praxis:dev --build-arg VERSION=$(git describe --always) .

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X github.com/praxis-health/praxis/app.Version=${VERSION}" \
      -o /out/praxis ./app/cmd/praxis \
 && CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X github.com/praxis-health/praxis/app.Version=${VERSION}" \
      -o /out/praxis-operator ./app/cmd/praxis-operator \
 && mkdir -p /out/var/lib/praxis

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/praxis /praxis
# The operator is a program of its own; the chart runs it with command: ["/praxis-operator"].
COPY --from=build /out/praxis-operator /praxis-operator
# The embedded mode's working directory (SQLite and files); the chart mounts a volume here.
COPY --from=build --chown=65532:65532 /out/var/lib/praxis /var/lib/praxis
WORKDIR /var/lib/praxis
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/praxis"]
CMD ["serve"]
