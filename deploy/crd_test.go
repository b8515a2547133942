package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/internal/testenv"
)

// operatorCRDPath is the CustomPodAutoscaler CRD the operator's v1.4.2 chart installs, in ../shared (the e2e
// installs that file into its API server); committedCRD is the copy committed beside this test (its README says
// whose it is), which the checks read so that they run on any clone.
const (
	operatorCRDPath = "third_party/custom-pod-autoscaler-operator/helm/templates/crd/custompodautoscaler.com_custompodautoscalers.yaml"
	committedCRD    = "testdata/custom-pod-autoscaler-operator/custompodautoscaler.com_custompodautoscalers.yaml"
)

// crdSchema is the v1 schema of the operator's CRD, in the two forms the API server checks an object with: the
// structural schema (which fields exist: pruning) and the OpenAPI schema (types, required fields, enums).
type crdSchema struct {
	structural *structuralschema.Structural
	openAPI    *spec.Schema
}

// readOperatorCRD decodes the committed copy of the operator's CRD, strictly.
func readOperatorCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	b, err := os.ReadFile(committedCRD)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &crd); err != nil {
		t.Fatalf("%s: %v", committedCRD, err)
	}
	return &crd
}

// TestCommittedCRDIsTheOperatorsOwn holds the committed copy byte-identical to the chart's file in ../shared, so
// that the checks below test the operator's real schema.
func TestCommittedCRDIsTheOperatorsOwn(t *testing.T) {
	upstream, err := os.ReadFile(filepath.Join(testenv.SharedDir(t, operatorCRDPath), operatorCRDPath))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(committedCRD)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, upstream) {
		t.Errorf("%s differs from ../shared/%s: copy the chart's file again (and its version into the README beside it)", committedCRD, operatorCRDPath)
	}
}

func loadOperatorCRD(t *testing.T) *crdSchema {
	t.Helper()
	crd := readOperatorCRD(t)
	if crd.Spec.Group != "custompodautoscaler.com" || crd.Spec.Names.Kind != "CustomPodAutoscaler" || len(crd.Spec.Versions) != 1 ||
		crd.Spec.Versions[0].Name != "v1" || crd.Spec.Versions[0].Schema == nil {
		t.Fatalf("%s: not the custompodautoscaler.com/v1 CustomPodAutoscaler CRD", committedCRD)
	}
	v1 := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s := &crdSchema{}
	var err error
	if s.structural, err = structuralschema.NewStructural(&internal); err != nil {
		t.Fatalf("%s: not a structural schema: %v", committedCRD, err)
	}
	raw, err := json.Marshal(v1)
	if err != nil {
		t.Fatal(err)
	}
	s.openAPI = &spec.Schema{}
	if err := json.Unmarshal(raw, s.openAPI); err != nil {
		t.Fatal(err)
	}
	return s
}

// check returns what the API server would refuse in obj: unknown fields (a strict-validation error; without it
// they would be silently dropped) and schema violations.
func (s *crdSchema) check(obj map[string]any) []string {
	var problems []string
	copied, err := deepCopyJSON(obj)
	if err != nil {
		return []string{err.Error()}
	}
	for _, p := range pruning.PruneWithOptions(copied, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		problems = append(problems, "unknown field "+p)
	}
	body := map[string]any{}
	for k, v := range obj {
		if k != "metadata" { // the API server validates ObjectMeta itself
			body[k] = v
		}
	}
	if res := validate.NewSchemaValidator(s.openAPI, nil, "", strfmt.Default).Validate(body); res != nil {
		for _, e := range res.Errors {
			problems = append(problems, e.Error())
		}
	}
	return problems
}

func deepCopyJSON(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// overlayCustomPodAutoscalers are an overlay's CustomPodAutoscalers by name as raw YAML data: each of the base's
// documents with the overlay's JSON patches that target it by name applied (the forms manifests_test.go resolves:
// additions to /spec/config/-, replacements of /spec/config/N, a container added to the template and the
// template's metadata).
func overlayCustomPodAutoscalers(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	k := loadKustomization(t, dir)
	baseDir := filepath.Clean(filepath.Join(dir, k.Resources[0]))
	base := loadKustomization(t, baseDir)
	crs := map[string]map[string]any{}
	for _, res := range base.Resources {
		for _, doc := range yamlDocuments(t, filepath.Join(baseDir, res)) {
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				t.Fatal(err)
			}
			if obj["kind"] == "CustomPodAutoscaler" {
				meta, _ := obj["metadata"].(map[string]any)
				name, _ := meta["name"].(string)
				crs[name] = obj
			}
		}
	}
	if len(crs) == 0 {
		t.Fatalf("%s: no CustomPodAutoscaler in the base", dir)
	}
	for _, p := range k.Patches {
		cr, ok := crs[p.Target.Name]
		if !ok {
			t.Fatalf("%s: patch target %s is no CustomPodAutoscaler of the base", dir, p.Target.Name)
		}
		applyRawPatch(t, dir, cr, p.Patch)
	}
	return crs
}

// applyRawPatch applies one overlay patch's operations to cr.
func applyRawPatch(t *testing.T, dir string, cr map[string]any, patch string) {
	t.Helper()
	var ops []struct {
		Op    string         `json:"op"`
		Path  string         `json:"path"`
		Value map[string]any `json:"value"`
	}
	if err := yaml.Unmarshal([]byte(patch), &ops); err != nil {
		t.Fatalf("%s: patch: %v", dir, err)
	}
	spec, _ := cr["spec"].(map[string]any)
	config, _ := spec["config"].([]any)
	template, _ := spec["template"].(map[string]any)
	podSpec, _ := template["spec"].(map[string]any)
	for _, op := range ops {
		i, err := strconv.Atoi(strings.TrimPrefix(op.Path, "/spec/config/"))
		switch {
		case op.Op == "add" && op.Path == "/spec/config/-":
			config = append(config, op.Value)
		case op.Op == "replace" && err == nil && i >= 0 && i < len(config):
			config[i] = op.Value
		case op.Op == "add" && op.Path == "/spec/template/spec/containers/-":
			containers, _ := podSpec["containers"].([]any)
			podSpec["containers"] = append(containers, op.Value)
		case op.Op == "add" && op.Path == "/spec/template/metadata":
			template["metadata"] = op.Value
		default:
			t.Fatalf("%s: patch op %s %s is not one this test resolves", dir, op.Op, op.Path)
		}
	}
	spec["config"] = config
}

func TestOverlaysMatchTheOperatorsCRD(t *testing.T) {
	s := loadOperatorCRD(t)
	dirs, err := filepath.Glob(filepath.Join(repoRoot(t), "deploy", "overlays", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no overlays (%v)", err)
	}
	for _, dir := range dirs {
		for name, cr := range overlayCustomPodAutoscalers(t, dir) {
			t.Run(filepath.Base(dir)+"/"+name, func(t *testing.T) {
				for _, p := range s.check(cr) {
					t.Error(p)
				}
			})
		}
	}
}

func TestCRDCheckRefusesWhatTheAPIServerWould(t *testing.T) {
	s := loadOperatorCRD(t)
	good := func() map[string]any {
		return map[string]any{"apiVersion": "custompodautoscaler.com/v1", "kind": "CustomPodAutoscaler",
			"metadata": map[string]any{"name": "x"},
			"spec": map[string]any{
				"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
				"template":       map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "x", "image": "x"}}}},
				"config":         []any{map[string]any{"name": "interval", "value": "15000"}},
			}}
	}
	if p := s.check(good()); len(p) != 0 {
		t.Fatalf("a valid CustomPodAutoscaler: %v", p)
	}
	cases := map[string]struct {
		edit func(spec map[string]any)
		want string
	}{
		"misspelt spec field": {func(s map[string]any) { s["provisionRoles"] = false }, "provisionRoles"},
		"misplaced pod field": {func(s map[string]any) { s["template"].(map[string]any)["spec"].(map[string]any)["container"] = []any{} }, "container"},
		"config value not a string": {func(s map[string]any) {
			s["config"] = []any{map[string]any{"name": "interval", "value": 15000}}
		}, "value"},
		"config entry without a value": {func(s map[string]any) { s["config"] = []any{map[string]any{"name": "interval"}} }, "value"},
		"no scaleTargetRef name":       {func(s map[string]any) { delete(s["scaleTargetRef"].(map[string]any), "name") }, "name"},
	}
	for name, c := range cases {
		obj := good()
		c.edit(obj["spec"].(map[string]any))
		p := s.check(obj)
		if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("%s: problems %v, want one naming %q", name, p, c.want)
		}
	}
}

// docs/deploy.md says `kubectl get cpa` cannot show the target and the deciding rule: the operator's CRD declares
// no printer columns, and its status has no fields, so the API server prunes whatever is written there.
func TestOperatorCRDCarriesNoTargetInStatusOrColumns(t *testing.T) {
	s := loadOperatorCRD(t)
	v := readOperatorCRD(t).Spec.Versions[0]
	if len(v.AdditionalPrinterColumns) != 0 || v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("printer columns %+v, subresources %+v: docs/deploy.md's `kubectl get cpa` section is out of date", v.AdditionalPrinterColumns, v.Subresources)
	}
	obj := map[string]any{"apiVersion": "custompodautoscaler.com/v1", "kind": "CustomPodAutoscaler", "metadata": map[string]any{"name": "x"},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
			"template":       map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "x", "image": "x"}}}},
		},
		"status": map[string]any{"targetReplicas": 3, "reason": "sizing"}}
	p := s.check(obj)
	for _, f := range []string{"status.targetReplicas", "status.reason"} {
		if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, f) }) {
			t.Errorf("status field %s is not pruned (problems %v): docs/deploy.md's `kubectl get cpa` section is out of date", f, p)
		}
	}
}
