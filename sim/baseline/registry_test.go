package baseline

import (
	"strings"
	"testing"

	"github.com/inferscale/inferscale/sim/scaler"
)

func TestPresetsBuildAndRun(t *testing.T) {
	want := []string{"hpa-queue", "hpa-kv", "hpa-seed002", "hpa-external-value", "keda-queue", "keda-cron",
		"kpa", "aibrix-apa", "wva", "seed000", "seed004", "static"}
	ps := Presets()
	for _, name := range want {
		if _, ok := ps[name]; !ok {
			t.Errorf("preset %s missing", name)
		}
	}
	for _, name := range PresetNames() {
		a, err := ps[name](nil)
		if err != nil {
			t.Fatalf("%s with defaults: %v", name, err)
		}
		if a.Name() != name {
			t.Errorf("%s: Name() = %q", name, a.Name())
		}
		if a.Period() <= 0 {
			t.Errorf("%s: period %v", name, a.Period())
		}
		// a busy fleet then an idle one; every answer within [min, max]
		spec := 2
		for i := 0; i < 40; i++ {
			load, served := 40.0, float64(i)
			if i >= 20 {
				load, served = 0, 20
			}
			var pods []podSpec
			for range spec {
				pods = append(pods, podSpec{phase: scaler.Ready, waiting: f(load), run: f(load), kv: f(min(1, load/40)),
					util: f(min(1, load/40)), ttft: hist(0, 0, served, served, served, served),
					e2e: hist(0, 0, 0, 0, served, served)})
			}
			got, err := a.Recommend(obsOf(at(float64(i)*a.Period().Seconds()), spec, 1, 8, pods...))
			if err != nil {
				t.Fatalf("%s tick %d: %v", name, i, err)
			}
			if got < 1 || got > 8 {
				t.Fatalf("%s tick %d: %d outside [1, 8]", name, i, got)
			}
			spec = got
		}
	}
}

func TestPresetParams(t *testing.T) {
	ps := Presets()
	if _, err := ps["hpa-queue"](Params{"target": 5}); err != nil {
		t.Errorf("valid override: %v", err)
	}
	if _, err := ps["hpa-queue"](Params{"nonsense": 1}); err == nil || !strings.Contains(err.Error(), "unknown parameter") {
		t.Errorf("unknown parameter: err = %v", err)
	}
	if _, err := ps["kpa"](Params{"target_utilization": 3}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("out of range: err = %v", err)
	}
	if _, err := ps["seed004"](Params{"max_step": 2.5}); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Errorf("non-integer: err = %v", err)
	}
	if _, err := ps["keda-cron"](Params{"cron_start_minute": 540, "cron_end_minute": 540}); err == nil {
		t.Error("identical cron start and end: want an error")
	}
}

func TestTunablesDefaultsInRange(t *testing.T) {
	for _, name := range PresetNames() {
		ts, ok := Tunables(name)
		if !ok || len(ts) == 0 {
			t.Fatalf("%s: no tunables", name)
		}
		for i, tu := range ts {
			if tu.Default < tu.Min || tu.Default > tu.Max || tu.Doc == "" {
				t.Errorf("%s.%s: default %g outside [%g, %g] or undocumented", name, tu.Name, tu.Default, tu.Min, tu.Max)
			}
			if i > 0 && ts[i-1].Name >= tu.Name {
				t.Errorf("%s: tunables not sorted", name)
			}
		}
	}
	if _, ok := Tunables("nope"); ok {
		t.Error("unknown preset reported as known")
	}
}
