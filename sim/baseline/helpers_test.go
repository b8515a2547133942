package baseline

import (
	"fmt"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/scaler"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// podSpec describes a test pod; nil readings are absent.
type podSpec struct {
	phase         scaler.Phase
	noMetrics     bool
	waiting, run  *float64
	kv, util      *float64
	ttft, e2e     *signal.Histogram
	createdBefore time.Duration // how long before the observation the pod was created (default 1 h)
}

func f(v float64) *float64 { return &v }

func ready(waiting float64) podSpec { return podSpec{phase: scaler.Ready, waiting: f(waiting)} }
func readyKV(kv float64) podSpec    { return podSpec{phase: scaler.Ready, kv: f(kv), waiting: f(0)} }
func readyUtil(u float64) podSpec   { return podSpec{phase: scaler.Ready, util: f(u), waiting: f(0)} }
func pending() podSpec              { return podSpec{phase: scaler.Pending, noMetrics: true} }
func starting() podSpec             { return podSpec{phase: scaler.Starting, noMetrics: true} }
func missingPod() podSpec           { return podSpec{phase: scaler.Ready, noMetrics: true} }

func obsOf(now time.Time, spec, minR, maxR int, pods ...podSpec) scaler.Observation {
	o := scaler.Observation{Now: now, SpecReplicas: spec, MinReplicas: minR, MaxReplicas: maxR}
	for i, p := range pods {
		age := p.createdBefore
		if age == 0 {
			age = time.Hour
		}
		pv := scaler.PodView{Name: fmt.Sprintf("pod-%02d", i), Phase: p.phase, CreatedAt: now.Add(-age)}
		if p.phase == scaler.Ready || p.phase == scaler.Draining {
			pv.ReadyAt = pv.CreatedAt.Add(time.Minute)
		}
		if !p.noMetrics {
			m := &signal.Pod{Name: pv.Name, ScrapeTime: now, Waiting: p.waiting, Running: p.run, KVCacheUsage: p.kv, TTFT: p.ttft, E2E: p.e2e}
			if p.util != nil {
				m.GPU = &signal.GPU{Utilization: p.util}
			}
			pv.Metrics = m
		}
		o.Pods = append(o.Pods, pv)
	}
	return o
}

// hist builds a cumulative histogram with bounds 0.1, 0.5, 1, 2, 5 s.
func hist(c01, c05, c1, c2, c5, total float64) *signal.Histogram {
	return &signal.Histogram{Buckets: []signal.Bucket{
		{UpperBound: 0.1, Count: c01}, {UpperBound: 0.5, Count: c05}, {UpperBound: 1, Count: c1},
		{UpperBound: 2, Count: c2}, {UpperBound: 5, Count: c5},
	}, Count: total}
}
