//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/deploy/cpaconfig"
)

// customPodAutoscaler is the part of a custompodautoscaler.com/v1 object the operator acts on.
type customPodAutoscaler struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		ScaleTargetRef json.RawMessage `json:"scaleTargetRef"`
		Config         []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"config"`
		Template struct {
			Spec corev1.PodSpec `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// autoscalerPod is what the CPA operator would run for a CustomPodAutoscaler, prepared to run as a local process:
// the environment the operator injects, the service-account files, ConfigMap volumes materialised under a local
// folder (env values pointing into a mount are rewritten), and the image's config.yaml with the image paths
// (/metric, /evaluate) pointing at the repository's bin/.
type autoscalerPod struct {
	env       []string // operator env + CPA in-cluster env, without the caller's overrides
	saDir     string
	cpaConfig string
	apiPort   int
}

// emulateOperator reads the CustomPodAutoscaler name in ns and prepares what its pod would get.
func (c *cluster) emulateOperator(ns, name, repo string) (*autoscalerPod, error) {
	var cr customPodAutoscaler
	if err := c.getJSON(fmt.Sprintf("/apis/custompodautoscaler.com/v1/namespaces/%s/custompodautoscalers/%s", ns, name), &cr); err != nil {
		return nil, err
	}
	dir := filepath.Join(c.root, "autoscaler-"+name)
	ap := &autoscalerPod{saDir: filepath.Join(dir, "serviceaccount")}
	if err := os.MkdirAll(ap.saDir, 0o755); err != nil {
		return nil, fmt.Errorf("mkdir: %w", err)
	}
	// The operator forces serviceAccountName to the CR's name; the token is that account's.
	token, err := c.kubectl("", "create", "token", name, "-n", ns, "--duration=24h")
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(c.pki.CACert)
	if err != nil {
		return nil, fmt.Errorf("reading CA: %w", err)
	}
	for f, content := range map[string]string{"token": strings.TrimSpace(token), "ca.crt": string(caPEM), "namespace": ns} {
		if err := os.WriteFile(filepath.Join(ap.saDir, f), []byte(content), 0o644); err != nil {
			return nil, fmt.Errorf("writing %s: %w", f, err)
		}
	}
	if len(cr.Spec.Template.Spec.Containers) != 1 {
		return nil, fmt.Errorf("template has %d containers, want 1", len(cr.Spec.Template.Spec.Containers))
	}
	mounts, err := c.materialiseConfigMapMounts(ns, cr.Spec.Template.Spec, filepath.Join(dir, "mounts"))
	if err != nil {
		return nil, err
	}
	rewrite := func(v string) string {
		for mountPath, local := range mounts {
			if v == mountPath || strings.HasPrefix(v, mountPath+"/") {
				return local + strings.TrimPrefix(v, mountPath)
			}
		}
		return v
	}
	configPath := "/config.yaml" // the image's default, as CPA's
	ap.env = append(ap.env, "scaleTargetRef="+string(cr.Spec.ScaleTargetRef), "namespace="+ns)
	for _, kv := range cr.Spec.Config {
		if kv.Name == "configPath" {
			configPath = kv.Value
			continue
		}
		ap.env = append(ap.env, kv.Name+"="+rewrite(kv.Value))
	}
	ap.apiPort = freePort(c.t)
	if ap.cpaConfig, err = localCPAConfig(repo, configPath, dir, ap.apiPort); err != nil {
		return nil, err
	}
	ap.env = append(ap.env, "configPath="+ap.cpaConfig,
		"KUBERNETES_SERVICE_HOST=127.0.0.1", fmt.Sprintf("KUBERNETES_SERVICE_PORT=%d", c.apiPort),
		"PATH="+os.Getenv("PATH"), "HOME="+dir)
	return ap, nil
}

// materialiseConfigMapMounts writes every ConfigMap volume the container mounts under local and returns
// mountPath -> local folder.
func (c *cluster) materialiseConfigMapMounts(ns string, spec corev1.PodSpec, local string) (map[string]string, error) {
	out := map[string]string{}
	for _, vm := range spec.Containers[0].VolumeMounts {
		for _, vol := range spec.Volumes {
			if vol.Name != vm.Name || vol.ConfigMap == nil {
				continue
			}
			var cm corev1.ConfigMap
			if err := c.getJSON(fmt.Sprintf("/api/v1/namespaces/%s/configmaps/%s", ns, vol.ConfigMap.Name), &cm); err != nil {
				return nil, err
			}
			dir := filepath.Join(local, vm.Name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("mkdir: %w", err)
			}
			for k, v := range cm.Data {
				if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
					return nil, fmt.Errorf("writing %s: %w", k, err)
				}
			}
			out[vm.MountPath] = dir
		}
	}
	return out, nil
}

// localCPAConfig turns the image's CPA config (imagePath: /config.yaml or /config-prometheus.yaml, copied from
// config/ by the Dockerfile) into one that runs here: entrypoints /x become <repo>/bin/x, and the REST API
// listens on loopback only.
func localCPAConfig(repo, imagePath, dir string, apiPort int) (string, error) {
	src := filepath.Join(repo, "config", filepath.Base(imagePath))
	b, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("CPA config for %s: %w", imagePath, err)
	}
	cfg, err := cpaconfig.ParseConfig(b)
	if err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	for name, m := range cfg.Methods() {
		if m.Shell == nil {
			continue
		}
		local := filepath.Join(repo, "bin", filepath.Base(m.Shell.Entrypoint))
		if _, err := os.Stat(local); err != nil {
			return "", fmt.Errorf("%s entrypoint %s: no %s (run make build): %w", name, m.Shell.Entrypoint, local, err)
		}
		m.Shell.Entrypoint = local
	}
	cfg.APIConfig = &cpaconfig.APIConfig{Enabled: true, Host: "127.0.0.1", Port: apiPort}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("encoding CPA config: %w", err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// inClusterScript gives the CPA the in-cluster service-account files in a private mount namespace, so the
// host's /var/run/secrets is never touched, then execs the CPA (whose PID is therefore the one recorded).
const inClusterScript = `set -e
R=$(readlink -f /var/run); if [ -d "$R/secrets" ]; then M="$R/secrets"; else M="$R"; fi
mount -t tmpfs -o size=1m,mode=755 tmpfs "$M"
mkdir -p "$R/secrets/kubernetes.io/serviceaccount"
mount --bind "$0" "$R/secrets/kubernetes.io/serviceaccount"
exec "$@"`

// startCPA runs the real CPA for ap with extra env overrides (later entries win).
func (c *cluster) startCPA(name string, ap *autoscalerPod, overrides ...string) *process {
	env := append(append([]string{}, ap.env...), overrides...)
	wd := filepath.Join(c.root, "cpa-wd")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		c.t.Fatalf("mkdir: %v", err)
	}
	return c.start(name, env, wd, "unshare", "-m", "--propagation", "private", "sh", "-c", inClusterScript,
		ap.saDir, filepath.Join(c.bin, "custom-pod-autoscaler"))
}
