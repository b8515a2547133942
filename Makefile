# inferscale — build, test, benchmark and demo.
GO      ?= go
BIN     := bin
GOFLAGS_STATIC := CGO_ENABLED=0

.PHONY: all build test vet fmt bench demo e2e image clean

all: build

## build: the two CPA binaries (pure Go, static) into bin/
build:
	$(GOFLAGS_STATIC) $(GO) build -trimpath -o $(BIN)/metric ./metric
	$(GOFLAGS_STATIC) $(GO) build -trimpath -o $(BIN)/evaluate ./evaluate

## vet: gofmt and go vet
vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

## test: everything CI runs
test: build vet test-dcgm
	$(GO) test -count=1 ./...

## bench: benchmarks
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf $(BIN)

## build-dcgm: metric with DCGM support (cgo, glibc, lazy binding) into bin/metric-dcgm
build-dcgm:
	CGO_ENABLED=1 $(GO) build -trimpath -tags dcgm -o $(BIN)/metric-dcgm ./metric

## test-dcgm: the dcgm-tagged source tests, and bin/metric-dcgm starting here and
## reporting DCGM's absence in its output while the other signals stay intact
test-dcgm: build-dcgm
	CGO_ENABLED=1 $(GO) test -count=1 -tags dcgm ./shared/source/...
	@out=$$(gpuSource=dcgm INFERSCALE_NOW=2026-11-29T21:00:00Z $(BIN)/metric-dcgm < examples/metric/pod-pending.json) && \
	  echo "$$out" | grep -q '"ageSeconds":30' && \
	  { echo "$$out" | grep -q 'libdcgm.so.4' || test -e /usr/lib/x86_64-linux-gnu/libdcgm.so.4; } || \
	  { echo "metric-dcgm output unexpected: $$out"; exit 1; }
