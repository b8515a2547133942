//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// kubelet stands in for the kubelet of the kwok nodes, for the pods whose image it knows: once kwok reports such a
// pod Running, it runs each of the pod's containers as a local process built only from the pod object read from the
// API — the image's files and settings, command/args, env (with fieldRefs), the volumes it mounts (ConfigMaps,
// emptyDirs, and the projected service-account token the API server's admission added, requested bound to this pod
// as a kubelet does), runAsUser/runAsGroup — chrooted into a root of the pod's own. It restarts a container that
// exits (restartPolicy Always) and stops them all when their pod is deleted. Pods of other images (vLLM) are left
// to kwok.
//
// The containers of one pod (a sidecar beside the main container) must be of the same image and share that root,
// with every container's volumes mounted into it: an emptyDir two containers mount is one directory, as in a pod,
// but a container also sees the mounts only the other one has (two containers mounting different volumes at one
// path are refused), and readOnly is not enforced. They share the test's network namespace, as containers share
// their pod's; a pod with a network of its own (below) runs one container.
//
// Pods of an image that owns its network (the vLLM emulator) get more of a kubelet (lifecycle_test.go): a network
// namespace of their own with the pod IP (podnet_test.go), their readinessProbe (the Ready condition follows it;
// kwok only starts these pods), and on deletion their preStop sleep, SIGTERM and the full grace period, after which
// the kubelet removes the pod object.
//
// What a real node has and this does not: container isolation beyond chroot and the uid (the other pods share the
// test's network namespace; no cgroups, so resources.limits are not enforced; a pod's containers share a root),
// image pulls, init containers, liveness and startup probes (and readiness probes but the lifecycle pods'), exec
// hooks, `kubectl exec`/`port-forward`, Service-link env vars other than the `kubernetes` Service's, token rotation
// (tokens live 1 h).
type kubelet struct {
	c      *cluster
	images map[string]*image // by repository
	mu     sync.Mutex
	pods   map[types.UID]*podRun
	// terminating: the lifecycle pods being stopped (preStop, SIGTERM, grace) and not yet removed.
	terminating map[types.UID]bool
	stop        chan struct{}
	done        chan struct{}
	// errs collects what it could not run (a pod it knows the image of but cannot start); the test checks it.
	errs []error
}

// podRun is one pod the kubelet runs.
type podRun struct {
	pod      corev1.Pod // as first seen Running
	root     string
	mu       sync.Mutex // guards stopping and each container's proc and starts
	ctrs     []*containerRun
	stopping bool
	// lifecycle: the kubelet owns the pod's readiness and its termination (an image with its own network).
	lifecycle bool
	probeStop chan struct{} // closed when the readiness prober is to stop (lifecycle pods)
}

// containerRun is one container of a pod the kubelet runs.
type containerRun struct {
	name   string
	log    string
	start  func() (*process, error)
	proc   *process
	starts int
	exited chan struct{} // closed when the container is stopped for good
}

// starts is how many times the named container was started (0 for none of that name).
func (r *podRun) starts(container string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.ctrs {
		if c.name == container {
			return c.starts
		}
	}
	return 0
}

func newKubelet(c *cluster, images ...*image) *kubelet {
	k := &kubelet{c: c, images: map[string]*image{}, pods: map[types.UID]*podRun{}, terminating: map[types.UID]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	for _, img := range images {
		k.images[img.ref] = img
	}
	go k.loop()
	c.t.Cleanup(k.shutdown)
	return k
}

func (k *kubelet) loop() {
	defer close(k.done)
	for {
		k.sync()
		select {
		case <-k.stop:
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// sync starts the containers of new Running pods and stops those of pods deleted or being deleted.
func (k *kubelet) sync() {
	var list corev1.PodList
	if err := k.c.getJSON("/api/v1/pods", &list); err != nil {
		return // the control plane is stopping, or a transient error: next round
	}
	live := map[types.UID]bool{}
	for i := range list.Items {
		p := &list.Items[i]
		if len(p.Spec.Containers) == 0 {
			continue
		}
		img, ok := k.images[repository(p.Spec.Containers[0].Image)]
		if !ok {
			continue
		}
		if p.DeletionTimestamp != nil && img.ownNetwork && p.Spec.NodeName != "" {
			k.removeUnstarted(p)
		}
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		live[p.UID] = true
		k.mu.Lock()
		_, running := k.pods[p.UID]
		k.mu.Unlock()
		if running {
			continue
		}
		if err := k.run(p); err != nil {
			if k.deleted(p) {
				// The pod went while its container was being set up (its namespace is being removed, say): a
				// kubelet gives up on it, and nothing failed.
				k.c.t.Logf("kubelet: pod %s/%s went away while starting: %v", p.Namespace, p.Name, err)
				continue
			}
			k.mu.Lock()
			k.errs = append(k.errs, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err))
			k.pods[p.UID] = &podRun{pod: *p, stopping: true, lifecycle: img.ownNetwork, probeStop: make(chan struct{})}
			k.mu.Unlock()
			k.c.t.Logf("kubelet: cannot run pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
	k.mu.Lock()
	var gone []*podRun
	for uid, r := range k.pods {
		if !live[uid] {
			gone = append(gone, r)
			delete(k.pods, uid)
		}
	}
	k.mu.Unlock()
	for _, r := range gone {
		if r.lifecycle {
			k.mu.Lock()
			k.terminating[r.pod.UID] = true
			k.mu.Unlock()
			go func() {
				k.terminate(r)
				k.mu.Lock()
				delete(k.terminating, r.pod.UID)
				k.mu.Unlock()
			}()
			continue
		}
		go r.kill(gracePeriod(&r.pod))
	}
}

// deleted reports whether the pod is gone or being deleted (a pod of that name with another UID counts as gone).
func (k *kubelet) deleted(p *corev1.Pod) bool {
	var now corev1.Pod
	err := k.c.getJSON("/api/v1/namespaces/"+p.Namespace+"/pods/"+p.Name, &now)
	return isNotFound(err) || (err == nil && (now.UID != p.UID || now.DeletionTimestamp != nil))
}

func gracePeriod(p *corev1.Pod) time.Duration {
	g := 30 * time.Second
	if p.Spec.TerminationGracePeriodSeconds != nil {
		g = time.Duration(*p.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return min(g, 10*time.Second)
}

// run prepares the pod's root and starts its containers.
func (k *kubelet) run(p *corev1.Pod) error {
	if len(p.Spec.InitContainers) != 0 {
		return fmt.Errorf("%d init containers: this kubelet runs none", len(p.Spec.InitContainers))
	}
	img := k.images[repository(p.Spec.Containers[0].Image)]
	if img.ownNetwork && len(p.Spec.Containers) != 1 {
		return fmt.Errorf("%d containers: this kubelet runs one in a pod with a network of its own", len(p.Spec.Containers))
	}
	if err := checkOneRoot(p); err != nil {
		return err
	}
	dir := filepath.Join(k.c.root, "pods", string(p.UID))
	root := filepath.Join(dir, "rootfs")
	if err := img.populate(root); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(k.c.root, "logs", "pods"), 0o755); err != nil {
		return err
	}
	r := &podRun{pod: *p, root: root, lifecycle: img.ownNetwork, probeStop: make(chan struct{})}
	for _, ctr := range p.Spec.Containers {
		c, err := k.prepare(p, ctr, img, root)
		if err != nil {
			return fmt.Errorf("container %s: %w", ctr.Name, err)
		}
		r.ctrs = append(r.ctrs, c)
	}
	for _, c := range r.ctrs {
		proc, err := c.start()
		if err != nil {
			r.stopStarted()
			return fmt.Errorf("container %s: %w", c.name, err)
		}
		c.proc, c.starts = proc, 1
	}
	if err := k.publishLog(p, r.ctrs); err != nil {
		r.stopStarted()
		return err
	}
	k.mu.Lock()
	k.pods[p.UID] = r
	k.mu.Unlock()
	for _, c := range r.ctrs {
		go r.supervise(c)
	}
	if r.lifecycle {
		go k.probeReadiness(r, p.Spec.Containers[0])
	}
	return nil
}

// checkOneRoot refuses a pod whose containers cannot share one root: another image than the first container's, or
// two volumes mounted at one path.
func checkOneRoot(p *corev1.Pod) error {
	first := repository(p.Spec.Containers[0].Image)
	mounted := map[string]string{} // mountPath -> volume
	for _, c := range p.Spec.Containers {
		if repository(c.Image) != first {
			return fmt.Errorf("container %s is of image %s, not %s: this kubelet runs a pod's containers in one root", c.Name, c.Image, first)
		}
		for _, m := range c.VolumeMounts {
			at := path.Clean(m.MountPath)
			if v, ok := mounted[at]; ok && v != m.Name {
				return fmt.Errorf("volumes %s and %s both at %s: this kubelet runs a pod's containers in one root", v, m.Name, at)
			}
			mounted[at] = m.Name
		}
	}
	return nil
}

// prepare mounts the container's volumes into the pod's root and returns it ready to start.
func (k *kubelet) prepare(p *corev1.Pod, ctr corev1.Container, img *image, root string) (*containerRun, error) {
	if err := k.mountVolumes(p, ctr, root); err != nil {
		return nil, err
	}
	env, err := k.containerEnv(p, ctr, img)
	if err != nil {
		return nil, err
	}
	argv := containerArgv(ctr, img)
	if len(argv) == 0 {
		return nil, errors.New("no command: neither the container nor the image has an entrypoint or cmd")
	}
	uid, gid, err := runAs(p, ctr, img)
	if err != nil {
		return nil, err
	}
	if img.ownNetwork {
		if err := checkLifecycle(ctr); err != nil {
			return nil, err
		}
	}
	c := &containerRun{name: ctr.Name, exited: make(chan struct{}),
		log: filepath.Join(k.c.root, "logs", "pods", fmt.Sprintf("%s_%s_%s_%s.log", p.Namespace, p.Name, string(p.UID)[:8], ctr.Name))}
	workdir := orDefault(ctr.WorkingDir, img.workdir)
	netStarts := 0
	c.start = func() (*process, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env, cmd.Dir = env, workdir
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		if img.ownNetwork {
			cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET
		}
		proc, err := k.c.startCmd(fmt.Sprintf("pod %s/%s container %s", p.Namespace, p.Name, ctr.Name), c.log, cmd, true)
		if err != nil || !img.ownNetwork {
			return proc, err
		}
		netStarts++
		// The host end's name is unique per start: the previous one goes with its namespace, maybe not yet.
		if err := attachPodNetwork(cmd.Process.Pid, fmt.Sprintf("v%s%d", string(p.UID)[:8], netStarts%10), p.Status.PodIP); err != nil {
			proc.stop(time.Second)
			return nil, err
		}
		return proc, nil
	}
	return c, nil
}

// stopStarted stops the containers run started before one failed to start.
func (r *podRun) stopStarted() {
	for _, c := range r.ctrs {
		if c.proc != nil {
			c.proc.stop(5 * time.Second)
		}
	}
}

// supervise restarts the container whenever it exits, with the kubelet's doubling back-off (capped at 10 s here),
// until the pod is stopped.
func (r *podRun) supervise(c *containerRun) {
	defer close(c.exited)
	backoff := time.Second
	for {
		r.mu.Lock()
		proc := c.proc
		r.mu.Unlock()
		<-proc.done
		if r.isStopping() {
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 10*time.Second)
		r.mu.Lock()
		if r.stopping {
			r.mu.Unlock()
			return
		}
		p, err := c.start()
		if err != nil {
			r.stopping = true
			r.mu.Unlock()
			return
		}
		c.proc = p
		c.starts++
		r.mu.Unlock()
	}
}

func (r *podRun) isStopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopping
}

// kill stops the pod's containers, together: SIGTERM, SIGKILL after grace.
func (r *podRun) kill(grace time.Duration) {
	r.mu.Lock()
	r.stopping = true
	var procs []*process
	for _, c := range r.ctrs {
		procs = append(procs, c.proc)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, proc := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); proc.stop(grace) }()
	}
	wg.Wait()
	for _, c := range r.ctrs {
		<-c.exited
	}
}

// shutdown stops the loop and every container (the test's end).
func (k *kubelet) shutdown() {
	close(k.stop)
	<-k.done
	k.mu.Lock()
	runs := make([]*podRun, 0, len(k.pods))
	for _, r := range k.pods {
		runs = append(runs, r)
	}
	k.pods = map[types.UID]*podRun{}
	k.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() { defer wg.Done(); r.kill(5 * time.Second) }()
	}
	wg.Wait()
}

// running returns the run of the pod with this UID, if its container runs.
func (k *kubelet) running(uid types.UID) *podRun {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pods[uid]
}

// failures is what the kubelet could not run so far.
func (k *kubelet) failures() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return errors.Join(k.errs...)
}

// publishLog tells kwok, which serves the node's kubelet API, where each container's output is: a kwok Logs object
// named after the pod (owned by it, so it goes with it). `kubectl logs` (with -c for another container than the
// first) then reads that file.
func (k *kubelet) publishLog(p *corev1.Pod, ctrs []*containerRun) error {
	var logs []any
	for _, c := range ctrs {
		logs = append(logs, map[string]any{"containers": []string{c.name}, "logsFile": c.log, "follow": true})
	}
	obj := map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
		"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace,
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "Pod", "name": p.Name, "uid": p.UID}}},
		"spec": map[string]any{"logs": logs},
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	path := fmt.Sprintf("/apis/kwok.x-k8s.io/v1alpha1/namespaces/%s/logs/%s?fieldManager=e2e-kubelet&force=true", p.Namespace, p.Name)
	return k.c.call("PATCH", path, "application/apply-patch+yaml", bytes.NewReader(body), nil)
}

// containerArgv applies Kubernetes' rules: command replaces the image's ENTRYPOINT (and drops its CMD), args
// replace CMD.
func containerArgv(c corev1.Container, img *image) []string {
	entry, args := img.entrypoint, img.cmd
	if len(c.Command) > 0 {
		entry, args = c.Command, nil
	}
	if len(c.Args) > 0 {
		args = c.Args
	}
	return append(append([]string{}, entry...), args...)
}

// runAs resolves the container's uid and gid: the container's securityContext, then the pod's, then the image's
// USER; runAsNonRoot refuses uid 0 as the kubelet does.
func runAs(p *corev1.Pod, c corev1.Container, img *image) (uint32, uint32, error) {
	uid, gid := int64(0), int64(0)
	if u, g, ok := strings.Cut(img.user, ":"); img.user != "" {
		n, err := strconv.ParseInt(u, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("image USER %q is not numeric", img.user)
		}
		uid, gid = n, n
		if ok {
			if gid, err = strconv.ParseInt(g, 10, 64); err != nil {
				return 0, 0, fmt.Errorf("image USER %q: group is not numeric", img.user)
			}
		}
	}
	nonRoot := false
	for _, sc := range []*corev1.SecurityContext{podLevel(p.Spec.SecurityContext), c.SecurityContext} {
		if sc == nil {
			continue
		}
		if sc.RunAsUser != nil {
			uid = *sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = *sc.RunAsGroup
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = *sc.RunAsNonRoot
		}
	}
	if nonRoot && uid == 0 {
		return 0, 0, errors.New("runAsNonRoot and the container would run as uid 0 (CreateContainerConfigError)")
	}
	return uint32(uid), uint32(gid), nil
}

func podLevel(s *corev1.PodSecurityContext) *corev1.SecurityContext {
	if s == nil {
		return nil
	}
	return &corev1.SecurityContext{RunAsUser: s.RunAsUser, RunAsGroup: s.RunAsGroup, RunAsNonRoot: s.RunAsNonRoot}
}

// containerEnv is the image's env, the `kubernetes` Service's env a kubelet injects, HOSTNAME, then the
// container's env (a later duplicate wins, as in a kubelet).
func (k *kubelet) containerEnv(p *corev1.Pod, c corev1.Container, img *image) ([]string, error) {
	if len(c.EnvFrom) > 0 {
		return nil, errors.New("envFrom is not supported by this kubelet")
	}
	var svc corev1.Service
	if err := k.c.getJSON("/api/v1/namespaces/default/services/kubernetes", &svc); err != nil {
		return nil, err
	}
	if len(svc.Spec.Ports) != 1 {
		return nil, fmt.Errorf("service kubernetes has %d ports", len(svc.Spec.Ports))
	}
	port := strconv.Itoa(int(svc.Spec.Ports[0].Port))
	env := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/"}, img.env...)
	env = append(env, "KUBERNETES_SERVICE_HOST="+svc.Spec.ClusterIP, "KUBERNETES_SERVICE_PORT="+port,
		"KUBERNETES_SERVICE_PORT_HTTPS="+port, "HOSTNAME="+p.Name)
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			if e.ValueFrom.FieldRef == nil {
				return nil, fmt.Errorf("env %s: only fieldRef is supported in valueFrom", e.Name)
			}
			var err error
			if v, err = fieldRef(p, e.ValueFrom.FieldRef.FieldPath); err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return lastWins(env), nil
}

// lastWins drops every earlier entry of a repeated variable, as a kubelet does (a process's getenv would
// otherwise see the first).
func lastWins(env []string) []string {
	last := map[string]int{}
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	var out []string
	for i, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); last[k] == i {
			out = append(out, kv)
		}
	}
	return out
}

func fieldRef(p *corev1.Pod, field string) (string, error) {
	switch field {
	case "metadata.name":
		return p.Name, nil
	case "metadata.namespace":
		return p.Namespace, nil
	case "metadata.uid":
		return string(p.UID), nil
	case "spec.nodeName":
		return p.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return p.Spec.ServiceAccountName, nil
	case "status.podIP":
		return p.Status.PodIP, nil
	}
	return "", fmt.Errorf("fieldRef %s is not supported", field)
}

// mountVolumes writes every volume the container mounts at its mountPath under root.
func (k *kubelet) mountVolumes(p *corev1.Pod, c corev1.Container, root string) error {
	vols := map[string]corev1.Volume{}
	for _, v := range p.Spec.Volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		if m.SubPath != "" || m.SubPathExpr != "" {
			return fmt.Errorf("volumeMount %s: subPath is not supported", m.Name)
		}
		v, ok := vols[m.Name]
		if !ok {
			return fmt.Errorf("volumeMount %s: no such volume", m.Name)
		}
		dir := filepath.Join(root, m.MountPath)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		files, err := k.volumeFiles(p, v)
		if err != nil {
			return fmt.Errorf("volume %s: %w", m.Name, err)
		}
		if v.EmptyDir != nil {
			if err := os.Chmod(dir, 0o1777); err != nil {
				return err
			}
		}
		for name, content := range files {
			f := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(f, content, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// volumeFiles is a volume's content: relative path -> bytes.
func (k *kubelet) volumeFiles(p *corev1.Pod, v corev1.Volume) (map[string][]byte, error) {
	switch {
	case v.EmptyDir != nil:
		return nil, nil
	case v.ConfigMap != nil:
		return k.configMapFiles(p.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional)
	case v.Projected != nil:
		out := map[string][]byte{}
		for _, s := range v.Projected.Sources {
			var part map[string][]byte
			var err error
			switch {
			case s.ServiceAccountToken != nil:
				var tok string
				if tok, err = k.boundToken(p, s.ServiceAccountToken); err == nil {
					part = map[string][]byte{s.ServiceAccountToken.Path: []byte(tok)}
				}
			case s.ConfigMap != nil:
				part, err = k.configMapFiles(p.Namespace, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional)
			case s.DownwardAPI != nil:
				part = map[string][]byte{}
				for _, item := range s.DownwardAPI.Items {
					if item.FieldRef == nil {
						return nil, fmt.Errorf("downwardAPI %s: only fieldRef is supported", item.Path)
					}
					val, ferr := fieldRef(p, item.FieldRef.FieldPath)
					if ferr != nil {
						return nil, ferr
					}
					part[item.Path] = []byte(val)
				}
			default:
				err = errors.New("projected source: only serviceAccountToken, configMap and downwardAPI are supported")
			}
			if err != nil {
				return nil, err
			}
			for name, b := range part {
				out[name] = b
			}
		}
		return out, nil
	}
	return nil, errors.New("only emptyDir, configMap and projected volumes are supported")
}

func (k *kubelet) configMapFiles(ns, name string, items []corev1.KeyToPath, optional *bool) (map[string][]byte, error) {
	var cm corev1.ConfigMap
	if err := k.c.getJSON(fmt.Sprintf("/api/v1/namespaces/%s/configmaps/%s", ns, name), &cm); err != nil {
		if optional != nil && *optional {
			return nil, nil
		}
		return nil, err
	}
	out := map[string][]byte{}
	if len(items) == 0 {
		for key, v := range cm.Data {
			out[key] = []byte(v)
		}
		return out, nil
	}
	for _, it := range items {
		v, ok := cm.Data[it.Key]
		if !ok {
			return nil, fmt.Errorf("ConfigMap %s has no key %s", name, it.Key)
		}
		out[path.Clean(it.Path)] = []byte(v)
	}
	return out, nil
}

// boundToken asks the TokenRequest API for a token of the pod's service account bound to the pod, as a kubelet
// does for a projected serviceAccountToken source: it stops working when the pod is deleted.
func (k *kubelet) boundToken(p *corev1.Pod, s *corev1.ServiceAccountTokenProjection) (string, error) {
	exp := int64(3600)
	if s.ExpirationSeconds != nil {
		exp = *s.ExpirationSeconds
	}
	spec := map[string]any{"expirationSeconds": exp,
		"boundObjectRef": map[string]any{"kind": "Pod", "apiVersion": "v1", "name": p.Name, "uid": p.UID}}
	if s.Audience != "" {
		spec["audiences"] = []string{s.Audience}
	}
	body, err := json.Marshal(map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
	if err != nil {
		return "", err
	}
	var out struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	sa := orDefault(p.Spec.ServiceAccountName, "default")
	if err := k.c.postJSON(fmt.Sprintf("/api/v1/namespaces/%s/serviceaccounts/%s/token", p.Namespace, sa), bytes.NewReader(body), &out); err != nil {
		return "", err
	}
	if out.Status.Token == "" {
		return "", errors.New("TokenRequest returned no token")
	}
	return out.Status.Token, nil
}
