package decide

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// slowPods are n ready, lightly loaded pods scraped at at whose TTFT
// histogram has counted slow requests (4-5 s) on top of 1000 old fast ones.
func slowPods(n int, at time.Time, slow float64) []Entry {
	readyAt := t0.Add(-time.Hour)
	var out []Entry
	for i := 0; i < n; i++ {
		fast := 1000.0
		h := &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.5, Count: fast}, {UpperBound: 1, Count: fast},
			{UpperBound: 2.5, Count: fast}, {UpperBound: 5, Count: fast + slow}, {UpperBound: 10, Count: fast + slow}},
			Count: fast + slow, Sum: fast*0.2 + slow*4.9}
		p := signal.Pod{Name: fmt.Sprintf("vllm-%d", i), Phase: "Running", Ready: true, ReadyAt: &readyAt, ScrapeTime: at,
			Waiting: signal.F(0), Running: signal.F(10), KVCacheUsage: signal.F(0.1), TTFT: h}
		out = append(out, Entry{Resource: p.Name, Report: &signal.Report{Version: signal.Version, ScrapeTime: at, Pods: []signal.Pod{p}}})
	}
	return out
}

// Defect 2: a state written under a clock that ran an hour ahead holds
// every pod's scrapeTime in the future. Every new scrape then looked
// older, no delta was ever formed, the missing latency read as low, and a
// 4.9 s TTFT p95 against a 2 s SLO scaled down (5 -> 4). A scrape going
// backwards resets that pod's baseline, and an unread latency is never
// low: the first tick holds, the next one measures the breach and scales
// up as a fresh state does (5 -> 7).
func TestScrapeTimeAheadOfTheClockResetsTheBaseline(t *testing.T) {
	cfg := knobs.Defaults()
	cfg.LatencyNeedsLoad = false // latency is this service's load signal
	cfg.DownStabilization, cfg.ScaleDownCooldown = 0, 0
	st := state.New()
	ahead := t0.Add(time.Hour)
	Step(cfg, st, 5, slowPods(5, ahead, 0), ahead)

	d := Step(cfg, st, 5, slowPods(5, t0, 100), t0)
	if d.Target != 5 || len(d.Fleet.LatencyUnread) != 5 {
		t.Fatalf("first tick after the clock stepped back: target %d, unread %v, want 5 held; reasons %q", d.Target, d.Fleet.LatencyUnread, d.Reasons)
	}
	if lat := ruleNamed(d, policy.RuleLatency); lat.Low {
		t.Fatalf("an unread latency counted as low: %+v", lat)
	}
	d = Step(cfg, st, 5, slowPods(5, t0.Add(15*time.Second), 200), t0.Add(15*time.Second))
	if d.Target != 7 || d.Fleet.TTFTP95 == nil || *d.Fleet.TTFTP95 < 4 {
		t.Fatalf("next tick: target %d, TTFT p95 %v, want the breach measured and 7; reasons %q", d.Target, d.Fleet.TTFTP95, d.Reasons)
	}
}

// Defect 10: three of four pods time out (an overloaded vLLM answers
// /metrics slowly) and the fourth has 10 waiting. That read as 2.5 per
// pod and nothing scaled; the load per pod is over the pods that
// reported, and the failed ones do not lower it.
func TestFailedScrapesDoNotDiluteTheLoad(t *testing.T) {
	cfg := knobs.Defaults()
	st := state.New()
	pods := func(at time.Time, failed int) []Entry {
		readyAt := t0.Add(-time.Hour)
		var out []Entry
		for i := 0; i < 4; i++ {
			p := signal.Pod{Name: fmt.Sprintf("vllm-%d", i), Phase: "Running", Ready: true, ReadyAt: &readyAt, ScrapeTime: at,
				Waiting: signal.F(1), Running: signal.F(20)}
			if i < failed {
				p.Waiting, p.Running, p.Error = nil, nil, "scraping http://10.0.0.1:8000/metrics: context deadline exceeded"
			} else if failed > 0 {
				p.Waiting = signal.F(10)
			}
			out = append(out, Entry{Resource: p.Name, Report: &signal.Report{Version: signal.Version, ScrapeTime: at, Pods: []signal.Pod{p}}})
		}
		return out
	}
	Step(cfg, st, 4, pods(t0, 0), t0)
	d := Step(cfg, st, 4, pods(t0.Add(15*time.Second), 3), t0.Add(15*time.Second))
	q := ruleNamed(d, policy.RuleQueue)
	if q.Value == nil || *q.Value != 10 || !q.Over || d.Target <= 4 {
		t.Fatalf("queue %+v, target %d: want 10 per reporting pod and a scale-up; reasons %q", q, d.Target, d.Reasons)
	}
}

// Defect 6: spec.replicas 0 with minReplicas above 0 is CPA's "autoscaling
// disabled". It recorded a scale-down, then on re-enable a "scale-up"
// whose cooldown held the next real one. Now evaluate holds at 0 and
// leaves the state as it was; with minReplicas 0, 0 is a real fleet that
// scales from zero.
func TestDisabledAutoscalingHoldsAndLeavesTheStateUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	env := map[string]string{"stateFile": path, "INFERSCALE_NOW": "2026-11-29T12:00:05Z", "configPath": filepath.Join(dir, "none.yaml")}
	run := func(replicas string) cpa.EvaluateOutput {
		t.Helper()
		var out bytes.Buffer
		if err := Run(context.Background(), Process{Stdin: bytes.NewReader(input(t, replicas, goodValue)), Stdout: &out,
			Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Log: quietLog()}); err != nil {
			t.Fatal(err)
		}
		var o cpa.EvaluateOutput
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	run("3")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	o := run("0")
	if o.TargetReplicas != 0 || len(o.Reasons) != 1 || !strings.Contains(o.Reasons[0], "autoscaling disabled") {
		t.Fatalf("disabled: %+v", o)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatal("a disabled tick changed the state")
	}
	env["minReplicas"] = "0"
	if o := run("0"); o.TargetReplicas != 1 {
		t.Fatalf("minReplicas 0, one pod's requests waiting: target %d, want a scale from zero", o.TargetReplicas)
	}
	if after, _ := os.ReadFile(path); bytes.Equal(after, before) {
		t.Fatal("a tick at a real fleet of 0 was not recorded")
	}
}

func ruleNamed(d policy.Decision, name string) policy.Rule {
	for _, r := range d.Rules {
		if r.Name == name {
			return r
		}
	}
	return policy.Rule{}
}
