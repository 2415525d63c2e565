# ccmkit cloud-controller-manager. `make demo` and `make test` work on a fresh
# machine with Go: everything else is built from the Go module proxy.

GO        ?= go
BIN       := bin
TOOLS_DIR ?= $(or $(CCM_TOOLS_DIR),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ccmkit/k8s-v1.37.1)
export CCM_TOOLS_DIR := $(TOOLS_DIR)
DEMO_FLAGS ?=
E2E_FLAGS  ?=

.PHONY: all build tools test unit e2e demo lint fmt tidy clean image

all: build

## build: the cloud-controller-manager and cloudsim binaries, into bin/
build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./cmd/cloud-controller-manager ./cmd/cloudsim

## tools: etcd and kube-apiserver for the local control plane (cached outside the repo)
tools:
	@bash hack/tools/build.sh >/dev/null

## test: unit tests with the race detector, then the e2e suite against a real control plane
test: tools build unit e2e

unit:
	$(GO) test -race -count=1 ./...

e2e:
	CCM_BINARY=$(CURDIR)/$(BIN)/cloud-controller-manager \
	  $(GO) test -tags e2e -count=1 -timeout 30m -v $(E2E_FLAGS) ./test/e2e/

## demo: a local control plane, cloudsim and the CCM initializing nodes (DEMO_FLAGS=--check exits when done)
demo: tools build
	$(GO) run ./hack/demo --ccm-binary $(BIN)/cloud-controller-manager $(DEMO_FLAGS)

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l cmd pkg internal test hack); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/e2e/

## image: container images (needs a Docker engine with buildx; none runs on the dev machines)
IMAGE ?= ghcr.io/ccmkit/cloud-controller-manager
VERSION ?= v0.1.0
image:
	docker build --target cloud-controller-manager --build-arg VERSION=$(VERSION) -t $(IMAGE):$(VERSION) .
	docker build --target cloudsim -t $(IMAGE:cloud-controller-manager=cloudsim):$(VERSION) .

tidy:
	$(GO) mod tidy
	cd hack/tools && $(GO) mod tidy

clean:
	rm -rf $(BIN)
