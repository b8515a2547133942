# inferscale — build, test, benchmark and demo.
GO      ?= go
BIN     := bin
GOFLAGS_STATIC := CGO_ENABLED=0

.PHONY: all build test vet fmt bench demo e2e e2e-toolchain e2e-test e2e-closed-loop image clean fuzz simulate sim bench-sim identity bar bar-quick bar-day bar-heldout bar-pd bar-delta

all: build

## build: the two CPA binaries and the exporter sidecar (pure Go, static) into bin/
build:
	$(GOFLAGS_STATIC) $(GO) build -trimpath -buildvcs=auto -o $(BIN)/metric ./metric
	$(GOFLAGS_STATIC) $(GO) build -trimpath -buildvcs=auto -o $(BIN)/evaluate ./evaluate
	$(GOFLAGS_STATIC) $(GO) build -trimpath -buildvcs=auto -o $(BIN)/exporter ./exporter

## vet: gofmt, go vet and a tidy go.mod
vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) mod tidy -diff

## test: everything CI runs
test: build vet test-dcgm
	$(GO) test -count=1 ./...

## bench: benchmarks
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: every fuzz target of the module, FUZZTIME each (default 10s); every target runs even after one
## fails, the failures are listed at the end. Minimising a new input is bounded by FUZZMINIMIZE execs (the
## default 60 s per input showed as 0 execs/s for seconds on end), FUZZPARALLEL workers (1: the CPU is shared;
## a starved worker trips Go's 10 s hang check, golang/go#56238, and fails without a saved input), and
## FUZZTIMEOUT bounds each target's run whatever happens (a stall fails it).
FUZZTIME ?= 10s
FUZZMINIMIZE ?= 1000x
FUZZPARALLEL ?= 1
FUZZTIMEOUT ?= 5m
fuzz:
	@failed=""; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$dir/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "== $$dir $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) \
	      -parallel $(FUZZPARALLEL) -timeout $(FUZZTIMEOUT) $$dir || failed="$$failed $$dir:$$f"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets failed:$$failed"; exit 1; fi

clean:
	rm -rf $(BIN)

## simulate: the trace-driven simulator CLI into bin/simulate
simulate:
	$(GOFLAGS_STATIC) $(GO) build -trimpath -o $(BIN)/simulate ./sim/cmd/simulate

## demo: build the binaries and replay the built-in workload (or TRACE=<file>) through
## inferscale (faithful mode: bin/metric + bin/evaluate via the CPA contract), HPA, KEDA,
## Knative KPA, the cheapest static fleet and the oracle; prints the table, writes sim-demo.png
TRACE ?= synthetic:demo
demo: build simulate
	$(BIN)/simulate demo -trace $(TRACE) -bin $(BIN) -policies 'inferscale;hpa-queue;keda-queue;kpa;static'

## sim: the simulator's tests (engine, oracle, reports, tuning, fast/faithful identity)
sim:
	$(GO) test -count=1 ./sim/engine/... ./sim/oracle/... ./sim/report/... ./sim/runner/... ./sim/tune/... ./sim/inferscale/... ./sim/cmd/...

## bench-sim: simulator benchmarks (1 h / 20k requests in-process; 14 days of ServeGen)
bench-sim:
	$(GO) test -run '^$$' -bench . -benchtime 1x -benchmem ./sim/engine/ ./sim/runner/

## build-dcgm: metric with DCGM support (cgo, glibc, lazy binding) into bin/metric-dcgm
build-dcgm:
	CGO_ENABLED=1 $(GO) build -trimpath -tags dcgm -o $(BIN)/metric-dcgm ./metric

## test-dcgm: the dcgm-tagged source tests; bin/metric-dcgm starting here (glibc) and
## reporting DCGM's absence in its output while the other signals stay intact; bin/metric static
## (runs on musl/Alpine) and starting
test-dcgm: build build-dcgm
	CGO_ENABLED=1 $(GO) test -count=1 -tags dcgm -run DCGM ./shared/source/...
	@out=$$(gpuSource=dcgm INFERSCALE_NOW=2026-11-29T21:00:00Z $(BIN)/metric-dcgm < examples/metric/pod-pending.json) && \
	  echo "$$out" | grep -q '"ageSeconds":30' && \
	  { echo "$$out" | grep -q 'libdcgm.so.4' || test -e /usr/lib/x86_64-linux-gnu/libdcgm.so.4; } || \
	  { echo "metric-dcgm output unexpected: $$out"; exit 1; }
	@out=$$(INFERSCALE_NOW=2026-11-29T21:00:00Z $(BIN)/metric < examples/metric/pod-pending.json) && \
	  echo "$$out" | grep -q '"ageSeconds":30' && ! ldd $(BIN)/metric >/dev/null 2>&1 || \
	  { echo "bin/metric must be static and start here: $$out"; exit 1; }

## image: the container images (needs a Docker engine): $(IMAGE):$(TAG) (Alpine CPA base, pure-Go static
## binaries) and $(IMAGE):$(TAG)-dcgm (glibc, metric built with -tags dcgm)
IMAGE ?= inferscale
TAG   ?= dev
image:
	docker build --target alpine -t $(IMAGE):$(TAG) .
	docker build --target dcgm -t $(IMAGE):$(TAG)-dcgm .

## e2e: end-to-end test on a real control plane with the real CPA operator (needs root, iproute2, util-linux and
## Debian's prometheus): e2e-toolchain, then e2e-test. docs/deploy.md says what it runs and what it costs.
e2e: e2e-toolchain
	$(MAKE) e2e-test

## e2e-toolchain: kube-apiserver, etcd, kwok, the CPA, the CPA operator and llm-d's vLLM emulator into
## $${INFERSCALE_E2E_CACHE:-~/.cache/inferscale-e2e}: about 15 min cold on 2 cores, seconds warm
e2e-toolchain:
	deploy/e2e/build-toolchain.sh

## e2e-test: the end-to-end scenarios on the binaries e2e-toolchain built
e2e-test: build
	$(GO) vet -tags e2e ./deploy/e2e/
	$(GO) test -count=1 -tags e2e -timeout 60m -v ./deploy/e2e/

## e2e-closed-loop: only the closed-loop scenarios (inferscale against llm-d's vLLM emulator, a client measuring
## TTFT; docs/deploy.md "The closed loop", docs/performance.md's table); INFERSCALE_E2E_LONG=1 for the 21-minute load
e2e-closed-loop: build
	$(GO) vet -tags e2e ./deploy/e2e/
	$(GO) test -count=1 -tags e2e -timeout 60m -v -run 'TestOnARealControlPlane/(ClosedLoopRampAndBurst|ScaleDownLosesNoRequest|AgainstAStaticFleet|ServiceModelOnAForeignEngine)$$' ./deploy/e2e/

## identity: replay the demo and the three shared traces (fast, seeds 1-3) and the demo (faithful) and compare
## every decision with the stored timelines (sim/runner/testdata); a refactor must leave them unchanged
identity:
	$(GO) test -count=1 -run TestDecisionTimelinesUnchanged -v ./sim/runner/

## bar: issue 9's bar matrix for POLICY (default inferscale): 5 workloads × seeds 1-3 × GPU speed 1, 2, 0.5 ×
## startup 60 s fixed / 180 s lognormal; oracle and static results cached in ~/.cache/inferscale-bar. ENGINE picks
## the fleet model (vllm, the default; linear; blis: docs/simulator.md, "Engines"), for bar, bar-quick and bar-pd
POLICY ?= inferscale
SHARED ?= ../shared
ENGINE ?= vllm
ENGINEFLAG = $(if $(filter-out vllm,$(ENGINE)),-engine '$(ENGINE)')
bar: simulate
	$(BIN)/simulate bar $(ENGINEFLAG) -policy '$(POLICY)' -shared $(SHARED)

## bar-quick: the same with seed 1 only (30 cells)
bar-quick: simulate
	$(BIN)/simulate bar -quick $(ENGINEFLAG) -policy '$(POLICY)' -shared $(SHARED)

## bar-day: issue 14's 24 h day (ServeGen m-large day 2 at 40 %), seed 1, GPU speed 1, both startups (2 cells)
bar-day: simulate
	$(BIN)/simulate bar -quick -day -speeds 1 -only servegen-day -markdown -policy '$(POLICY)' -shared $(SHARED)

## bar-heldout: trace windows and rates no cell of the bar replays (simulate bar -heldout; docs/performance.md,
## "Stop 37"), seed 1, GPU speed 1, both startups (8 cells; the 6 h ServeGen cells take minutes with a cold cache)
bar-heldout: simulate
	$(BIN)/simulate bar -quick -heldout -speeds 1 -only heldout -markdown -policy '$(POLICY)' -shared $(SHARED)

## bar-pd: the bar's P/D cells (simulate bar -pd): Mooncake's conversation hour and the demo with outputs ×4, GPU
## speed 1, 2, 0.5, seed 1; POLICY in both pools (inferscale with role=prefill / role=decode), as Markdown
bar-pd: simulate
	$(BIN)/simulate bar -pd -quick $(ENGINEFLAG) -markdown -policy '$(POLICY)' -shared $(SHARED)

## bar-delta: what a change moved on the bar, as Markdown for its commit message: bin/simulate of BASE (default:
## where this branch left main, git merge-base main HEAD) built in a temporary git worktree (removed afterwards),
## the bar cells run by BASE and by the working tree with the same BARFLAGS (default -quick; e.g. '-quick -stress'
## or '-quick -only demo') and POLICY, then simulate bar-diff of the two. BASE must have simulate bar -json.
BASE ?= $(shell git merge-base main HEAD 2>/dev/null || echo main)
BARFLAGS ?= -quick
bar-delta:
	@$(MAKE) --no-print-directory simulate $(if $(findstring faithful,$(BARFLAGS)),build) >&2
	@base=$$(git rev-parse --verify --quiet '$(BASE)^{commit}') || { echo "bar-delta: BASE=$(BASE) is not a commit" >&2; exit 2; }; \
	short=$$(git rev-parse --short $$base); head=$$(git rev-parse --short HEAD); \
	test -z "$$(git status --porcelain)" || head="$$head + uncommitted changes"; \
	tmp=$$(mktemp -d); trap 'git worktree remove --force "$$tmp/src" >/dev/null 2>&1; git worktree prune; rm -rf "$$tmp"' EXIT; trap 'exit 130' INT TERM HUP; \
	set -e; t0=$$(date +%s); \
	git worktree add --detach --quiet "$$tmp/src" $$base; \
	(cd "$$tmp/src" && $(GOFLAGS_STATIC) $(GO) build -trimpath -o "$$tmp/bin/simulate" ./sim/cmd/simulate); \
	case '$(BARFLAGS)' in *faithful*) (cd "$$tmp/src" && $(GOFLAGS_STATIC) $(GO) build -trimpath -o "$$tmp/bin/" ./metric ./evaluate);; esac; \
	"$$tmp/bin/simulate" bar -h 2>&1 | grep -q -- '-json' || \
	  { echo "bar-delta: BASE $$short's simulate bar has no -json flag (it predates simulate bar-diff): pick a later BASE" >&2; exit 2; }; \
	t1=$$(date +%s); \
	$(BIN)/simulate bar $(BARFLAGS) -policy '$(POLICY)' -shared $(SHARED) -bin $(BIN) -json "$$tmp/new.json" >/dev/null; \
	t2=$$(date +%s); \
	"$$tmp/bin/simulate" bar $(BARFLAGS) -policy '$(POLICY)' -shared $(SHARED) -bin "$$tmp/bin" -json "$$tmp/old.json" >/dev/null; \
	t3=$$(date +%s); \
	$(BIN)/simulate bar-diff -old-label "$$short" -new-label "$$head" "$$tmp/old.json" "$$tmp/new.json"; \
	echo "bar-delta: BASE $$short built in $$((t1-t0)) s; the cells took $$((t2-t1)) s (working tree), $$((t3-t2)) s (BASE)" >&2
