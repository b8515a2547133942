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
test: build vet
	$(GO) test -count=1 ./...

## bench: benchmarks
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf $(BIN)
