// Package e2e proves the deploy/ manifests and config/ on a real control plane: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok on loopback, the real Custom Pod Autoscaler v2.12.2 running
// our metric and evaluate binaries, and emulated vLLM /metrics servers on the pods' IPs. The test is behind the
// e2e build tag; build-toolchain.sh builds the control plane and `make e2e` runs both.
package e2e
