package rbacgrant

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestOfFlattensRulesAndRefusesWildcards(t *testing.T) {
	got, err := Of([]rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "deployments/scale"}, Verbs: []string{"get"}, ResourceNames: []string{"vllm"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "patch"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Grant{
		{"apps", "deployments", "get", "vllm"}, {"apps", "deployments/scale", "get", "vllm"},
		{"", "pods", "list", ""}, {"", "pods", "patch", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d grants %v, want %v", len(got), got, want)
	}
	for _, g := range want {
		if !got[g] {
			t.Errorf("missing %s", g)
		}
	}
	if s := (Grant{"", "pods", "patch", ""}).String(); s != "patch core/pods" {
		t.Errorf("String() = %q", s)
	}
	for _, bad := range []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"*"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"*"}},
	} {
		if _, err := Of([]rbacv1.PolicyRule{bad}); err == nil {
			t.Errorf("Of accepted the wildcard rule %+v", bad)
		}
	}
}
