package deploy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// restrictedProblems evaluates a pod spec against the "restricted" Pod Security level with the checks the API
// server's PodSecurity admission runs; empty means allowed.
func restrictedProblems(t *testing.T, spec *corev1.PodSpec) string {
	t.Helper()
	ev, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	lv := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	res := policy.AggregateCheckResults(ev.EvaluatePod(lv, &metav1.ObjectMeta{}, spec))
	if res.Allowed {
		return ""
	}
	return res.ForbiddenDetail()
}

// The autoscaler's pod (the CustomPodAutoscaler's template; the operator adds only env vars and the service
// account name, which Pod Security does not judge) runs in a namespace enforcing "restricted". The e2e asks the
// API server the same about the pod the operator really created.
func TestAutoscalerPodMeetsRestrictedPodSecurity(t *testing.T) {
	for _, ov := range loadOverlays(t) {
		t.Run(ov.name, func(t *testing.T) {
			spec := ov.cpa.Spec.Template.Spec
			if p := restrictedProblems(t, &spec); p != "" {
				t.Errorf("the autoscaler pod violates the restricted level: %s", p)
			}
		})
	}
}

func TestRestrictedCheckCatchesAMissingSeccompProfile(t *testing.T) {
	for _, ov := range loadOverlays(t) {
		spec := *ov.cpa.Spec.Template.Spec.DeepCopy()
		spec.SecurityContext = nil
		for i := range spec.Containers {
			spec.Containers[i].SecurityContext.SeccompProfile = nil
		}
		if restrictedProblems(t, &spec) == "" {
			t.Fatal("a pod without a seccomp profile passed the restricted check")
		}
		return
	}
}
