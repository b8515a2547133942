// Package e2e proves the deploy/ manifests and config/ end to end, installed the way docs/deploy.md says: a real
// control plane on loopback (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with fake GPU
// nodes), the real Custom Pod Autoscaler Operator v1.4.2 installed from its chart's manifests, the overlays applied
// with kubectl, and the pods the operator creates run from the pod objects by an emulated kubelet (the real CPA
// v2.12.2 running our metric and evaluate in the image's layout). Emulated vLLM servers answer on the pods' IPs,
// and a real Prometheus scrapes them for the Prometheus overlay. The test is behind the e2e build tag;
// build-toolchain.sh builds the binaries and `make e2e` runs both. It needs root and runs in a private network
// namespace.
package e2e
