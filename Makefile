# ccmkit cloud-controller-manager. `make demo` and `make test` work on a fresh
# machine with Go: everything else is built from the Go module proxy.

GO        ?= go
BIN       := bin
TOOLS_DIR ?= $(or $(CCM_TOOLS_DIR),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ccmkit/k8s-v1.37.1)
export CCM_TOOLS_DIR := $(TOOLS_DIR)
DEMO_FLAGS ?=
CLOUD      ?= tencentcloud
E2E_FLAGS  ?=
E2E_SHARDS ?= 4
E2E_RUN    ?=
BENCH_FLAGS ?=
BENCH_ROUTES_FLAGS ?=
SOAK_DURATION ?= 30m
SOAK_SAMPLE   ?= 30s
SOAK_WARMUP   ?= 3m
SOAK_OUT      ?= bench/results/soak.json
SOAK_TIMEOUT  ?= 2h
# the soak's loopback addresses (test/e2e/shard_test.go): the last shard, apart from a `make e2e` running at the same time
SOAK_SHARD    ?= 13
# --version and ccmkit_build_info: git describe and the commit, stamped at link time.
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X github.com/ccmkit/ccm/internal/buildinfo.version=$(VERSION) -X github.com/ccmkit/ccm/internal/buildinfo.revision=$(REVISION)

.PHONY: soak chaos all build generate tools browser test unit e2e e2e-then-smoke e2e-durations bench bench-routes bench-smoke demo lint fmt tidy clean image docker-image release

all: build

## build: the cloud-controller-manager and cloudsim binaries, into bin/
build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/cloud-controller-manager ./cmd/cloudsim

## generate: every generated file: the provider and dialect lists and the chart's provider list
## (hack/registrygen), docs/annotations.md, docs/configuration.md's key tables; `go test ./...` fails when one is stale
generate:
	$(GO) run ./hack/registrygen
	$(GO) generate ./internal/annotations
	$(GO) run ./hack/configdoc

## tools: etcd and kube-apiserver for the local control plane (cached outside the repo)
tools:
	@bash hack/tools/build.sh >/dev/null

## browser: Debian's Chromium for the console's browser test (TestConsole), with apt-get when missing
browser:
	@bash hack/tools/chromium.sh

## test: unit tests with the race detector beside the e2e suite against a real control plane and the bench smoke.
## The e2e suite mostly waits (about one core of two), so the unit tests run at the same time, at the lowest CPU
## priority: the e2e processes get the CPU when they want it. Each part's output is printed whole as it ends.
test: tools browser build
	$(MAKE) --no-print-directory -j2 --output-sync=target unit e2e-then-smoke UNIT_NICE='nice -n 19'

# e2e-then-smoke: make test's second job, beside the unit tests (which under load end last)
e2e-then-smoke:
	$(MAKE) --no-print-directory e2e
	$(MAKE) --no-print-directory bench-smoke

## unit: the unit tests with the race detector (UNIT_NICE: a command prefix, e.g. nice -n 19).
## -trimpath here, for the e2e binary and the bench smoke: without it the build cache keys every package of this
## module by its directory, and each fresh clone (CI's) compiles the whole module again (measured: 780 s of a cold
## race build; 135 s for a second clone with -trimpath). -ldflags=-s -w: go test links every test binary afresh, and
## linking is the largest CPU cost of make test (about 10 CPU-seconds for a large package with -race); without the
## symbol table and DWARF, which no test reads (stack traces and race reports use the runtime's own tables), a
## link takes about a fifth less
UNIT_NICE ?=
TEST_FLAGS := -trimpath -count=1 '-ldflags=-s -w'
unit:
	$(UNIT_NICE) $(GO) test -race $(TEST_FLAGS) ./...
	cd hack/promcheck && $(UNIT_NICE) $(GO) test -race $(TEST_FLAGS) ./...
	cd hack/image && $(UNIT_NICE) $(GO) test -race $(TEST_FLAGS) ./...
	cd hack/release && $(UNIT_NICE) $(GO) test -race $(TEST_FLAGS) ./...

## e2e: the e2e suite (needs `make tools build`), in E2E_SHARDS processes at once (default 4; hack/e2eshards),
## E2E_RUN=regexp for some tests only; e2e-durations: the same, recording the tests' durations for dealing them
e2e:
	$(GO) test -c -trimpath '-ldflags=-s -w' -tags e2e -o $(BIN)/e2e.test ./test/e2e/
	CCM_BINARY=$(CURDIR)/$(BIN)/cloud-controller-manager \
	  $(GO) run ./hack/e2eshards -binary $(BIN)/e2e.test -shards $(E2E_SHARDS) -run '$(E2E_RUN)' $(E2E_FLAGS)

e2e-durations:
	$(MAKE) e2e E2E_FLAGS=-record

## bench: every benchmark section (nodes, routes, lb) into bench/results/latest.json and SVG plots beside it;
## BENCH_FLAGS=--quick for a small run of each (into bench/results/quick/), BENCH_FLAGS='--sections=nodes --nodes=1000'
## to choose (go run ./bench --help); see docs/scale.md
bench: tools build
	$(GO) run ./bench --ccm-binary $(BIN)/cloud-controller-manager $(BENCH_FLAGS)

## bench-routes: only the route section, into bench/results/routes/ (BENCH_ROUTES_FLAGS=--route-nodes=200 for fewer); see docs/routes.md
bench-routes: tools build
	$(GO) run ./bench --ccm-binary $(BIN)/cloud-controller-manager --sections=routes --out=bench/results/routes/latest.json $(BENCH_ROUTES_FLAGS)

# bench-smoke: the node section at 200 nodes, checking correctness and the call budget only (part of make test)
bench-smoke:
	CCM_BINARY=$(CURDIR)/$(BIN)/cloud-controller-manager \
	  $(GO) test -tags e2e $(TEST_FLAGS) -timeout 15m -v ./bench/nodes/

## demo: a local control plane, cloudsim and the CCM initializing nodes (CLOUD=oci for OCI, keyless: instance principals; DEMO_FLAGS=--check exits when done, --oci-auth api-key signs with a key)
demo: tools build
	$(GO) run ./hack/demo --cloud $(CLOUD) --ccm-binary $(BIN)/cloud-controller-manager $(DEMO_FLAGS)

## chaos: the fault campaign at full size (50 nodes, 20 LoadBalancer Services per fault), each cloud's rounds in its
## own shard; writes bench/results/chaos.json
chaos: tools build
	rm -f bench/results/chaos.json
	$(GO) test -c -trimpath '-ldflags=-s -w' -tags e2e -o $(BIN)/e2e.test ./test/e2e/
	CCM_BINARY=$(CURDIR)/$(BIN)/cloud-controller-manager CHAOS_NODES=50 CHAOS_SERVICES=20 CHAOS_HOLD_SECONDS=15 CHAOS_UNREACHABLE_SECONDS=30 \
	  CHAOS_OUT=$(CURDIR)/bench/results/chaos.json \
	  $(GO) run ./hack/e2eshards -binary $(BIN)/e2e.test -shards 2 -timeout 60m -run '^TestFaultCampaign' $(E2E_FLAGS)

## soak: both clouds at once for SOAK_DURATION (30m): a Tencent and an OCI CCM under node churn, Service
## creation, change and deletion, and traffic through every VIP; RSS, goroutines and fds sampled every SOAK_SAMPLE
## (30s), each series' fitted slope judged flat after SOAK_WARMUP (3m); 0 failed requests and 0 leaked cloud
## resources; writes bench/results/soak.json and soak.svg, fails otherwise (not part of `make test`; docs/reliability.md)
soak: tools build
	CCM_BINARY=$(CURDIR)/$(BIN)/cloud-controller-manager SOAK_DURATION=$(SOAK_DURATION) SOAK_SAMPLE=$(SOAK_SAMPLE) \
	  SOAK_WARMUP=$(SOAK_WARMUP) SOAK_OUT=$(SOAK_OUT) E2E_SHARD=$(SOAK_SHARD) \
	  $(GO) test -tags 'e2e soak' -count=1 -timeout $(SOAK_TIMEOUT) -v -run '^TestSoak$$' ./test/e2e/

# golangci-lint, pinned in its own module (hack/lint), built once into the
# cache outside the repo, by version.
GOLANGCI_VERSION := $(shell sed -n 's|.*github.com/golangci/golangci-lint/v2 \(v[0-9.]*\).*|\1|p' hack/lint/go.mod)
GOLANGCI := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ccmkit/golangci-lint-$(GOLANGCI_VERSION)/golangci-lint
$(GOLANGCI):
	cd hack/lint && $(GO) build -o $(GOLANGCI) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

## lint: gofmt, go vet and golangci-lint (.golangci.yml)
lint: $(GOLANGCI)
	@out=$$(gofmt -l cmd pkg internal test hack bench); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/e2e/ ./bench/...
	$(GO) vet -tags 'e2e soak' ./test/e2e/
	cd hack/promcheck && $(GO) vet ./...
	cd hack/image && $(GO) vet ./...
	cd hack/release && $(GO) vet ./...
	$(GOLANGCI) run ./...
	@for m in . hack/promcheck hack/image hack/release hack/lint hack/tools; do (cd $$m && $(GO) mod tidy -diff >/dev/null) || { echo "go.mod of $$m is not tidy: run go mod tidy there"; exit 1; }; done

IMAGE_REPO ?= ghcr.io/ccmkit
## image: the CCM and cloudsim images for linux/amd64 and linux/arm64 without a Docker engine (hack/image):
## OCI layouts and docker-load tarballs in bin/image; IMAGE_PUSH=1 pushes them to IMAGE_REPO
image:
	@for arch in amd64 arm64; do \
	  mkdir -p $(BIN)/linux_$$arch && \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/linux_$$arch/ ./cmd/cloud-controller-manager ./cmd/cloudsim || exit 1; \
	done
	cd hack/image && $(GO) run . --bin-dir $(CURDIR)/$(BIN) --out $(CURDIR)/$(BIN)/image --repo $(IMAGE_REPO) --version $(VERSION) --revision $(REVISION)

RELEASE_DIR ?= $(BIN)/release
# The commit's time: the SBOMs' timestamp, so that two runs give the same bytes.
COMMIT_TIME ?= $(shell git log -1 --format=%cI 2>/dev/null || echo 1970-01-01T00:00:00Z)
## release: static binaries of the CCM and cloudsim for linux/amd64 and linux/arm64 in bin/release, a CycloneDX SBOM
## beside each (<binary>.cdx.json, from its build info), the images as OCI layouts in bin/release/image with each
## image's SBOM attached as an OCI artifact, and SHA256SUMS over it all; reproducible (docs/operations.md)
release:
	@rm -rf $(RELEASE_DIR) && mkdir -p $(RELEASE_DIR)
	@for arch in amd64 arm64; do \
	  mkdir -p $(BIN)/linux_$$arch && \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/linux_$$arch/ ./cmd/cloud-controller-manager ./cmd/cloudsim || exit 1; \
	  for cmd in cloud-controller-manager cloudsim; do cp $(BIN)/linux_$$arch/$$cmd $(RELEASE_DIR)/$$cmd-linux-$$arch || exit 1; done; \
	done
	cd hack/release && $(GO) run . --sboms --dir $(CURDIR)/$(RELEASE_DIR) --version $(VERSION) --time $(COMMIT_TIME)
	cd hack/image && $(GO) run . --push=false --bin-dir $(CURDIR)/$(BIN) --out $(CURDIR)/$(RELEASE_DIR)/image --repo $(IMAGE_REPO) \
	  --version $(VERSION) --revision $(REVISION) --sbom-dir $(CURDIR)/$(RELEASE_DIR)
	cd hack/release && $(GO) run . --sums --dir $(CURDIR)/$(RELEASE_DIR)
	@cat $(RELEASE_DIR)/SHA256SUMS

## docker-image: the same images with a Docker engine, from the Dockerfile
IMAGE ?= $(IMAGE_REPO)/cloud-controller-manager
docker-image:
	docker build --target cloud-controller-manager --build-arg VERSION=$(VERSION) -t $(IMAGE):$(VERSION) .
	docker build --target cloudsim --build-arg VERSION=$(VERSION) -t $(IMAGE_REPO)/cloudsim:$(VERSION) .

tidy:
	$(GO) mod tidy
	cd hack/tools && $(GO) mod tidy
	cd hack/promcheck && $(GO) mod tidy
	cd hack/image && $(GO) mod tidy
	cd hack/release && $(GO) mod tidy

clean:
	rm -rf $(BIN)
