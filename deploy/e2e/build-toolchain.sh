#!/usr/bin/env bash
# Builds the local control plane the end-to-end test runs on: kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl (k8s v1.34.3), etcd v3.6.5, kwok v0.7.0 and the Custom Pod Autoscaler v2.12.2, all from
# the Go module proxy, and the Custom Pod Autoscaler Operator v1.4.2 from its source in ../shared/third_party,
# into $INFERSCALE_E2E_CACHE/bin (default ~/.cache/inferscale-e2e). Wrapper modules are generated and tidied once
# and then reused, so a rerun with warm Go caches takes seconds. The CPA and the operator are static
# (CGO_ENABLED=0, as their images are): the test runs them chrooted into an image-like root.
# Recipe: ../shared/docs/local-control-plane.md.
set -euo pipefail

CACHE=${INFERSCALE_E2E_CACHE:-$HOME/.cache/inferscale-e2e}
BIN=$CACHE/bin
WRAP=$CACHE/wrappers
K8S_VERSION=v1.34.3
K8S_STAGING=v0.34.3
ETCD_VERSION=v3.6.5
KWOK_VERSION=v0.7.0
CPA_VERSION=v2.12.2
OPERATOR_VERSION=v1.4.2
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OPERATOR_SRC=${INFERSCALE_OPERATOR_SRC:-$(dirname "$REPO")/shared/third_party/custom-pod-autoscaler-operator}
# Bump when the wrapper templates below change; a different stamp regenerates (and re-tidies) the wrappers.
TEMPLATE_STAMP="1:$K8S_VERSION:$ETCD_VERSION:$CPA_VERSION"

start=$SECONDS
mkdir -p "$BIN" "$WRAP"
export GOFLAGS=-mod=mod
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
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
wrapper "$WRAP/etcd" go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3
wrapper "$WRAP/cpa" github.com/jthomperoo/custom-pod-autoscaler/v2 "$CPA_VERSION" github.com/jthomperoo/custom-pod-autoscaler/v2

[ -f "$OPERATOR_SRC/go.mod" ] || { log "no operator source at $OPERATOR_SRC (set INFERSCALE_OPERATOR_SRC)"; exit 1; }
grep -q "^mode: cluster" "$OPERATOR_SRC/helm/values.yaml" || { log "$OPERATOR_SRC is not the v1.4.2 chart layout"; exit 1; }

timed "etcd $ETCD_VERSION" sh -c "cd '$WRAP/etcd' && go build -trimpath -ldflags '-s -w' -o '$BIN/etcd' go.etcd.io/etcd/server/v3"
timed "custom-pod-autoscaler $CPA_VERSION" sh -c "cd '$WRAP/cpa' && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o '$BIN/custom-pod-autoscaler' github.com/jthomperoo/custom-pod-autoscaler/v2"
# The operator's own Makefile builds it this way (CGO_ENABLED=0, main.go); its go.mod/go.sum resolve through the
# proxy. The source folder is read-only: -mod=readonly writes nothing there.
timed "custom-pod-autoscaler-operator $OPERATOR_VERSION" sh -c "cd '$OPERATOR_SRC' && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags '-s -w' -o '$BIN/custom-pod-autoscaler-operator' ."
timed "kwok $KWOK_VERSION" env GOBIN="$BIN" GOFLAGS= go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
# kwok's Logs CRD (the test serves `kubectl logs` through kwok's kubelet API), from kwok's module source.
mkdir -p "$CACHE/kwok"
cp "$(cd "$CACHE" && GOFLAGS= go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')/kustomize/crd/bases/kwok.x-k8s.io_logs.yaml" "$CACHE/kwok/"
timed "kubernetes $K8S_VERSION (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl)" sh -c "cd '$WRAP/kubernetes' && go build -trimpath -ldflags '$K8S_LDFLAGS' -o '$BIN/' \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl"
log "done in $((SECONDS - start)) s: $(ls "$BIN" | tr '\n' ' ')"
