package policy_test

import (
	"os"
	"os/exec"
	"path/filepath"
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

// Policy v1 and v2 are two sizers: only pick (sizer.go) reads
// serviceModel, no step branches on it.
func TestOnlyPickReadsServiceModel(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.ModuleRoot(t), "shared", "policy", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no policy sources (%v)", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "sizer.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), ".ServiceModel") {
			t.Errorf("%s reads ServiceModel: only pick in sizer.go chooses the policy", filepath.Base(f))
		}
	}
}
