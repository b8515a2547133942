#!/usr/bin/env bash
# Builds the local control plane the end-to-end test runs on: kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl (k8s v1.34.3), etcd v3.6.4, kwok v0.7.0 and the Custom Pod Autoscaler v2.12.2, all from
# the Go module proxy, and the Custom Pod Autoscaler Operator v1.4.2 and llm-d's vLLM emulator (llm-d-inference-sim,
# the closed-loop scenarios' vLLM pods) from their source in ../shared/third_party, into $INFERSCALE_E2E_CACHE/bin (default ~/.cache/inferscale-e2e). Only the binaries the e2e starts are built.
# Wrapper modules are generated and tidied once and then reused, so a rerun with warm Go caches takes seconds.
# Recipe: ../shared/docs/local-control-plane.md.
#
# What keeps a cold build short (docs/deploy.md has the figures):
# - every piece is built the same way, static (CGO_ENABLED=0, as the upstream release binaries and the CPA and
#   operator images are; the test runs the CPA and the operator chrooted into an image-like root) and with
#   -trimpath, so the standard library is compiled once for all of them in the one GOCACHE they share;
# - etcd is v3.6.4, the version k8s.io/kubernetes v1.34.3's own go.mod requires, built in the Kubernetes wrapper
#   module: it adds no module to the Kubernetes build list (the build checks this), and the packages the two share
#   (gRPC, protobuf, OpenTelemetry, the etcd client, zap, Prometheus' client) are compiled once.
set -euo pipefail

CACHE=${INFERSCALE_E2E_CACHE:-$HOME/.cache/inferscale-e2e}
BIN=$CACHE/bin
WRAP=$CACHE/wrappers
K8S_VERSION=v1.34.3
K8S_STAGING=v0.34.3
ETCD_VERSION=v3.6.4 # what k8s.io/kubernetes v1.34.3 requires (checked below)
KWOK_VERSION=v0.7.0
CPA_VERSION=v2.12.2
OPERATOR_VERSION=v1.4.2
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OPERATOR_SRC=${INFERSCALE_OPERATOR_SRC:-$(dirname "$REPO")/shared/third_party/custom-pod-autoscaler-operator}
EMULATOR_SRC=${INFERSCALE_EMULATOR_SRC:-$(dirname "$REPO")/shared/third_party/llm-d-inference-sim}
# Bump when the wrapper templates below change; a different stamp regenerates (and re-tidies) the wrappers.
TEMPLATE_STAMP="2:$K8S_VERSION:$ETCD_VERSION:$CPA_VERSION"

start=$SECONDS
mkdir -p "$BIN" "$WRAP"
export GOFLAGS=-mod=mod CGO_ENABLED=0
log() { printf '%s build-toolchain: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
# timed NAME CMD...: runs CMD and logs how long it took.
timed() {
  local name=$1 t0=$SECONDS; shift
  log "building $name"
  "$@"
  log "built $name in $((SECONDS - t0)) s"
}

# wrapper DIR MODULE VERSION PKG... : a module requiring MODULE@VERSION with a tools.go importing PKG...
wrapper() {
  local dir=$1 mod=$2 ver=$3; shift 3
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$TEMPLATE_STAMP" ]; then return 0; fi
  log "generating wrapper module $dir"
  rm -rf "$dir"; mkdir -p "$dir"
  {
    echo "module inferscale.local/e2e/$(basename "$dir")"
    echo
    echo "go 1.24"
    echo
    [ "$mod" = k8s.io/kubernetes ] && echo "godebug default=go1.24" && echo
    echo "require $mod $ver"
  } >"$dir/go.mod"
  if [ "$mod" = k8s.io/kubernetes ]; then
    local gomod
    gomod=$(go mod download -json "$mod@$ver" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
    grep -E '^\s*k8s\.io/[a-z0-9-]+ v0\.0\.0\s*$' "$gomod" | awk -v v="$K8S_STAGING" '{print "replace " $1 " => " $1 " " v}' >>"$dir/go.mod"
  fi
  {
    echo "//go:build tools"
    echo
    echo "package tools"
    echo
    echo "import ("
    for p in "$@"; do echo "	_ \"$p\""; done
    echo ")"
  } >"$dir/tools.go"
  (cd "$dir" && go mod tidy >/dev/null)
  echo "$TEMPLATE_STAMP" >"$dir/.stamp"
}

K8S_LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"

wrapper "$WRAP/kubernetes" k8s.io/kubernetes "$K8S_VERSION" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl go.etcd.io/etcd/server/v3
# etcd in the Kubernetes module must change nothing of the Kubernetes build: every module the four Kubernetes
# binaries use is at the version k8s.io/kubernetes's own go.mod requires (its staging modules aside: replaced by
# their tags), and etcd is the version it requires. Checked once per wrapper.
check_kubernetes_build_list() {
  local gomod mismatch
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  mismatch=$(cd "$WRAP/kubernetes" && go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl | sort -u |
    awk -v etcd="go.etcd.io/etcd/server/v3" -v etcdv="$ETCD_VERSION" '
      NR == FNR { if ($1 ~ /\./ && $2 ~ /^v/) want[$1] = $2; next }
      $1 in want && want[$1] != "v0.0.0" && want[$1] != $2 { print $1 " " $2 " (Kubernetes: " want[$1] ")" }
      END { if (want[etcd] != etcdv) print etcd " " want[etcd] " in Kubernetes, not " etcdv }' \
    <(sed -e 's/^require //' -e 's/^[[:space:]]*//' "$gomod") -)
  [ -z "$mismatch" ] || { log "the Kubernetes build list differs from k8s.io/kubernetes $K8S_VERSION's go.mod: $mismatch"; exit 1; }
  echo "$TEMPLATE_STAMP" >"$WRAP/kubernetes/.checked"
}
[ "$(cat "$WRAP/kubernetes/.checked" 2>/dev/null)" = "$TEMPLATE_STAMP" ] || check_kubernetes_build_list
wrapper "$WRAP/cpa" github.com/jthomperoo/custom-pod-autoscaler/v2 "$CPA_VERSION" github.com/jthomperoo/custom-pod-autoscaler/v2

[ -f "$OPERATOR_SRC/go.mod" ] || { log "no operator source at $OPERATOR_SRC (set INFERSCALE_OPERATOR_SRC)"; exit 1; }
grep -q "^mode: cluster" "$OPERATOR_SRC/helm/values.yaml" || { log "$OPERATOR_SRC is not the v1.4.2 chart layout"; exit 1; }
[ -f "$EMULATOR_SRC/cmd/llm-d-inference-sim/main.go" ] || { log "no llm-d-inference-sim source at $EMULATOR_SRC (set INFERSCALE_EMULATOR_SRC)"; exit 1; }

# The five builds run at once: each alone leaves a core idle while it downloads modules and links, and together
# they share the one GOCACHE (safe for concurrent go commands). Kubernetes, the longest, starts first.
pids=()
timed "kubernetes $K8S_VERSION (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl) and etcd $ETCD_VERSION" \
  sh -c "cd '$WRAP/kubernetes' && go build -trimpath -ldflags '$K8S_LDFLAGS' -o '$BIN/' \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl && \
  go build -trimpath -ldflags '-s -w' -o '$BIN/etcd' go.etcd.io/etcd/server/v3" &
pids+=($!)
timed "custom-pod-autoscaler $CPA_VERSION" sh -c "cd '$WRAP/cpa' && go build -trimpath -ldflags '-s -w' -o '$BIN/custom-pod-autoscaler' github.com/jthomperoo/custom-pod-autoscaler/v2" &
pids+=($!)
# The operator's own Makefile builds it this way (CGO_ENABLED=0, main.go); its go.mod/go.sum resolve through the
# proxy. The source folder is read-only: -mod=readonly writes nothing there.
timed "custom-pod-autoscaler-operator $OPERATOR_VERSION" sh -c "cd '$OPERATOR_SRC' && GOFLAGS=-mod=readonly go build -trimpath -ldflags '-s -w' -o '$BIN/custom-pod-autoscaler-operator' ." &
pids+=($!)
# The emulator as its Dockerfile builds it (pure Go, CGO_ENABLED=0: its ZeroMQ client is github.com/go-zeromq/zmq4,
# no libzmq); its go.mod/go.sum resolve through the proxy (llm-d-router through the replace to ../llm-d-router).
# Read-only source: -mod=readonly writes nothing there.
timed "llm-d-inference-sim (vLLM emulator)" sh -c "cd '$EMULATOR_SRC' && GOFLAGS=-mod=readonly go build -trimpath -ldflags '-s -w' -o '$BIN/llm-d-inference-sim' ./cmd/llm-d-inference-sim" &
pids+=($!)
timed "kwok $KWOK_VERSION" env GOBIN="$BIN" GOFLAGS= go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" &
pids+=($!)
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { log "a build failed (its output is above)"; exit 1; }
# kwok's Logs CRD (the test serves `kubectl logs` through kwok's kubelet API), from kwok's module source.
mkdir -p "$CACHE/kwok"
cp "$(cd "$CACHE" && GOFLAGS= go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')/kustomize/crd/bases/kwok.x-k8s.io_logs.yaml" "$CACHE/kwok/"
log "done in $((SECONDS - start)) s: $(ls "$BIN" | tr '\n' ' ')"
