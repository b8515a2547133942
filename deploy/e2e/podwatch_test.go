//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// deletionCostAnnotation is the annotation the ReplicaSet controller orders its deletions by (lower first).
const deletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// podWatch follows the target's pods through the API server's watch (every ADDED, MODIFIED and DELETED event),
// so that a test sees an annotation even when the pod carrying it is deleted a moment later.
type podWatch struct {
	mu     sync.Mutex
	pods   map[string]*podRecord
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// podRecord is what the watch saw of one pod.
type podRecord struct {
	name    string
	created time.Time
	ip      string
	// costs is every value of the deletion-cost annotation in the order seen ("" when absent), one entry per change.
	costs []string
	// costAtDeletion is the annotation's value on the first event with a deletionTimestamp (or the DELETED one).
	costAtDeletion string
	deleted        bool
	// deletedAt is when the watch first saw the deletion (a deletionTimestamp or the DELETED event).
	deletedAt time.Time
}

// marked reports whether the pod ever carried the deletion cost v.
func (r *podRecord) marked(v string) bool {
	for _, c := range r.costs {
		if c == v {
			return true
		}
	}
	return false
}

// watchTargetPods starts a watch of the target's pods; stop it with close.
func (d *deployment) watchTargetPods(t *testing.T) *podWatch {
	t.Helper()
	client, err := d.c.adminClient()
	if err != nil {
		t.Fatal(err)
	}
	client.Timeout = 0 // a watch is a long-lived stream
	var list corev1.PodList
	sel := url.QueryEscape("app.kubernetes.io/name=" + d.target)
	if err := d.c.getJSON("/api/v1/namespaces/"+namespace+"/pods?labelSelector="+sel, &list); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &podWatch{pods: map[string]*podRecord{}, cancel: cancel, done: make(chan struct{})}
	for i := range list.Items {
		w.observe("ADDED", &list.Items[i])
	}
	go func() {
		defer close(w.done)
		rv := list.ResourceVersion
		for ctx.Err() == nil {
			path := "/api/v1/namespaces/" + namespace + "/pods?watch=true&labelSelector=" + sel + "&resourceVersion=" + rv
			next, err := w.stream(ctx, client, d.c.apiURL(path))
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				return
			}
			if next != "" {
				rv = next
			}
		}
	}()
	return w
}

// stream reads one watch response until it ends and returns the last resourceVersion seen.
func (w *podWatch) stream(ctx context.Context, client *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("watching pods: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("watching pods: %s", resp.Status)
	}
	rv := ""
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Type   string     `json:"type"`
			Object corev1.Pod `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return rv, fmt.Errorf("watch event: %w", err)
		}
		if ev.Type == "ERROR" {
			return rv, fmt.Errorf("watch error event: %s", sc.Text())
		}
		rv = ev.Object.ResourceVersion
		w.observe(ev.Type, &ev.Object)
	}
	return rv, nil
}

func (w *podWatch) observe(typ string, p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.pods[p.Name]
	if r == nil {
		r = &podRecord{name: p.Name, created: p.CreationTimestamp.Time}
		w.pods[p.Name] = r
	}
	if p.Status.PodIP != "" {
		r.ip = p.Status.PodIP
	}
	cost := p.Annotations[deletionCostAnnotation]
	if n := len(r.costs); n == 0 || r.costs[n-1] != cost {
		r.costs = append(r.costs, cost)
	}
	if !r.deleted && (p.DeletionTimestamp != nil || typ == "DELETED") {
		r.deleted, r.costAtDeletion, r.deletedAt = true, cost, time.Now()
	}
}

// snapshot returns a copy of every pod's record, oldest pod first.
func (w *podWatch) snapshot() []podRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []podRecord
	for _, r := range w.pods {
		c := *r
		c.costs = append([]string(nil), r.costs...)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].created.Equal(out[j].created) {
			return out[i].created.Before(out[j].created)
		}
		return out[i].name < out[j].name
	})
	return out
}

// failed is the error that ended the watch, if any.
func (w *podWatch) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *podWatch) close() {
	w.cancel()
	<-w.done
}
