// Package deploy holds no code (besides cpaconfig, the CPA config.yaml schema its tests check): deploy/ is the Kubernetes manifests (a kustomize base with edge and Prometheus
// overlays, and base-pd, a prefill/decode pair with one autoscaler per role, under overlays/pd) and the end-to-end harness (deploy/e2e). The tests in this package check, without a cluster, that
// the manifests decode strictly into the Kubernetes Go types, that RBAC grants exactly what inferscale uses,
// that config/*.yaml is a valid CPA config coherent with evaluate's windows, and that the Dockerfile's build
// stage really builds the binaries the image and config refer to.
package deploy
