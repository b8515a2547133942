//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// checkLifecycle refuses what this kubelet would not honour for a pod whose lifecycle it owns: a probe other than
// an httpGet readinessProbe, a liveness or startup probe, a preStop other than sleep, a postStart.
func checkLifecycle(c corev1.Container) error {
	if c.LivenessProbe != nil || c.StartupProbe != nil {
		return errors.New("liveness and startup probes are not supported by this kubelet")
	}
	if p := c.ReadinessProbe; p != nil && p.HTTPGet == nil {
		return errors.New("only an httpGet readinessProbe is supported by this kubelet")
	}
	if l := c.Lifecycle; l != nil && (l.PostStart != nil || (l.PreStop != nil && l.PreStop.Sleep == nil)) {
		return errors.New("only a preStop sleep is supported by this kubelet (the image has no shell or sleep binary)")
	}
	return nil
}

// probeReadiness runs the container's readinessProbe (httpGet on the pod IP) as a kubelet does, from
// initialDelaySeconds on, every periodSeconds, and sets the pod's Ready condition on every change: True after
// successThreshold successes, False after failureThreshold failures. Without a probe the pod is Ready once its
// container runs. It stops when the pod terminates.
func (k *kubelet) probeReadiness(r *podRun, c corev1.Container) {
	p := c.ReadinessProbe
	if p == nil {
		k.setReady(r, true)
		return
	}
	url, err := probeURL(&r.pod, c, p.HTTPGet)
	if err != nil {
		k.c.t.Logf("kubelet: pod %s: %v", r.pod.Name, err)
		return
	}
	period := time.Duration(max(p.PeriodSeconds, 1)) * time.Second
	timeout := time.Duration(max(p.TimeoutSeconds, 1)) * time.Second
	success, failure := int(max(p.SuccessThreshold, 1)), int(max(p.FailureThreshold, 1))
	client := &http.Client{Timeout: timeout}
	select {
	case <-r.probeStop:
		return
	case <-time.After(time.Duration(p.InitialDelaySeconds) * time.Second):
	}
	ready, oks, fails := false, 0, 0
	for {
		if err := httpGetOK(client, url); err == nil {
			oks, fails = oks+1, 0
		} else {
			oks, fails = 0, fails+1
		}
		switch {
		case !ready && oks >= success:
			ready = true
			k.setReady(r, true)
		case ready && fails >= failure:
			ready = false
			k.setReady(r, false)
		}
		select {
		case <-r.probeStop:
			return
		case <-time.After(period):
		}
	}
}

func probeURL(p *corev1.Pod, c corev1.Container, g *corev1.HTTPGetAction) (string, error) {
	port := g.Port.IntValue()
	if g.Port.StrVal != "" {
		for _, cp := range c.Ports {
			if cp.Name == g.Port.StrVal {
				port = int(cp.ContainerPort)
			}
		}
	}
	if port == 0 {
		return "", fmt.Errorf("readinessProbe port %s: no such container port", g.Port.String())
	}
	if g.Scheme != "" && g.Scheme != corev1.URISchemeHTTP {
		return "", fmt.Errorf("readinessProbe scheme %s is not supported", g.Scheme)
	}
	return "http://" + net.JoinHostPort(p.Status.PodIP, strconv.Itoa(port)) + "/" + strings.TrimPrefix(g.Path, "/"), nil
}

// setReady patches the pod's Ready and ContainersReady conditions and its container's ready flag, as a kubelet's
// status manager does.
func (k *kubelet) setReady(r *podRun, ready bool) {
	status, reason := corev1.ConditionFalse, "ContainersNotReady"
	if ready {
		status, reason = corev1.ConditionTrue, ""
	}
	now := time.Now().UTC().Format(time.RFC3339)
	var statuses []map[string]any
	for _, c := range r.pod.Spec.Containers {
		statuses = append(statuses, map[string]any{"name": c.Name, "image": c.Image, "ready": ready, "started": true,
			"restartCount": 0, "state": map[string]any{"running": map[string]any{"startedAt": r.pod.Status.StartTime}}})
	}
	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "lastTransitionTime": now}
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{
		"conditions": []any{cond("Ready"), cond("ContainersReady")}, "containerStatuses": statuses}})
	if err != nil {
		k.c.t.Logf("kubelet: %v", err)
		return
	}
	path := "/api/v1/namespaces/" + r.pod.Namespace + "/pods/" + r.pod.Name + "/status"
	if err := k.c.call(http.MethodPatch, path, "application/strategic-merge-patch+json", strings.NewReader(string(body)), nil); err != nil && !isNotFound(err) {
		k.c.t.Logf("kubelet: pod %s ready=%v: %v", r.pod.Name, ready, err)
	}
}

// terminate stops a pod whose lifecycle the kubelet owns, as a kubelet does once the pod is deleted: the preStop
// sleep, then SIGTERM, SIGKILL at the end of the grace period (counted from the start of preStop), and then the
// pod object is removed (a delete with grace 0, preconditioned on its UID). The readiness prober stops first.
func (k *kubelet) terminate(r *podRun) {
	close(r.probeStop)
	grace := 30 * time.Second
	if g := r.pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	began := time.Now()
	if l := r.pod.Spec.Containers[0].Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
		time.Sleep(min(time.Duration(l.PreStop.Sleep.Seconds)*time.Second, grace))
	}
	r.kill(max(grace-time.Since(began), time.Second))
	k.c.t.Logf("kubelet: pod %s/%s stopped %s after its deletion", r.pod.Namespace, r.pod.Name, time.Since(began).Round(100*time.Millisecond))
	k.removePod(&r.pod)
}

// removeUnstarted removes a deleted lifecycle pod whose container the kubelet never ran (deleted before it was
// Running, or while its start failed): nothing to stop, and kwok leaves these pods to the kubelet.
func (k *kubelet) removeUnstarted(p *corev1.Pod) {
	k.mu.Lock()
	_, running := k.pods[p.UID]
	busy := running || k.terminating[p.UID]
	k.mu.Unlock()
	if !busy {
		k.removePod(p)
	}
}

// removePod deletes the pod object with grace 0, preconditioned on its UID (what a kubelet does once the pod's
// containers have stopped).
func (k *kubelet) removePod(p *corev1.Pod) {
	body := fmt.Sprintf(`{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"uid":%q}}`, p.UID)
	path := "/api/v1/namespaces/" + p.Namespace + "/pods/" + p.Name
	if err := k.c.call(http.MethodDelete, path, "application/json", strings.NewReader(body), nil); err != nil && !isNotFound(err) {
		k.c.t.Logf("kubelet: removing pod %s: %v", p.Name, err)
	}
}
