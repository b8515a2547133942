package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/deploy/cpaconfig"
	"github.com/inferscale/inferscale/internal/rbacgrant"
	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/gather"
	"github.com/inferscale/inferscale/shared/settings"
)

// customPodAutoscaler mirrors custompodautoscaler.com/v1 of CPA operator v1.4.2
// (api/v1/custompodautoscaler_types.go): the template's spec is a corev1.PodSpec.
type customPodAutoscaler struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Template struct {
			ObjectMeta map[string]any `json:"metadata,omitempty"`
			Spec       corev1.PodSpec `json:"spec,omitempty"`
		} `json:"template"`
		ScaleTargetRef            autoscalingv1.CrossVersionObjectReference `json:"scaleTargetRef"`
		Config                    []configEntry                             `json:"config,omitempty"`
		ProvisionRole             *bool                                     `json:"provisionRole,omitempty"`
		ProvisionRoleBinding      *bool                                     `json:"provisionRoleBinding,omitempty"`
		ProvisionServiceAccount   *bool                                     `json:"provisionServiceAccount,omitempty"`
		ProvisionPod              *bool                                     `json:"provisionPod,omitempty"`
		RoleRequiresMetricsServer *bool                                     `json:"roleRequiresMetricsServer,omitempty"`
		RoleRequiresArgoRollouts  *bool                                     `json:"roleRequiresArgoRollouts,omitempty"`
	} `json:"spec"`
}

type configEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// kustomization is the subset of kustomize.config.k8s.io/v1beta1 this repository uses; anything else fails
// the strict decode, so a new field is a conscious change here.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources"`
	Patches    []struct {
		Target struct {
			Group   string `json:"group"`
			Version string `json:"version"`
			Kind    string `json:"kind"`
			Name    string `json:"name"`
		} `json:"target"`
		Patch string `json:"patch"`
	} `json:"patches,omitempty"`
}

// jsonPatchOp is one RFC 6902 operation of an overlay patch; its value is decoded strictly for its path.
type jsonPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// objects is every decoded manifest of a kustomize base.
type objects struct {
	namespaces map[string]*corev1.Namespace
	sas        map[string]*corev1.ServiceAccount
	roles      map[string]*rbacv1.Role
	bindings   map[string]*rbacv1.RoleBinding
	configMaps map[string]*corev1.ConfigMap
	deploys    map[string]*appsv1.Deployment
	services   map[string]*corev1.Service
	cpas       map[string]*customPodAutoscaler
}

// decodeStrict decodes one YAML document into v, failing on unknown or duplicate fields.
func decodeStrict(doc []byte, v any) error {
	return yaml.UnmarshalStrict(doc, v)
}

// yamlDocuments splits a multi-document YAML file, dropping empty documents.
func yamlDocuments(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(append(out, line...), '\n')
		}
	}
	return out
}

// decodeObject decodes doc strictly into the Go type of its apiVersion/kind and files it in objs.
func (o *objects) decodeObject(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	put := func(v any, name func() string, into any) error {
		if err := decodeStrict(doc, v); err != nil {
			return fmt.Errorf("%s/%s: %w", tm.APIVersion, tm.Kind, err)
		}
		m := reflect.ValueOf(into)
		if m.MapIndex(reflect.ValueOf(name())).IsValid() {
			return fmt.Errorf("%s %q defined twice", tm.Kind, name())
		}
		m.SetMapIndex(reflect.ValueOf(name()), reflect.ValueOf(v))
		return nil
	}
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 Namespace":
		v := &corev1.Namespace{}
		return put(v, func() string { return v.Name }, o.namespaces)
	case "v1 ServiceAccount":
		v := &corev1.ServiceAccount{}
		return put(v, func() string { return v.Name }, o.sas)
	case "rbac.authorization.k8s.io/v1 Role":
		v := &rbacv1.Role{}
		return put(v, func() string { return v.Name }, o.roles)
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		v := &rbacv1.RoleBinding{}
		return put(v, func() string { return v.Name }, o.bindings)
	case "v1 ConfigMap":
		v := &corev1.ConfigMap{}
		return put(v, func() string { return v.Name }, o.configMaps)
	case "apps/v1 Deployment":
		v := &appsv1.Deployment{}
		return put(v, func() string { return v.Name }, o.deploys)
	case "v1 Service":
		v := &corev1.Service{}
		return put(v, func() string { return v.Name }, o.services)
	case "custompodautoscaler.com/v1 CustomPodAutoscaler":
		v := &customPodAutoscaler{}
		return put(v, func() string { return v.Name }, o.cpas)
	}
	return fmt.Errorf("unexpected kind %q %q (teach manifests_test.go its Go type)", tm.APIVersion, tm.Kind)
}

func loadKustomization(t *testing.T, dir string) *kustomization {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := decodeStrict(b, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("%s/kustomization.yaml: apiVersion/kind %q %q", dir, k.APIVersion, k.Kind)
	}
	return &k
}

// loadBase decodes every resource of a kustomization that lists only files.
func loadBase(t *testing.T, dir string) (*kustomization, *objects) {
	t.Helper()
	k := loadKustomization(t, dir)
	o := &objects{namespaces: map[string]*corev1.Namespace{}, sas: map[string]*corev1.ServiceAccount{},
		roles: map[string]*rbacv1.Role{}, bindings: map[string]*rbacv1.RoleBinding{}, configMaps: map[string]*corev1.ConfigMap{},
		deploys: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{}, cpas: map[string]*customPodAutoscaler{}}
	for _, res := range k.Resources {
		path := filepath.Join(dir, res)
		for i, doc := range yamlDocuments(t, path) {
			if err := o.decodeObject(doc); err != nil {
				t.Errorf("%s document %d: %v", path, i+1, err)
			}
		}
	}
	return k, o
}

// overlay is one CustomPodAutoscaler of a kustomize overlay of a base (deploy/base, or deploy/base-pd with one
// CR per role), resolved the way kustomize would for the patches we use.
type overlay struct {
	name   string // the overlay's directory; for a base with several CRs, directory/CR name
	k      *kustomization
	base   *objects
	cpa    *customPodAutoscaler // the base CR with the overlay's patches applied
	config map[string]string    // its effective config list
}

// loadOverlays resolves every overlay under deploy/overlays into one entry per CustomPodAutoscaler of its base.
func loadOverlays(t *testing.T) []*overlay {
	t.Helper()
	root := repoRoot(t)
	dirs, err := filepath.Glob(filepath.Join(root, "deploy", "overlays", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no overlays under deploy/overlays (%v)", err)
	}
	var out []*overlay
	for _, dir := range dirs {
		out = append(out, loadOverlay(t, dir)...)
	}
	return out
}

// loadOverlay resolves one overlay directory: each CR of its base with the patches that target it by name.
func loadOverlay(t *testing.T, dir string) []*overlay {
	t.Helper()
	k := loadKustomization(t, dir)
	if len(k.Resources) != 1 {
		t.Fatalf("%s: want exactly one resource (the base), got %v", dir, k.Resources)
	}
	baseDir := filepath.Clean(filepath.Join(dir, k.Resources[0]))
	if _, err := os.Stat(filepath.Join(baseDir, "kustomization.yaml")); err != nil {
		t.Fatalf("%s: resource %s is not a kustomization: %v", dir, k.Resources[0], err)
	}
	_, base := loadBase(t, baseDir)
	if len(base.cpas) == 0 {
		t.Fatalf("%s: no CustomPodAutoscaler in the base", dir)
	}
	patched := map[string]*customPodAutoscaler{}
	for name, cr := range base.cpas {
		c := *cr
		c.Spec.Config = slices.Clone(cr.Spec.Config)
		c.Spec.Template.Spec = *cr.Spec.Template.Spec.DeepCopy()
		patched[name] = &c
	}
	for _, p := range k.Patches {
		cr, ok := patched[p.Target.Name]
		if p.Target.Group != "custompodautoscaler.com" || p.Target.Version != "v1" || p.Target.Kind != "CustomPodAutoscaler" || !ok {
			t.Fatalf("%s: patch target %+v matches no CustomPodAutoscaler of the base", dir, p.Target)
		}
		var ops []jsonPatchOp
		if err := decodeStrict([]byte(p.Patch), &ops); err != nil {
			t.Fatalf("%s: patch: %v", dir, err)
		}
		for _, op := range ops {
			if err := applyOp(cr, op); err != nil {
				t.Fatalf("%s: patch op %s %s: %v", dir, op.Op, op.Path, err)
			}
		}
	}
	var out []*overlay
	for _, name := range slices.Sorted(maps.Keys(patched)) {
		ov := &overlay{name: filepath.Base(dir), k: k, base: base, cpa: patched[name], config: map[string]string{}}
		if len(patched) > 1 {
			ov.name += "/" + name
		}
		for _, e := range ov.cpa.Spec.Config {
			if _, dup := ov.config[e.Name]; dup {
				t.Errorf("overlay %s: config key %s set twice (the operator would emit two env vars)", ov.name, e.Name)
			}
			ov.config[e.Name] = e.Value
		}
		out = append(out, ov)
	}
	return out
}

// applyOp applies one overlay patch operation to cr the way kustomize would, for the operations this repository
// uses: config additions and same-key replacements, a container added to the pod template, and the template's
// metadata (its annotations) added.
func applyOp(cr *customPodAutoscaler, op jsonPatchOp) error {
	switch {
	case op.Op == "add" && op.Path == "/spec/config/-":
		var e configEntry
		if err := decodeStrict(op.Value, &e); err != nil {
			return err
		}
		cr.Spec.Config = append(cr.Spec.Config, e)
	case op.Op == "replace" && strings.HasPrefix(op.Path, "/spec/config/"):
		var e configEntry
		if err := decodeStrict(op.Value, &e); err != nil {
			return err
		}
		i, err := strconv.Atoi(strings.TrimPrefix(op.Path, "/spec/config/"))
		if err != nil || i < 0 || i >= len(cr.Spec.Config) {
			return errors.New("no such config entry")
		}
		if cr.Spec.Config[i].Name != e.Name {
			return fmt.Errorf("swaps key %s for %s: an index shifted in the base", cr.Spec.Config[i].Name, e.Name)
		}
		cr.Spec.Config[i] = e
	case op.Op == "add" && op.Path == "/spec/template/spec/containers/-":
		var c corev1.Container
		if err := decodeStrict(op.Value, &c); err != nil {
			return err
		}
		cr.Spec.Template.Spec.Containers = append(cr.Spec.Template.Spec.Containers, c)
	case op.Op == "add" && op.Path == "/spec/template/metadata":
		if cr.Spec.Template.ObjectMeta != nil {
			return errors.New("the base template has metadata: an add would replace it")
		}
		var m struct {
			Annotations map[string]string `json:"annotations"`
		}
		if err := decodeStrict(op.Value, &m); err != nil {
			return err
		}
		cr.Spec.Template.ObjectMeta = map[string]any{"annotations": m.Annotations}
	default:
		return errors.New("this test resolves additions to /spec/config/-, same-key replacements of /spec/config/N, " +
			"additions to /spec/template/spec/containers/- and of /spec/template/metadata")
	}
	return nil
}

// bases are the kustomize bases under deploy/ and how many autoscalers (each with its scale target, Role,
// RoleBinding and ServiceAccount) each holds: the unified example, and the prefill/decode pair (one per role).
var bases = map[string]int{"base": 1, "base-pd": 2}

func TestEveryManifestDecodesStrictly(t *testing.T) {
	root := repoRoot(t)
	// Every YAML file under deploy/ is listed by a base's kustomization (testdata holds the tests' inputs, not manifests).
	listed := map[string]bool{}
	for dir, n := range bases {
		k, o := loadBase(t, filepath.Join(root, "deploy", dir))
		if len(o.cpas) != n || len(o.deploys) != n || len(o.roles) != n || len(o.bindings) != n || len(o.sas) != n {
			t.Fatalf("%s: want %d each of CustomPodAutoscaler, Deployment, Role, RoleBinding, ServiceAccount; got %d %d %d %d %d",
				dir, n, len(o.cpas), len(o.deploys), len(o.roles), len(o.bindings), len(o.sas))
		}
		for _, r := range k.Resources {
			listed[filepath.Join(root, "deploy", dir, r)] = true
		}
		checkNamespaces(t, dir, k, o)
	}
	err := filepath.WalkDir(filepath.Join(root, "deploy"), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || d.Name() == "kustomization.yaml" {
			return err
		}
		if !listed[path] {
			t.Errorf("%s is in no kustomization (dead manifest)", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkNamespaces holds that a base's namespaced objects carry its kustomization's namespace (kustomize would set
// it anyway; a different one in the RoleBinding subject would silently bind nothing) and that it creates it.
func checkNamespaces(t *testing.T, dir string, k *kustomization, o *objects) {
	t.Helper()
	check := func(kind, name, ns string) {
		if ns != k.Namespace {
			t.Errorf("%s: %s %s: namespace %q, want %q", dir, kind, name, ns, k.Namespace)
		}
	}
	for _, v := range o.sas {
		check("ServiceAccount", v.Name, v.Namespace)
	}
	for _, v := range o.roles {
		check("Role", v.Name, v.Namespace)
	}
	for _, v := range o.bindings {
		check("RoleBinding", v.Name, v.Namespace)
		for _, s := range v.Subjects {
			check("RoleBinding subject", s.Name, s.Namespace)
		}
	}
	for _, v := range o.configMaps {
		check("ConfigMap", v.Name, v.Namespace)
	}
	for _, v := range o.deploys {
		check("Deployment", v.Name, v.Namespace)
	}
	for _, v := range o.services {
		check("Service", v.Name, v.Namespace)
	}
	for _, v := range o.cpas {
		check("CustomPodAutoscaler", v.Name, v.Namespace)
	}
	if _, ok := o.namespaces[k.Namespace]; !ok {
		t.Errorf("%s does not create its namespace %s", dir, k.Namespace)
	}
}

func TestStrictDecodingRejectsTypos(t *testing.T) {
	o := &objects{deploys: map[string]*appsv1.Deployment{}, cpas: map[string]*customPodAutoscaler{}, roles: map[string]*rbacv1.Role{}}
	bad := map[string]string{
		"deployment field typo": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replica: 2}\n",
		"CPA spec typo":         "apiVersion: custompodautoscaler.com/v1\nkind: CustomPodAutoscaler\nmetadata: {name: x}\nspec: {provisionRoles: false}\n",
		"CPA template typo":     "apiVersion: custompodautoscaler.com/v1\nkind: CustomPodAutoscaler\nmetadata: {name: x}\nspec: {template: {spec: {container: []}}}\n",
		"role rule typo":        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: x}\nrules: [{apiGroup: [apps]}]\n",
		"unknown kind":          "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n",
		"not YAML":              "apiVersion: [v1\n",
	}
	for name, doc := range bad {
		if err := o.decodeObject([]byte(doc)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

// permission is one (apiGroup, resource, verb, resourceName) grant.
type permission = rbacgrant.Grant

// perm is the grant of verb on group/resource, of the object name ("" for all).
func perm(group, resource, verb, name string) permission {
	return permission{Group: group, Resource: resource, Verb: verb, Name: name}
}

func granted(r *rbacv1.Role) (map[permission]bool, error) { return rbacgrant.Of(r.Rules) }

// needed is what inferscale's pod calls, given its CustomPodAutoscaler config: CPA GETs the target and its
// /scale and PATCHes /scale, of that one object only; the target's pods are listed (by CPA in per-pod mode, by
// metric in per-resource and Prometheus modes; a list cannot be limited by name); evaluate with
// stateBackend=configmap creates its ConfigMap once and then gets and updates only that one. The e2e
// (deploy/e2e) checks the same against the API calls the scenarios really make.
func needed(t *testing.T, cr *customPodAutoscaler, ev knobs.Evaluate) map[permission]bool {
	ref := cr.Spec.ScaleTargetRef
	group, _, _ := strings.Cut(ref.APIVersion, "/")
	if !strings.Contains(ref.APIVersion, "/") {
		group = ""
	}
	resource := strings.ToLower(ref.Kind) + "s"
	out := map[permission]bool{
		perm(group, resource, "get", ref.Name):            true,
		perm(group, resource+"/scale", "get", ref.Name):   true,
		perm(group, resource+"/scale", "patch", ref.Name): true,
		perm("", "pods", "list", ""):                      true,
	}
	if ev.Store.Backend == "configmap" {
		out[perm("", "configmaps", "create", "")] = true
		out[perm("", "configmaps", "get", ev.Store.ConfigMap)] = true
		out[perm("", "configmaps", "update", ev.Store.ConfigMap)] = true
	}
	// The exporter sidecar (deploy/overlays/exporter) only gets the state ConfigMap, with the pod's service account
	// (shared/export: TestCollectorOverAConfigMap holds that it sends nothing but that GET).
	if exporterContainer(cr) != nil && ev.Store.Backend == "configmap" {
		out[perm("", "configmaps", "get", ev.Store.ConfigMap)] = true
	}
	// deletionCost: evaluate merge-patches controller.kubernetes.io/pod-deletion-cost onto the victims of a
	// scale-down and patches it away from the previous ones (shared/decide/cluster.go); pod names change, so no
	// resourceNames.
	if ev.Policy.DeletionCost {
		out[perm("", "pods", "patch", "")] = true
	}
	// events: the recorder creates an Event, patches its count on a repeat, and reads it when a create answers
	// AlreadyExists because its memory was lost (shared/kube/events.go); Event names are hashes.
	if ev.Cluster.Events {
		for _, verb := range []string{"create", "patch", "get"} {
			out[perm("", "events", verb, "")] = true
		}
	}
	return out
}

// evaluateSettings decodes env (and the policyFile it names) as evaluate does.
func evaluateSettings(t *testing.T, env map[string]string) knobs.Evaluate {
	t.Helper()
	src, err := settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	ev, err := knobs.Read(src)
	if err != nil {
		t.Fatalf("evaluate would reject %v: %v", env, err)
	}
	return ev
}

func TestRBACGrantsExactlyWhatIsUsed(t *testing.T) {
	for _, ov := range loadOverlays(t) {
		t.Run(ov.name, func(t *testing.T) {
			cr := ov.cpa
			for flag, v := range map[string]*bool{"provisionRole": cr.Spec.ProvisionRole, "provisionRoleBinding": cr.Spec.ProvisionRoleBinding,
				"provisionServiceAccount": cr.Spec.ProvisionServiceAccount} {
				if v == nil || *v {
					t.Errorf("%s must be false: the base supplies its own (the operator's Role grants * on pods and no ConfigMaps)", flag)
				}
			}
			if cr.Spec.RoleRequiresMetricsServer != nil && *cr.Spec.RoleRequiresMetricsServer {
				t.Error("roleRequiresMetricsServer is set but no kubernetesMetricSpecs are used")
			}
			sa, ok := ov.base.sas[cr.Name]
			if !ok {
				t.Fatalf("no ServiceAccount named %s (the operator forces serviceAccountName to the CR's name)", cr.Name)
			}
			role, ok := ov.base.roles[cr.Name]
			if !ok {
				t.Fatalf("no Role named %s", cr.Name)
			}
			rb, ok := ov.base.bindings[cr.Name]
			if !ok {
				t.Fatalf("no RoleBinding named %s", cr.Name)
			}
			if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name || rb.RoleRef.APIGroup != rbacv1.GroupName {
				t.Errorf("RoleBinding refers to %+v, want Role %s", rb.RoleRef, role.Name)
			}
			if len(rb.Subjects) != 1 || rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Name != sa.Name || rb.Subjects[0].Namespace != sa.Namespace {
				t.Errorf("RoleBinding subjects %+v, want only ServiceAccount %s/%s", rb.Subjects, sa.Namespace, sa.Name)
			}
			got, err := granted(role)
			if err != nil {
				t.Fatal(err)
			}
			want := needed(t, cr, evaluateSettings(t, localPolicyEnv(t, ov)))
			for p := range want {
				if !got[p] {
					t.Errorf("Role lacks %+v, which inferscale uses", p)
				}
			}
			for p := range got {
				if !want[p] {
					t.Errorf("Role grants %+v, which nothing uses", p)
				}
			}
		})
	}
}

func TestRBACCheckCatchesExtraAndMissingGrants(t *testing.T) {
	cr := &customPodAutoscaler{}
	cr.Spec.ScaleTargetRef = autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "x"}
	want := needed(t, cr, evaluateSettings(t, map[string]string{"stateBackend": "configmap", "stateConfigMap": "s"}))
	if !want[perm("", "configmaps", "update", "s")] || want[perm("", "configmaps", "update", "")] {
		t.Fatalf("needed() does not scope ConfigMap updates to the state ConfigMap: %v", want)
	}
	defaults := needed(t, cr, evaluateSettings(t, map[string]string{}))
	if defaults[perm("", "configmaps", "create", "")] {
		t.Fatal("needed() asks for ConfigMaps with the file state backend")
	}
	if !defaults[perm("apps", "deployments/scale", "patch", "x")] || defaults[perm("apps", "deployments/scale", "patch", "")] {
		t.Fatalf("needed() does not limit the target's /scale to its name: %v", defaults)
	}
	// deletionCost and events are on by default; off, their grants are not needed.
	pods := perm("", "pods", "patch", "")
	events := []permission{perm("", "events", "create", ""), perm("", "events", "patch", ""), perm("", "events", "get", "")}
	if !defaults[pods] {
		t.Errorf("needed() lacks %+v with deletionCost on (the default)", pods)
	}
	for _, p := range events {
		if !defaults[p] {
			t.Errorf("needed() lacks %+v with events on (the default)", p)
		}
	}
	off := needed(t, cr, evaluateSettings(t, map[string]string{"deletionCost": "false", "events": "false"}))
	if off[pods] {
		t.Errorf("needed() asks for %+v with deletionCost off", pods)
	}
	for _, p := range events {
		if off[p] {
			t.Errorf("needed() asks for %+v with events off", p)
		}
	}
	if onlyEvents := needed(t, cr, evaluateSettings(t, map[string]string{"deletionCost": "false"})); onlyEvents[pods] || !onlyEvents[events[0]] {
		t.Errorf("deletionCost off, events on: needed() = %v", onlyEvents)
	}
	if _, err := granted(&rbacv1.Role{Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"*"}, Verbs: []string{"get"}}}}); err == nil {
		t.Fatal("granted() accepted a wildcard")
	}
}

// knownKeys is every env key something in the CPA pod reads: CPA's own top-level keys and every knob of
// metric and evaluate.
func knownKeys(t *testing.T) map[string]bool {
	keys := map[string]bool{}
	ct := reflect.TypeOf(cpaconfig.Config{})
	for i := range ct.NumField() {
		name, _, _ := strings.Cut(ct.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	for _, k := range settings.Keys() {
		keys[k] = true
	}
	return keys
}

// localPolicyEnv maps an overlay's config to what evaluate would read here: the image's /config.yaml becomes
// config/config.yaml, and a policyFile inside a ConfigMap mount becomes a temporary copy of that key.
func localPolicyEnv(t *testing.T, ov *overlay) map[string]string {
	t.Helper()
	root := repoRoot(t)
	env := map[string]string{}
	for k, v := range ov.config {
		env[k] = v
	}
	env["configPath"] = filepath.Join(root, "config", filepath.Base(orDefault(ov.config["configPath"], "/config.yaml")))
	if pf, ok := ov.config[settings.KeyPolicyFile]; ok {
		cm, key := configMapBehind(t, ov, pf)
		local := filepath.Join(t.TempDir(), key)
		if err := os.WriteFile(local, []byte(cm.Data[key]), 0o644); err != nil {
			t.Fatal(err)
		}
		env[settings.KeyPolicyFile] = local
	}
	return env
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// configMapBehind finds the ConfigMap key a path inside the autoscaler container resolves to.
func configMapBehind(t *testing.T, ov *overlay, path string) (*corev1.ConfigMap, string) {
	t.Helper()
	spec := ov.cpa.Spec.Template.Spec
	for _, vm := range spec.Containers[0].VolumeMounts {
		if !strings.HasPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/") {
			continue
		}
		for _, vol := range spec.Volumes {
			if vol.Name == vm.Name && vol.ConfigMap != nil {
				cm, ok := ov.base.configMaps[vol.ConfigMap.Name]
				if !ok {
					t.Fatalf("volume %s refers to ConfigMap %s, which the base does not create", vol.Name, vol.ConfigMap.Name)
				}
				key := strings.TrimPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/")
				if _, ok := cm.Data[key]; !ok {
					t.Fatalf("%s: ConfigMap %s has no key %s", path, cm.Name, key)
				}
				return cm, key
			}
		}
	}
	t.Fatalf("%s is not inside a ConfigMap volume of the autoscaler container", path)
	return nil, ""
}

func TestCustomPodAutoscalerConfigIsKnownAndValid(t *testing.T) {
	keys := knownKeys(t)
	for _, ov := range loadOverlays(t) {
		t.Run(ov.name, func(t *testing.T) {
			for k := range ov.config {
				if !keys[k] {
					t.Errorf("config key %q is read by nothing (CPA, metric and evaluate ignore unknown env vars)", k)
				}
			}
			env := localPolicyEnv(t, ov)
			src, err := settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range src.FileKeys() {
				if !keys[k] {
					t.Errorf("policy file key %q is read by nothing", k)
				}
			}
			ev, err := knobs.Read(src)
			if err != nil {
				t.Fatalf("evaluate would reject this configuration: %v", err)
			}
			if _, err := gather.ReadKnobs(src); err != nil {
				t.Fatalf("metric would reject this configuration: %v", err)
			}
			pol := ev.Policy
			cpaCfg := cpaConfigFor(t, ov)
			// Scale-down stabilisation has one owner. evaluate keeps its window and cooldown in durable state; CPA's
			// downscaleStabilization is in memory (lost on restart) and takes the max over evaluate's outputs, so
			// with both evaluate's cooldown counts scale-downs CPA never applied and holds forever.
			cpaWindow := time.Duration(cpaCfg.DownscaleStabilization) * time.Second
			if v, ok := ov.config["downscaleStabilization"]; ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("downscaleStabilization=%q is not an integer", v)
				}
				cpaWindow = time.Duration(n) * time.Second
			}
			switch {
			case pol.DownStabilization > 0 && cpaWindow != 0:
				t.Errorf("CPA downscaleStabilization %s on top of evaluate's durable downStabilization %s: set it to 0", cpaWindow, pol.DownStabilization)
			case pol.DownStabilization == 0 && pol.ScaleDownCooldown == 0 && cpaWindow == 0:
				t.Error("no scale-down stabilisation at all (evaluate downStabilization, scaleDownCooldown and CPA downscaleStabilization are 0)")
			}
			minR, maxR := pol.MinReplicas, pol.MaxReplicas
			if minR < 1 || maxR < minR {
				t.Errorf("replica bounds %d..%d", minR, maxR)
			}
			runMode := orDefault(ov.config["runMode"], cpaCfg.RunMode) // CPA reads every top-level key from the env too
			switch src := orDefault(ov.config["source"], "direct"); src {
			case "direct":
				if runMode != cpaconfig.RunModePerPod && runMode != cpaconfig.RunModePerResource {
					t.Errorf("source=direct with runMode %q", runMode)
				}
			case "prometheus":
				if runMode != cpaconfig.RunModePerResource || ov.config["prometheusURL"] == "" {
					t.Errorf("source=prometheus wants runMode %s and a prometheusURL; got %s, %q", cpaconfig.RunModePerResource, runMode, ov.config["prometheusURL"])
				}
			default:
				t.Errorf("source=%s", src)
			}
		})
	}
}

// cpaConfigFor loads the CPA config file an overlay selects (configPath, default /config.yaml).
func cpaConfigFor(t *testing.T, ov *overlay) *cpaconfig.Config {
	t.Helper()
	path := filepath.Join(repoRoot(t), "config", filepath.Base(orDefault(ov.config["configPath"], "/config.yaml")))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cpaconfig.ParseConfig(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

func TestTargetDeploymentAndServiceFit(t *testing.T) {
	for _, ov := range loadOverlays(t) {
		t.Run(ov.name, func(t *testing.T) {
			ref := ov.cpa.Spec.ScaleTargetRef
			d, ok := ov.base.deploys[ref.Name]
			if !ok || ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" {
				t.Fatalf("scaleTargetRef %+v is not a Deployment of the base", ref)
			}
			sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
			if err != nil || sel.Empty() {
				t.Fatalf("Deployment selector %v: %v (an empty selector makes CPA match every pod of the namespace)", d.Spec.Selector, err)
			}
			if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Errorf("Deployment selector does not match its template labels")
			}
			port, err := strconv.Atoi(orDefault(ov.config["metricsPort"], "8000"))
			if err != nil {
				t.Fatalf("metricsPort: %v", err)
			}
			found := false
			for _, c := range d.Spec.Template.Spec.Containers {
				for _, p := range c.Ports {
					found = found || int(p.ContainerPort) == port
				}
			}
			if !found {
				t.Errorf("no container of %s exposes metricsPort %d", d.Name, port)
			}
			svc, ok := ov.base.services[d.Name]
			if !ok || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Errorf("no Service %s selecting the Deployment's pods", d.Name)
			}
			spec := ov.cpa.Spec.Template.Spec
			// The autoscaler's container first (CPA runs in it), then at most the exporter sidecar.
			want := 1
			if exporterContainer(ov.cpa) != nil {
				want = 2
			}
			if len(spec.Containers) != want || spec.Containers[0].Image == "" || len(spec.Containers[0].Command) > 0 {
				t.Fatalf("autoscaler template: want the CPA container (an image, its CMD) and at most the exporter, got %d containers", len(spec.Containers))
			}
			vols := map[string]bool{}
			for _, v := range spec.Volumes {
				vols[v.Name] = true
			}
			for _, c := range spec.Containers {
				sc := c.SecurityContext
				if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
					t.Errorf("container %s must run as non-root without privilege escalation: %+v", c.Name, sc)
				}
				for _, vm := range c.VolumeMounts {
					if !vols[vm.Name] {
						t.Errorf("container %s: volumeMount %s has no volume", c.Name, vm.Name)
					}
				}
			}
		})
	}
}
