package decide

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/configmapfake"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/state/store"
)

// deadlines records the deadline of every API call of a tick.
type deadlines struct {
	mu    sync.Mutex
	calls map[string][]time.Time // call -> deadlines (zero: none)
}

func (d *deadlines) note(call string, ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dl, _ := ctx.Deadline()
	d.calls[call] = append(d.calls[call], dl)
}

type timedConfigMaps struct {
	*configmapfake.ConfigMaps
	d *deadlines
}

func (c timedConfigMaps) GetConfigMap(ctx context.Context, ns, name string) (*kube.ConfigMap, error) {
	c.d.note("get", ctx)
	return c.ConfigMaps.GetConfigMap(ctx, ns, name)
}

func (c timedConfigMaps) CreateConfigMap(ctx context.Context, cm *kube.ConfigMap) (*kube.ConfigMap, error) {
	c.d.note("put", ctx)
	return c.ConfigMaps.CreateConfigMap(ctx, cm)
}

func (c timedConfigMaps) UpdateConfigMap(ctx context.Context, cm *kube.ConfigMap) (*kube.ConfigMap, error) {
	c.d.note("put", ctx)
	return c.ConfigMaps.UpdateConfigMap(ctx, cm)
}

type timedPods struct {
	*fakeCluster
	d *deadlines
}

func (p timedPods) PatchPodAnnotations(ctx context.Context, ns, pod string, ann map[string]*string) error {
	p.d.note("patch", ctx)
	return p.fakeCluster.PatchPodAnnotations(ctx, ns, pod, ann)
}

func (p timedPods) Record(ctx context.Context, obj kube.ObjectRef, ev kube.Event, now time.Time, mem *kube.EventMemory) (kube.RecordResult, error) {
	p.d.note("event", ctx)
	return p.fakeCluster.Record(ctx, obj, ev, now, mem)
}

// N8 (issue 15): with the ConfigMap backend the GET (5 s), the effects
// (4 s) and the PUT (5 s) each had a deadline of their own, 13.8 s in all
// against CPA's evaluate timeout of 10 s. Every call of a tick now runs
// under one deadline below CPA's, the effects leave the PUT its share.
func TestEveryCallOfATickSharesOneDeadlineBelowCPAs(t *testing.T) {
	const cpaEvaluateTimeout = 10 * time.Second // config/config.yaml
	if Timeout >= cpaEvaluateTimeout || TickTimeout > Timeout {
		t.Fatalf("Timeout %v, TickTimeout %v: want TickTimeout <= Timeout < CPA's %v", Timeout, TickTimeout, cpaEvaluateTimeout)
	}
	d := &deadlines{calls: map[string][]time.Time{}}
	cms := timedConfigMaps{&configmapfake.ConfigMaps{}, d}
	st := store.ConfigMap{API: cms, Namespace: "inference", Name: "inferscale-state"}
	f := timedPods{&fakeCluster{patches: map[string]*string{}}, d}
	api := &cluster{pods: f, events: f, log: quietLog()}
	dir := t.TempDir()
	for i := 0; i < 45; i++ {
		start := time.Now()
		d.calls = map[string][]time.Time{}
		if err := tickWith(t, dir, i, nil, api, st); err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
		end := start.Add(TickTimeout)
		for call, ds := range d.calls {
			for _, dl := range ds {
				if dl.IsZero() || dl.After(end.Add(time.Second)) {
					t.Fatalf("tick %d: %s with deadline %v, want one within TickTimeout %v of the tick's start", i, call, dl.Sub(start), TickTimeout)
				}
			}
		}
		for _, dl := range append(d.calls["patch"], d.calls["event"]...) {
			if put := d.calls["put"]; len(put) == 1 && dl.After(put[0].Add(-saveReserve)) {
				t.Fatalf("tick %d: an effect's deadline leaves the state's write %v, want %v", i, put[0].Sub(dl), saveReserve)
			}
		}
		if len(d.calls["get"]) != 1 || len(d.calls["put"]) != 1 {
			t.Fatalf("tick %d: calls %v", i, d.calls)
		}
	}
}
