package baseline

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

func queueMetric(target float64) HPAMetric {
	return HPAMetric{Name: "waiting", Source: PodsAverageValue, Target: target, PodValue: fromMetrics(readWaiting)}
}

func utilMetric(target float64) HPAMetric {
	return HPAMetric{Name: "gpu", Source: ResourceUtilization, Target: target, PodValue: fromMetrics(readGPUUtil), Request: 1}
}

func TestPodMetricReplicas(t *testing.T) {
	tol := tolerances{0.1, 0.1}
	cases := []struct {
		name   string
		metric HPAMetric
		cur    int
		pods   []podSpec
		want   int
	}{
		// avg (3.2+3+3)/3 = 3.067, ratio 1.022 within ±0.1 → cur
		{"within tolerance", queueMetric(3), 3, []podSpec{ready(3.2), ready(3), ready(3)}, 3},
		// ratio 6/3 = 2 → ceil(2·3) = 6
		{"plain scale-up", queueMetric(3), 3, []podSpec{ready(6), ready(6), ready(6)}, 6},
		// ratio 1/3 → ceil(0.333·4) = ceil(1.33) = 2
		{"plain scale-down", queueMetric(3), 4, []podSpec{ready(1), ready(1), ready(1), ready(1)}, 2},
		// ratio 9/3 = 3 > 1 → missing := 0: (9+9+0+0)/4/3 = 1.5 → ceil(1.5·4) = 6
		{"missing count 0 on scale-up", queueMetric(3), 4, []podSpec{ready(9), ready(9), missingPod(), missingPod()}, 6},
		// ratio 0 < 1 → missing := target 3: (0+0+3+3)/4/3 = 0.5 → ceil(0.5·4) = 2
		{"missing count target on scale-down", queueMetric(3), 4, []podSpec{ready(0), ready(0), missingPod(), missingPod()}, 2},
		// ratio 0.8 → missing := 3: (2.4+2.4+3)/3/3 = 0.867 → ceil(2.6) = 3 = cur (not above cur) → 3
		{"missing fill keeps cur", queueMetric(3), 3, []podSpec{ready(2.4), ready(2.4), missingPod()}, 3},
		// ratio 2.7/3 = 0.9 → fill: (5.4+3)/3/3 = 0.933 within tolerance → cur
		{"within tolerance after fill", queueMetric(3), 3, []podSpec{ready(2.7), ready(2.7), missingPod()}, 3},
		// ratio 9/3 = 3, 1 pending → unready := 0: 18/3/3 = 2 → ceil(2·3) = 6
		{"unready count 0 on scale-up", queueMetric(3), 3, []podSpec{ready(9), ready(9), pending()}, 6},
		// ratio 4/3 = 1.33 > 1 with 3 pending → 4/4/3 = 0.33 < 1: direction flip → hold cur
		{"direction flip holds", queueMetric(3), 4, []podSpec{ready(4), pending(), pending(), pending()}, 4},
		// ratio 0.6/3 = 0.2 < 1: unready pods are dropped, not filled → ceil(0.2·2) = 1
		{"unready ignored on scale-down", queueMetric(3), 3, []podSpec{ready(0.6), ready(0.6), pending()}, 1},
		// Starting pod has no metric: missing (Pods metric) → fill 3: 3/3/3 = 0.33 → ceil(1) = 1
		// (as unready it would be dropped: ceil(0·2) = 0)
		{"starting pod is missing for Pods metrics", queueMetric(3), 3, []podSpec{ready(0), ready(0), starting()}, 1},
		// draining pod ignored: (3+3)/2/3 = 1 → cur
		{"draining ignored", queueMetric(3), 2, []podSpec{ready(3), ready(3), {phase: scaler.Draining, waiting: f(30)}}, 2},
		// Resource: floor(100·0.119) = 11 % / 10 % = 1.1 → within tolerance (untruncated 1.19 would give 3)
		{"resource integer-percent truncation", utilMetric(10), 2, []podSpec{readyUtil(0.119), readyUtil(0.119)}, 2},
		// Resource: 90 % / 50 % = 1.8 → ceil(1.8·2) = 4
		{"resource scale-up", utilMetric(50), 2, []podSpec{readyUtil(0.9), readyUtil(0.9)}, 4},
		// Resource: ratio 10/50 = 0.2, missing := max(100, 50) % = 1.0:
		// floor(100·1.2/3) = 40 % → 0.8 → ceil(2.4) = 3 = cur → 3 (filling at the target would give 2)
		{"resource missing filled at 100%", utilMetric(50), 3, []podSpec{readyUtil(0.1), readyUtil(0.1), {phase: scaler.Ready, waiting: f(0)}}, 3},
		// Resource: a pod Ready for 10 s (inside the 5 min initialisation period, sample not
		// yet one 30 s window past readiness) is unready: 90 %/50 % = 1.8 > 1 → unready := 0:
		// floor(180/3) = 60 % → 1.2 → ceil(3.6) = 4 (counting it: ceil(5.4) = 6)
		{"resource cpu-initialisation unready", utilMetric(50), 3, []podSpec{readyUtil(0.9), readyUtil(0.9),
			{phase: scaler.Ready, util: f(0.9), createdBefore: 70 * time.Second}}, 4},
		// Resource: a Starting pod has no sample: missing, filled at 100 % on scale-down:
		// floor(100·1.2/3) = 40 % → 0.8 → ceil(2.4) = 3 (dropped as unready it would give ceil(0.4) = 1)
		{"resource starting pod missing", utilMetric(50), 3, []podSpec{readyUtil(0.1), readyUtil(0.1), starting()}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := podMetricReplicas(obsOf(t0, c.cur, 1, 100, c.pods...), c.metric, tol)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %d replicas, want %d", got, c.want)
			}
		})
	}
}

func TestPodMetricReplicasNoMetrics(t *testing.T) {
	_, err := podMetricReplicas(obsOf(t0, 2, 1, 10, pending(), missingPod()), queueMetric(3), tolerances{0.1, 0.1})
	if err == nil {
		t.Fatal("no pod reports the metric: want an error")
	}
}

func TestExternalMetrics(t *testing.T) {
	sum := externalSum(readWaiting)
	newH := func(m HPAMetric, bySpec bool) *HPA {
		h, err := NewHPA(HPAConfig{Name: "x", Metrics: []HPAMetric{m}, Tolerance: 0.1, DownscaleStabilization: 300 * time.Second, ExternalValueBySpec: bySpec})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// 2 ready pods waiting 30 each + 2 starting: spec 4.
	o := obsOf(t0, 4, 1, 100, ready(30), ready(30), starting(), starting())
	value := HPAMetric{Name: "v", Source: ExternalValue, Target: 10, External: sum}
	// Value: ratio 60/10 = 6 × ready pods 2 = 12
	if got, err := newH(value, false).replicasForMetric(o, value); err != nil || got != 12 {
		t.Errorf("External Value = %d, %v; want 12 (ratio × ready pods)", got, err)
	}
	// llm-d doc's assumption: × spec.replicas 4 = 24
	if got, err := newH(value, true).replicasForMetric(o, value); err != nil || got != 24 {
		t.Errorf("External Value by spec = %d, %v; want 24", got, err)
	}
	// AverageValue: ceil(60/7) = 9, independent of readiness
	avg := HPAMetric{Name: "a", Source: ExternalAverageValue, Target: 7, External: sum}
	if got, err := newH(avg, false).replicasForMetric(o, avg); err != nil || got != 9 {
		t.Errorf("External AverageValue = %d, %v; want 9", got, err)
	}
	// AverageValue within tolerance: 4 pods, total 29 → 29/(7·4) = 1.036 → status replicas 4
	o2 := obsOf(t0, 4, 1, 100, ready(14.5), ready(14.5), starting(), starting())
	if got, _ := newH(avg, false).replicasForMetric(o2, avg); got != 4 {
		t.Errorf("External AverageValue within tolerance = %d, want 4", got)
	}
	// Value within tolerance: 10.5/10 = 1.05 → cur
	o3 := obsOf(t0, 4, 1, 100, ready(5.25), ready(5.25), starting(), starting())
	if got, _ := newH(value, false).replicasForMetric(o3, value); got != 4 {
		t.Errorf("External Value within tolerance = %d, want 4", got)
	}
}

func failing(scaler.Observation) (float64, error) { return 0, errors.New("metric unavailable") }

func TestMultipleMetricsAndInvalid(t *testing.T) {
	kv := HPAMetric{Name: "kv", Source: PodsAverageValue, Target: 0.5, PodValue: fromMetrics(readKV)}
	h, _ := NewHPA(HPAConfig{Name: "m", Metrics: []HPAMetric{queueMetric(3), kv}, Tolerance: 0.1, DownscaleStabilization: 0})
	// queue 3/3 = 1 → 3; kv 0.9/0.5 = 1.8 → ceil(5.4) = 6; max → 6
	pods := []podSpec{{phase: scaler.Ready, waiting: f(3), kv: f(0.9)}, {phase: scaler.Ready, waiting: f(3), kv: f(0.9)}, {phase: scaler.Ready, waiting: f(3), kv: f(0.9)}}
	if got, err := h.Recommend(obsOf(t0, 3, 1, 100, pods...)); err != nil || got != 6 {
		t.Errorf("max of metrics = %d, %v; want 6", got, err)
	}
	bad := HPAMetric{Name: "bad", Source: ExternalValue, Target: 1, External: failing}
	// one invalid metric and the valid one wants a scale-down (1 < 3): error, no scale-down
	h2, _ := NewHPA(HPAConfig{Name: "m", Metrics: []HPAMetric{queueMetric(3), bad}, Tolerance: 0.1})
	if _, err := h2.Recommend(obsOf(t0, 3, 1, 100, ready(0), ready(0), ready(0))); err == nil || !strings.Contains(err.Error(), "invalid metrics") {
		t.Errorf("partial data with a scale-down: err = %v, want invalid-metrics error", err)
	}
	// one invalid metric and the valid one wants a scale-up: allowed (ratio 2 → 6)
	h3, _ := NewHPA(HPAConfig{Name: "m", Metrics: []HPAMetric{queueMetric(3), bad}, Tolerance: 0.1})
	if got, err := h3.Recommend(obsOf(t0, 3, 1, 100, ready(6), ready(6), ready(6))); err != nil || got != 6 {
		t.Errorf("partial data with a scale-up = %d, %v; want 6", got, err)
	}
	// all invalid: error
	h4, _ := NewHPA(HPAConfig{Name: "m", Metrics: []HPAMetric{bad}, Tolerance: 0.1})
	if _, err := h4.Recommend(obsOf(t0, 3, 1, 100, ready(6))); err == nil {
		t.Error("all metrics invalid: want error")
	}
}

func TestHPABoundsAndDisabled(t *testing.T) {
	h, _ := NewHPA(HPAConfig{Name: "q", Metrics: []HPAMetric{queueMetric(3)}, Tolerance: 0.1})
	if got, _ := h.Recommend(obsOf(t0, 0, 1, 10)); got != 0 {
		t.Errorf("spec 0 with min 1: scaling disabled, got %d", got)
	}
	if got, _ := h.Recommend(obsOf(t0, 12, 1, 10, ready(100))); got != 10 {
		t.Errorf("spec above max: got %d, want max 10", got)
	}
	if got, _ := h.Recommend(obsOf(t0, 1, 2, 10, ready(0))); got != 2 {
		t.Errorf("spec below min: got %d, want min 2", got)
	}
}

func TestLegacyPath(t *testing.T) {
	h, _ := NewHPA(HPAConfig{Name: "q", Metrics: []HPAMetric{queueMetric(3)}, Tolerance: 0.1, DownscaleStabilization: 300 * time.Second})
	// cur 1, ratio 30/3 = 10 → 10, clamped to max(2·1, 4) = 4
	if got, _ := h.Recommend(obsOf(at(0), 1, 1, 100, ready(30))); got != 4 {
		t.Fatalf("legacy scale-up limit: got %d, want 4", got)
	}
	// cur 4, ratio (9·4)/4/3 = 3 → 12 > max(8, 4) = 8
	if got, _ := h.Recommend(obsOf(at(15), 4, 1, 100, ready(9), ready(9), ready(9), ready(9))); got != 8 {
		t.Fatalf("legacy scale-up limit: got %d, want 8", got)
	}
	// load gone: proposal ceil(0·8) = 0 → min 1, but the max over the last 300 s is 12
	idle := []podSpec{ready(0), ready(0), ready(0), ready(0), ready(0), ready(0), ready(0), ready(0)}
	if got, _ := h.Recommend(obsOf(at(30), 8, 1, 100, idle...)); got != 12 {
		t.Fatalf("downscale stabilisation: got %d, want 12 (max of window, within 2·8)", got)
	}
	// at t=315 the t=15 recommendation (12) has left the window (cutoff 15 is not after it... it is equal → kept)
	if got, _ := h.Recommend(obsOf(at(315), 8, 1, 100, idle...)); got != 12 {
		t.Fatalf("t=315: recommendation from t=15 is at the cutoff and still counts: got %d, want 12", got)
	}
	// at t=331 only recommendations from t ≥ 31 remain: the 0s → clamp to min 1
	if got, _ := h.Recommend(obsOf(at(331), 8, 1, 100, idle...)); got != 1 {
		t.Fatalf("after the window: got %d, want 1", got)
	}
}

func TestBehaviorDefaultRateLimit(t *testing.T) {
	h, _ := NewHPA(HPAConfig{Name: "q", Metrics: []HPAMetric{queueMetric(1)}, Tolerance: 0.1, Behavior: DefaultBehavior()})
	// cur 2, ratio 10 → 20; limits: Pods 2+4 = 6, Percent ceil(2·2) = 4; Max → 6
	if got, _ := h.Recommend(obsOf(at(0), 2, 1, 100, ready(10), ready(10))); got != 6 {
		t.Fatalf("got %d, want 6", got)
	}
	// 15 s later the +4 event is exactly at the period start and no longer counts:
	// cur 6 → limits 10 and 12 → 12
	six := []podSpec{ready(10), ready(10), ready(10), ready(10), ready(10), ready(10)}
	if got, _ := h.Recommend(obsOf(at(15), 6, 1, 100, six...)); got != 12 {
		t.Fatalf("got %d, want 12", got)
	}
	// 5 s after that the +6 event counts: start = 12 − 6 = 6 → limits 10, 12 → 12 (no growth)
	twelve := append(append([]podSpec{}, six...), six...)
	if got, _ := h.Recommend(obsOf(at(20), 12, 1, 100, twelve...)); got != 12 {
		t.Fatalf("got %d, want 12 (period budget spent)", got)
	}
}

func TestBehaviorSeed002(t *testing.T) {
	h, err := NewHPA(HPAConfig{Name: "s", Metrics: []HPAMetric{queueMetric(1)}, Tolerance: 0.1, Behavior: Seed002Behavior()})
	if err != nil {
		t.Fatal(err)
	}
	five := func(w float64) []podSpec {
		return []podSpec{ready(w), ready(w), ready(w), ready(w), ready(w)}
	}
	// t=-700: the HPA's first sync records the scale it found (5) and the
	// proposal 4; the 600 s down window holds at 5.
	if got, _ := h.Recommend(obsOf(at(-700), 5, 1, 100, five(0.8)...)); got != 5 {
		t.Fatalf("t=-700: got %d, want 5 (initial recommendation)", got)
	}
	// t=0: cur 5, avg 0.8 → ratio 0.8 → ceil(4) = 4; both t=-700 recs left the window.
	// Down limit: Pods 1/120 s from start 5 → 4; selectPolicy Min → max(props) = 4 → 4.
	if got, _ := h.Recommend(obsOf(at(0), 5, 1, 100, five(0.8)...)); got != 4 {
		t.Fatalf("t=0: got %d, want 4", got)
	}
	four := func(w float64) []podSpec { return five(w)[:4] }
	// t=15: cur 4, avg 2.5 → 10. Up window 30 s holds the t=0 rec (4): upRec = min(4, 10) = 4 → hold 4.
	if got, _ := h.Recommend(obsOf(at(15), 4, 1, 100, four(2.5)...)); got != 4 {
		t.Fatalf("t=15: scale-up stabilisation should hold at 4, got %d", got)
	}
	// t=30: t=0 rec is at the cutoff (excluded) → upRec = 10. Up limit over 60 s with netting:
	// start = 4 − 0 added + 1 deleted = 5 → Pods 5+4 = 9, Percent ceil(5·1.5) = 8; Max → 9.
	// (Without netting the down event: 4+4 = 8.)
	if got, _ := h.Recommend(obsOf(at(30), 4, 1, 100, four(2.5)...)); got != 9 {
		t.Fatalf("t=30: got %d, want 9 (events netted)", got)
	}
}

func TestBehaviorSeed002ScaleDownRate(t *testing.T) {
	h, _ := NewHPA(HPAConfig{Name: "s", Metrics: []HPAMetric{queueMetric(1)}, Tolerance: 0.1, Behavior: Seed002Behavior()})
	pods := func(n int) []podSpec {
		out := make([]podSpec, n)
		for i := range out {
			out[i] = ready(0.1)
		}
		return out
	}
	// the first sync, 700 s earlier, holds at the initial recommendation 10
	if got, _ := h.Recommend(obsOf(at(-700), 10, 1, 100, pods(10)...)); got != 10 {
		t.Fatalf("t=-700: got %d, want 10 (initial recommendation)", got)
	}
	// proposal ceil(0.1·10) = 1; down limit 10 − 1 = 9
	if got, _ := h.Recommend(obsOf(at(0), 10, 1, 100, pods(10)...)); got != 9 {
		t.Fatalf("t=0: got %d, want 9", got)
	}
	// t=60: the −1 event is within 120 s: start = 9 + 1 = 10 → 9 = cur → hold 9
	if got, _ := h.Recommend(obsOf(at(60), 9, 1, 100, pods(9)...)); got != 9 {
		t.Fatalf("t=60: got %d, want 9 (1 pod per 120 s)", got)
	}
	// t=120: the event is at the cutoff (excluded) → 8
	if got, _ := h.Recommend(obsOf(at(120), 9, 1, 100, pods(9)...)); got != 8 {
		t.Fatalf("t=120: got %d, want 8", got)
	}
}

func TestBehaviorDisabledAndTolerance(t *testing.T) {
	b := DefaultBehavior()
	b.ScaleDown.Select = SelectDisabled
	up := 0.5
	b.ScaleUp.Tolerance = &up
	h, _ := NewHPA(HPAConfig{Name: "d", Metrics: []HPAMetric{queueMetric(1)}, Tolerance: 0.1, Behavior: b})
	if got, _ := h.Recommend(obsOf(at(0), 4, 1, 100, ready(0), ready(0), ready(0), ready(0))); got != 4 {
		t.Errorf("scale-down disabled: got %d, want 4", got)
	}
	// ratio 1.4 is within the scale-up tolerance 0.5
	if got, _ := h.Recommend(obsOf(at(15), 2, 1, 100, ready(1.4), ready(1.4))); got != 2 {
		t.Errorf("per-direction tolerance: got %d, want 2", got)
	}
	// ratio 0.85 is outside the scale-down tolerance 0.1 but scale-down is disabled
	if got, _ := h.Recommend(obsOf(at(30), 2, 1, 100, ready(0.85), ready(0.85))); got != 2 {
		t.Errorf("got %d, want 2", got)
	}
}

func TestNewHPARejectsBadConfig(t *testing.T) {
	bad := []HPAConfig{
		{Name: "none"},
		{Name: "tol", Metrics: []HPAMetric{queueMetric(3)}, Tolerance: 1.5},
		{Name: "target", Metrics: []HPAMetric{queueMetric(0)}},
		{Name: "nan", Metrics: []HPAMetric{queueMetric(math.NaN())}},
		{Name: "reader", Metrics: []HPAMetric{{Name: "x", Source: PodsAverageValue, Target: 1}}},
		{Name: "ext", Metrics: []HPAMetric{{Name: "x", Source: ExternalValue, Target: 1}}},
		{Name: "policy", Metrics: []HPAMetric{queueMetric(3)}, Behavior: &Behavior{
			ScaleUp:   ScalingRules{Policies: []ScalingPolicy{{Type: PodsPolicy, Value: 0, Period: time.Second}}},
			ScaleDown: ScalingRules{Policies: []ScalingPolicy{{Type: PodsPolicy, Value: 1, Period: time.Second}}}}},
	}
	for _, c := range bad {
		if _, err := NewHPA(c); err == nil {
			t.Errorf("config %q: want an error", c.Name)
		}
	}
}

// TestExternalValueOvershoot reproduces the llm-d write-up's case: the
// queue grows by 20 per sync while new pods are still starting (2 stay
// ready). Upstream multiplies the External Value ratio by ready pods, so
// spec grows linearly (4·i); the write-up's assumption, spec.replicas as
// the multiplier, compounds and is held back only by the legacy 2×-per-sync
// limit (2^i).
func TestExternalValueOvershoot(t *testing.T) {
	run := func(bySpec bool) int {
		a, err := Presets()["hpa-external-value"](Params{"by_spec": map[bool]float64{false: 0, true: 1}[bySpec]})
		if err != nil {
			t.Fatal(err)
		}
		spec := 2
		for i := 1; i <= 8; i++ {
			q := 20.0 * float64(i) // Σ waiting; ratio q/10 = 2i
			pods := []podSpec{ready(q / 2), ready(q / 2)}
			for range spec - 2 {
				pods = append(pods, starting())
			}
			got, err := a.Recommend(obsOf(at(float64(15*i)), spec, 1, 1000, pods...))
			if err != nil {
				t.Fatal(err)
			}
			spec = got
		}
		return spec
	}
	// by ready pods: ceil(2i · 2) = 4i → 32 after 8 syncs
	if got := run(false); got != 32 {
		t.Errorf("ready-pod multiplier: spec %d after 8 syncs, want 32", got)
	}
	// by spec: 4, 8, 16, ... → 2^(i+1) = 512 after 8 syncs
	if got := run(true); got != 512 {
		t.Errorf("spec multiplier: spec %d after 8 syncs, want 512", got)
	}
}
