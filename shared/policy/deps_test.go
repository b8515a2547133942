package policy_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
)

// The pure middle (fleet view, policy) links no network, no YAML, no
// Kubernetes client, no settings reader and no state store: it only
// computes.
func TestPureCoreImportsNoIO(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.SkipUnlessCI(t, "go toolchain not on PATH (%v)", err)
	}
	cmd := exec.Command(gobin, "list", "-deps", "./shared/policy", "./shared/fleet")
	cmd.Dir = testenv.ModuleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{"net", "net/http", "os/exec", "yaml", "k8s.io", "github.com/inferscale/inferscale/shared/kube",
		"github.com/inferscale/inferscale/shared/settings", "github.com/inferscale/inferscale/shared/state/store",
		"github.com/robfig/cron", "github.com/tidwall/gjson"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") || (f == "yaml" && strings.Contains(dep, "yaml")) {
				t.Errorf("the pure core depends on %s", dep)
			}
		}
	}
}
