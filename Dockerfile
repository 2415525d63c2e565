# syntax=docker/dockerfile:1
# Multi-stage build of a static cloud-controller-manager on distroless/static
# (CA certificates, /etc/passwd with nonroot, nothing else). Build with
# `make docker-image` (`make image` builds the same without Docker). The binary is static (CGO_ENABLED=0), which the test
# TestBinaryIsStatic checks.
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=v0.0.0-dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/ccmkit/ccm/internal/buildinfo.version=${VERSION}" \
      -o /out/cloud-controller-manager ./cmd/cloud-controller-manager && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/ccmkit/ccm/internal/buildinfo.version=${VERSION}" -o /out/cloudsim ./cmd/cloudsim

FROM gcr.io/distroless/static-debian12:nonroot AS cloud-controller-manager
COPY --from=build /out/cloud-controller-manager /cloud-controller-manager
USER 65532:65532
ENTRYPOINT ["/cloud-controller-manager"]

FROM gcr.io/distroless/static-debian12:nonroot AS cloudsim
COPY --from=build /out/cloudsim /cloudsim
USER 65532:65532
ENTRYPOINT ["/cloudsim"]
