package deploy

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

// No two autoscalers of one overlay share a scale target or a state ConfigMap: each CustomPodAutoscaler scales
// one Deployment, and two sharing a state would overwrite each other's plan, hold and service model.
func TestOverlayAutoscalersShareNoTargetOrState(t *testing.T) {
	byDir := map[string][]*overlay{}
	for _, ov := range loadOverlays(t) {
		dir := overlayDir(ov.name)
		byDir[dir] = append(byDir[dir], ov)
	}
	for dir, ovs := range byDir {
		targets, states := map[string]string{}, map[string]string{}
		for _, ov := range ovs {
			ref := ov.cpa.Spec.ScaleTargetRef.Name
			if other, ok := targets[ref]; ok {
				t.Errorf("overlay %s: %s and %s both scale Deployment %s", dir, other, ov.cpa.Name, ref)
			}
			targets[ref] = ov.cpa.Name
			state := ov.config["stateConfigMap"]
			if other, ok := states[state]; ok {
				t.Errorf("overlay %s: %s and %s share stateConfigMap %q", dir, other, ov.cpa.Name, state)
			}
			states[state] = ov.cpa.Name
		}
	}
}

// overlayDir is the overlay directory of an entry of loadOverlays (its name, less "/CR" for a base with several).
func overlayDir(name string) string {
	dir, _, _ := strings.Cut(name, "/")
	return dir
}

// The pd overlay is a prefill/decode pair (docs/roles.md): one autoscaler per role, the prefill pool on TTFT alone,
// the decode pool on its inter-token objective with a TTFT objective looser than the prefill pool's (it covers the
// KV transfer and the first step), each reading the vLLM container's /metrics (not the routing sidecar's port).
func TestPDOverlayPairsTheRoles(t *testing.T) {
	roles := map[string]*overlay{}
	for _, ov := range loadOverlays(t) {
		if overlayDir(ov.name) == "pd" {
			roles[ov.config["role"]] = ov
		}
	}
	prefill, decode := roles["prefill"], roles["decode"]
	if len(roles) != 2 || prefill == nil || decode == nil {
		t.Fatalf("deploy/overlays/pd: roles %v, want one prefill and one decode autoscaler", roles)
	}
	pEv := evaluateSettings(t, localPolicyEnv(t, prefill))
	dEv := evaluateSettings(t, localPolicyEnv(t, decode))
	if pEv.Policy.ITLSLO != 0 || pEv.Policy.TTFTSLO <= 0 {
		t.Errorf("prefill pool: itlSLO %s ttftSLO %s; want TTFT only", pEv.Policy.ITLSLO, pEv.Policy.TTFTSLO)
	}
	if dEv.Policy.ITLSLO <= 0 || dEv.Policy.ITLSLO > 200*time.Millisecond {
		t.Errorf("decode pool: itlSLO %s; want an inter-token objective (tens of ms)", dEv.Policy.ITLSLO)
	}
	if dEv.Policy.TTFTSLO <= pEv.Policy.TTFTSLO {
		t.Errorf("decode pool's ttftSLO %s is not looser than the prefill pool's %s (it adds the KV transfer)", dEv.Policy.TTFTSLO, pEv.Policy.TTFTSLO)
	}
	for _, ov := range []*overlay{prefill, decode} {
		d := ov.base.deploys[ov.cpa.Spec.ScaleTargetRef.Name]
		if d == nil {
			t.Fatalf("%s: no target Deployment", ov.name)
		}
		port, err := strconv.Atoi(ov.config["metricsPort"])
		if err != nil || vllmPort(d) != int32(port) {
			t.Errorf("%s: metricsPort %q, want the vllm container's port %d", ov.name, ov.config["metricsPort"], vllmPort(d))
		}
	}
}

// vllmPort is the first container port of d's container named vllm (0: none).
func vllmPort(d *appsv1.Deployment) int32 {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "vllm" && len(c.Ports) > 0 {
			return c.Ports[0].ContainerPort
		}
	}
	return 0
}

// The P/D pair's vLLM Deployments drain as the unified example does (drain_test.go).
func TestPDDeploymentsDrainBeforeTheyAreKilled(t *testing.T) {
	_, base := loadBase(t, filepath.Join(repoRoot(t), "deploy", "base-pd"))
	if len(base.deploys) != 2 {
		t.Fatalf("deploy/base-pd: %d Deployments, want llm-prefill and llm-decode", len(base.deploys))
	}
	for name, d := range base.deploys {
		got, err := drainOf(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range got.problems() {
			t.Errorf("%s: %s", name, p)
		}
	}
}
