package deploy

import (
	goflag "flag"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inferscale/inferscale/shared/export"
)

// exporterContainer is the CPA pod's container that runs /exporter (nil: none).
func exporterContainer(cr *customPodAutoscaler) *corev1.Container {
	for i, c := range cr.Spec.Template.Spec.Containers {
		if slices.Equal(c.Command, []string{"/exporter"}) {
			return &cr.Spec.Template.Spec.Containers[i]
		}
	}
	return nil
}

// The exporter overlay adds the sidecar; the base has none. The sidecar runs the CPA container's image, listens
// where its containerPort and the prometheus.io annotations say, mounts what the settings it shares with evaluate
// name (the policy file), has a memory limit, and reads the store evaluate writes (the RBAC test holds that the
// Role grants it exactly the get it uses, and the restricted Pod Security test covers its securityContext).
func TestExporterSidecar(t *testing.T) {
	found := false
	for _, ov := range loadOverlays(t) {
		c := exporterContainer(ov.cpa)
		if ov.name != "exporter" {
			if c != nil {
				t.Errorf("overlay %s runs the exporter: it is deploy/overlays/exporter's opt-in", ov.name)
			}
			continue
		}
		found = true
		if c == nil {
			t.Fatal("deploy/overlays/exporter has no container running /exporter")
		}
		main := ov.cpa.Spec.Template.Spec.Containers[0]
		if c.Image != main.Image || c.Name == main.Name {
			t.Errorf("exporter image %q name %q; want the CPA container's image %q under its own name", c.Image, c.Name, main.Image)
		}
		fs := goflag.NewFlagSet("exporter", goflag.ContinueOnError)
		listen := fs.String("listen", export.DefaultListen, "")
		if err := fs.Parse(c.Args); err != nil || fs.NArg() > 0 {
			t.Fatalf("exporter args %q: %v", c.Args, err)
		}
		_, portText, _ := strings.Cut(*listen, ":")
		port, err := strconv.Atoi(portText)
		if err != nil || len(c.Ports) != 1 || c.Ports[0].ContainerPort != int32(port) || c.Ports[0].Name != "metrics" {
			t.Errorf("exporter listens on %q, containerPorts %+v: want one port named metrics on the port it listens on", *listen, c.Ports)
		}
		annotations, _ := ov.cpa.Spec.Template.ObjectMeta["annotations"].(map[string]string)
		want := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": strconv.Itoa(port), "prometheus.io/path": export.MetricsPath}
		for k, v := range want {
			if annotations[k] != v {
				t.Errorf("pod annotation %s = %q, want %q", k, annotations[k], v)
			}
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			t.Error("the exporter has no memory limit")
		}
		if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
			t.Errorf("readinessProbe %+v: want an HTTP GET of /healthz", p)
		}
		// The operator gives every container the config as env vars: the exporter reads the same settings, so
		// it must see the files they name where evaluate does.
		env := localPolicyEnv(t, ov)
		if pf := ov.config["policyFile"]; pf != "" && !mountsPath(*c, pf) {
			t.Errorf("policyFile %s is not mounted in the exporter (its settings would not load)", pf)
		}
		if ev := evaluateSettings(t, env); ev.Store.Backend == "file" && !mountsPath(*c, ev.Store.File) {
			t.Errorf("stateFile %s is not mounted in the exporter", ev.Store.File)
		}
	}
	if !found {
		t.Fatal("no deploy/overlays/exporter")
	}
}

// mountsPath reports whether c mounts a volume at a folder holding path.
func mountsPath(c corev1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			return true
		}
	}
	return false
}
