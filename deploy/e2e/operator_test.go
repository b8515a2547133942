//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/template"
	"time"

	"sigs.k8s.io/yaml"
)

const (
	operatorVersion = "v1.4.2"
	operatorName    = "custom-pod-autoscaler-operator" // the chart's name: its Deployment, ClusterRole, ...
	operatorNS      = "default"                        // where `helm template` (the release's cluster.yaml) puts it
	crdName         = "custompodautoscalers.custompodautoscaler.com"
)

// operatorSource is the operator's v1.4.2 source in ../shared/third_party (its chart, CRD and Dockerfile).
func operatorSource(t *testing.T, repo string) string {
	t.Helper()
	src := orDefault(os.Getenv("INFERSCALE_OPERATOR_SRC"), filepath.Join(filepath.Dir(repo), "shared", "third_party", "custom-pod-autoscaler-operator"))
	if _, err := os.Stat(filepath.Join(src, "helm", "Chart.yaml")); err != nil {
		t.Fatalf("the operator's source (its Helm chart) is not at %s: %v", src, err)
	}
	return src
}

// renderClusterYAML renders the operator's Helm chart the way its release workflow makes the cluster.yaml it
// publishes (.github/workflows/main.yml: Chart.yaml's version 0.0.0 replaced by the tag, then
// `helm template helm/ --set mode=cluster`): every file under templates/ but NOTES.txt, with the chart's
// values.yaml, release name "release-name" and namespace "default" (helm template's defaults). The templates use
// no function beyond text/template's own (`if`, `eq`), so text/template renders them exactly as helm does; an
// unknown function would fail the parse.
func renderClusterYAML(src string) (string, error) {
	var chart struct{ Name string }
	var values map[string]any
	for file, v := range map[string]any{"Chart.yaml": &chart, "values.yaml": &values} {
		b, err := os.ReadFile(filepath.Join(src, "helm", file))
		if err != nil {
			return "", err
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			return "", fmt.Errorf("helm/%s: %w", file, err)
		}
	}
	values["mode"] = "cluster"
	data := map[string]any{
		"Values":  values,
		"Chart":   map[string]any{"Name": chart.Name, "Version": operatorVersion},
		"Release": map[string]any{"Name": "release-name", "Namespace": operatorNS, "Service": "Helm"},
	}
	var files []string
	err := filepath.WalkDir(filepath.Join(src, "helm", "templates"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "NOTES.txt" && !strings.HasPrefix(d.Name(), "_") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	var out bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		tmpl, err := template.New(filepath.Base(f)).Option("missingkey=zero").Parse(string(b))
		if err != nil {
			return "", fmt.Errorf("%s: %w", f, err)
		}
		var doc bytes.Buffer
		if err := tmpl.Execute(&doc, data); err != nil {
			return "", fmt.Errorf("%s: %w", f, err)
		}
		if strings.TrimSpace(strings.ReplaceAll(doc.String(), "---", "")) == "" {
			continue
		}
		rel, _ := filepath.Rel(filepath.Join(src, "helm"), f)
		fmt.Fprintf(&out, "---\n# Source: %s/%s\n%s\n", chart.Name, rel, strings.TrimPrefix(strings.TrimSpace(doc.String()), "---"))
	}
	return out.String(), nil
}

// installOperator applies the operator's cluster.yaml (its real CRD and the RBAC and Deployment its chart
// grants) as a user does (docs/deploy.md, step 1), and waits until the CRD is established and the operator's
// Deployment is available (its pod run by the emulated kubelet).
func (c *cluster) installOperator(t *testing.T, src string) {
	t.Helper()
	manifest, err := renderClusterYAML(src)
	if err != nil {
		t.Fatalf("rendering the operator's chart: %v", err)
	}
	path := filepath.Join(c.root, "cluster.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	// Server-side: the CRD (525 kB) does not fit the last-applied annotation of a client-side apply (256 kB), as a
	// dry run of one shows.
	if _, err := c.kubectl("", "apply", "--dry-run=server", "-f", path); err == nil || !strings.Contains(err.Error(), "Too long") {
		t.Errorf("a client-side apply of cluster.yaml: %v; docs/deploy.md says it fails on the CRD's size", err)
	}
	if _, err := c.kubectl("", "apply", "--server-side", "-f", path); err != nil {
		t.Fatal(err)
	}
	// kubectl wait fails outright while the new CRD has no status yet: retry it.
	if err := waitFor(30*time.Second, "the CRD established", func() error {
		_, err := c.kubectl("", "wait", "--for=condition=Established", "--timeout=10s", "crd/"+crdName)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.kubectl("", "rollout", "status", "deployment/"+operatorName, "-n", operatorNS, "--timeout=90s"); err != nil {
		t.Fatal(err)
	}
	// Its controller is up once it logs so (through `kubectl logs`, served by kwok from the emulated kubelet's file).
	if err := waitFor(60*time.Second, "the operator's controller started", func() error {
		out, err := c.kubectl("", "logs", "-n", operatorNS, "deployment/"+operatorName)
		if err != nil {
			return err
		}
		if !strings.Contains(out, "Starting workers") {
			return fmt.Errorf("log so far: %q: %w", out, errNotYet)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// uninstallOperator removes what cluster.yaml installed (docs/deploy.md "Remove") and checks the CRD and the
// operator's Deployment are gone.
func (c *cluster) uninstallOperator(t *testing.T) {
	t.Helper()
	if _, err := c.kubectl("", "delete", "-f", filepath.Join(c.root, "cluster.yaml"), "--timeout=120s"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + crdName,
		"/apis/apps/v1/namespaces/" + operatorNS + "/deployments/" + operatorName} {
		if err := waitFor(60*time.Second, path+" deleted", func() error {
			if err := c.getJSON(path, &struct{}{}); !isNotFound(err) {
				return fmt.Errorf("still there (%v): %w", err, errNotYet)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	}
}
