package baseline

// The Kubernetes HPA controller's own tests, translated into calls of this
// package.
//
// Sources (kubernetes/kubernetes, pkg/controller/podautoscaler):
//   - horizontal_test.go at commit 003e86297d18a8538c9da3619871393f9703bf70
//   - replica_calculator_test.go at commit 00067268967ec95a40035bd666374a1caf48dd1a
//
// Each case carries the upstream test's name and expected replica count.
// Translation rules:
//   - reportedLevels stay in upstream units: CPU in millicores read against
//     a per-pod request in millicores (so utilisation is the same integer
//     percent), Pods/External metrics in milli-units against milli targets.
//     Where upstream requests differ per pod (0.9, 1.0, 1.1) but every pod
//     reports, the utilisation only depends on their sum, and the cases use
//     the mean request.
//   - a pod whose Ready condition is False is a Starting pod (with metrics
//     if it reports); hotCPUCreationTime is a pod created and Ready now,
//     coolCPUCreationTime 3 min ago; Failed pods and pods being deleted are
//     Draining; Pending pods are Pending; a pod absent from reportedLevels
//     has no metrics.
//   - an unsupported metric type ("CheddarCheese") or a failing metrics
//     API is a metric whose source returns an error.
//   - recommendations: nil lets the controller record its initial
//     recommendation (the current scale) on the first sync;
//     []timestampedRecommendation{} (an existing, empty history) does not.
//   - the controller's defaults are those of setupController: tolerance
//     0.1, 5 min downscale stabilisation. Upstream's tests raise the legacy
//     scale-up limit factor from 2 to 8; no translated case reaches either
//     limit below maxReplicas, except TestConvertDesiredReplicasWithRules,
//     whose expected value upstream computes with the factor in force
//     (calculateScaleUpLimit), here the production 2.
//
// Not translated: status conditions, events and monitor labels (the
// emulation returns only the replica count), container-resource metrics,
// Object metrics, selector errors and scale-subresource failures.

import (
	"fmt"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/scaler"
)

type podStart int

const (
	startedLongAgo podStart = iota
	startedCool             // coolCPUCreationTime: 3 min ago
	startedHot              // hotCPUCreationTime: now
)

type podState int

const (
	running podState = iota
	notReady
	pendingPod
	failedOrDeleting
)

// upPod is one pod of an upstream test case: its reported level (milli),
// whether it reports at all, its readiness or phase and its start time.
type upPod struct {
	level    float64
	noMetric bool
	state    podState
	start    podStart
}

func levels(vs ...float64) []upPod {
	out := make([]upPod, len(vs))
	for i, v := range vs {
		out[i] = upPod{level: v}
	}
	return out
}

// withMissing appends n pods that report nothing.
func withMissing(pods []upPod, n int) []upPod {
	for range n {
		pods = append(pods, upPod{noMetric: true})
	}
	return pods
}

func upstreamObs(now time.Time, spec, minR, maxR int, pods []upPod) scaler.Observation {
	o := scaler.Observation{Now: now, SpecReplicas: spec, MinReplicas: minR, MaxReplicas: maxR}
	for i, p := range pods {
		created := now.Add(-time.Hour)
		switch p.start {
		case startedCool:
			created = now.Add(-3 * time.Minute)
		case startedHot:
			created = now
		}
		pv := scaler.PodView{Name: fmt.Sprintf("test-pod-%d", i), Phase: scaler.Ready, CreatedAt: created, ReadyAt: created}
		switch p.state {
		case notReady:
			pv.Phase, pv.ReadyAt = scaler.Starting, time.Time{}
		case pendingPod:
			pv.Phase, pv.ReadyAt = scaler.Pending, time.Time{}
		case failedOrDeleting:
			pv.Phase = scaler.Draining
		}
		if !p.noMetric && p.state != pendingPod {
			v := p.level
			pv.Metrics = &signal.Pod{Name: pv.Name, ScrapeTime: now, Waiting: &v, GPU: &signal.GPU{Utilization: &v}}
		}
		o.Pods = append(o.Pods, pv)
	}
	return o
}

// cpu is a Resource cpu metric: averageUtilization pct of requestMilli.
func cpu(pct, requestMilli float64) HPAMetric {
	return HPAMetric{Name: "cpu", Source: ResourceUtilization, Target: pct, PodValue: fromMetrics(readGPUUtil), Request: requestMilli}
}

// qps is a Pods metric with an AverageValue target (milli).
func qps(targetMilli float64) HPAMetric {
	return HPAMetric{Name: "qps", Source: PodsAverageValue, Target: targetMilli, PodValue: fromMetrics(readWaiting)}
}

func externalConst(valueMilli float64) func(scaler.Observation) (float64, error) {
	return func(scaler.Observation) (float64, error) { return valueMilli, nil }
}

// extValue and extAverage are External qps metrics reading valueMilli.
func extValue(targetMilli, valueMilli float64) HPAMetric {
	return HPAMetric{Name: "qps", Source: ExternalValue, Target: targetMilli, External: externalConst(valueMilli)}
}

func extAverage(targetMilli, valueMilli float64) HPAMetric {
	return HPAMetric{Name: "qps", Source: ExternalAverageValue, Target: targetMilli, External: externalConst(valueMilli)}
}

// invalid is a metric the controller cannot compute.
var invalid = HPAMetric{Name: "CheddarCheese", Source: ExternalValue, Target: 1, External: failing}

// rules is generateScalingRules: selectPolicy Max, a Pods policy and/or a
// Percent policy (0 leaves one out), and a stabilisation window (seconds).
func rules(pods, podsPeriod, percent, percentPeriod, window int) *ScalingRules {
	r := &ScalingRules{StabilizationWindow: secs(float64(window)), Select: SelectMax}
	if pods != 0 {
		r.Policies = append(r.Policies, ScalingPolicy{Type: PodsPolicy, Value: pods, Period: secs(float64(podsPeriod))})
	}
	if percent != 0 {
		r.Policies = append(r.Policies, ScalingPolicy{Type: PercentPolicy, Value: percent, Period: secs(float64(percentPeriod))})
	}
	return r
}

// behaviorOf is the defaulted spec.behavior with the given rules (nil
// keeps a direction's API default), or nil when neither is given.
func behaviorOf(up, down *ScalingRules) *Behavior {
	if up == nil && down == nil {
		return nil
	}
	b := DefaultBehavior()
	if up != nil {
		b.ScaleUp = *up
	}
	if down != nil {
		b.ScaleDown = *down
	}
	return b
}

func newUpstreamHPA(t *testing.T, metrics []HPAMetric, b *Behavior) *HPA {
	t.Helper()
	h, err := NewHPA(HPAConfig{Name: "test-hpa", Metrics: metrics, Behavior: b, Tolerance: 0.1,
		DownscaleStabilization: 5 * time.Minute, SyncPeriod: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// history is a test case's recommendations: nil, empty, or replicas at
// offsets before now.
type history []struct {
	replicas int
	ago      time.Duration
}

var emptyHistory = history{}

func (hs history) at(now time.Time) []timedRecommendation {
	if hs == nil {
		return nil
	}
	out := []timedRecommendation{}
	for _, r := range hs {
		out = append(out, timedRecommendation{r.replicas, now.Add(-r.ago)})
	}
	return out
}

// TestHorizontalController runs the controller-level cases of
// horizontal_test.go: one sync of a fresh controller.
func TestHorizontalController(t *testing.T) {
	const cool, hot = startedCool, startedHot
	cpu1 := func(pct float64) []HPAMetric { return []HPAMetric{cpu(pct, 1000)} }
	readiness := func(pods []upPod, states ...podState) []upPod {
		for i, s := range states {
			pods[i].state = s
		}
		return pods
	}
	starts := func(pods []upPod, ss ...podStart) []upPod {
		for i, s := range ss {
			pods[i].start = s
		}
		return pods
	}
	const T, F = running, notReady
	cases := []struct {
		name             string
		minR, maxR, spec int
		metrics          []HPAMetric
		pods             []upPod
		up, down         *ScalingRules
		recs             history
		want             int
	}{
		{"TestScaleUp", 2, 6, 3, cpu1(30), levels(300, 500, 700), nil, nil, nil, 5},
		{"TestScaleUpUnreadyLessScale", 2, 6, 3, cpu1(30), readiness(levels(300, 500, 700), F, T, T), nil, nil, nil, 4},
		{"TestScaleUpHotCpuLessScale", 2, 6, 3, cpu1(30), starts(levels(300, 500, 700), hot, cool, cool), nil, nil, nil, 4},
		{"TestScaleUpUnreadyNoScale", 2, 6, 3, cpu1(30), readiness(levels(400, 500, 700), T, F, F), nil, nil, nil, 3},
		{"TestScaleUpHotCpuNoScale", 2, 6, 3, cpu1(30),
			starts(readiness(levels(400, 500, 700), T, F, F), cool, hot, hot), nil, nil, nil, 3},
		{"TestScaleUpIgnoresFailedPods", 2, 6, 2, cpu1(30),
			append(levels(500, 700), upPod{state: failedOrDeleting, noMetric: true}, upPod{state: failedOrDeleting, noMetric: true}), nil, nil, nil, 4},
		{"TestScaleUpIgnoresDeletionPods", 2, 6, 2, cpu1(30),
			append(levels(500, 700), upPod{state: failedOrDeleting, noMetric: true}, upPod{state: failedOrDeleting, noMetric: true}), nil, nil, nil, 4},
		{"TestScaleUpCM", 2, 6, 3, []HPAMetric{qps(15000)}, levels(20000, 10000, 30000), nil, nil, nil, 4},
		{"TestScaleUpCMUnreadyAndHotCpuNoLessScale", 2, 6, 3, []HPAMetric{qps(15000)},
			starts(readiness(levels(50000, 10000, 30000), T, T, F), cool, cool, hot), nil, nil, nil, 6},
		{"TestScaleUpCMUnreadyandCpuHot", 2, 6, 3, []HPAMetric{qps(15000)},
			starts(readiness(levels(50000, 15000, 30000), F, T, F), hot, cool, hot), nil, nil, nil, 6},
		{"TestScaleUpHotCpuNoScaleWouldScaleDown", 2, 6, 3, []HPAMetric{qps(15000)},
			starts(levels(50000, 15000, 30000), hot, cool, hot), nil, nil, nil, 6},
		{"TestScaleUpCMExternal", 2, 6, 3, []HPAMetric{extValue(6666, 8600)}, withMissing(nil, 3), nil, nil, nil, 4},
		{"TestScaleUpPerPodCMExternal", 2, 6, 3, []HPAMetric{extAverage(2222, 8600)}, withMissing(nil, 3), nil, nil, nil, 4},
		{"TestScaleDown", 2, 6, 5, cpu1(50), levels(100, 300, 500, 250, 250), nil, nil, emptyHistory, 3},
		// the fixed case: with no history, the initial recommendation (5)
		// holds the first down-window
		{"TestScaleDownStabilizeInitialSize", 2, 6, 5, cpu1(50), levels(100, 300, 500, 250, 250), nil, nil, nil, 5},
		{"TestScaleDownWithScalingRules", 2, 6, 5, cpu1(50), levels(100, 300, 500, 250, 250),
			rules(0, 0, 100, 15, 30), nil, emptyHistory, 3},
		{"TestScaleUpOneMetricInvalid", 2, 6, 3, []HPAMetric{cpu(30, 1000), invalid}, levels(300, 400, 500), nil, nil, nil, 4},
		{"TestScaleUpFromZeroOneMetricInvalid", 0, 6, 0, []HPAMetric{cpu(30, 1000), invalid}, levels(300, 400, 500), nil, nil, emptyHistory, 4},
		{"TestScaleUpBothMetricsEmpty", 2, 6, 3, []HPAMetric{invalid}, withMissing(nil, 3), nil, nil, nil, 3},
		{"TestScaleUpOneMetricEmpty", 2, 6, 3, []HPAMetric{cpu(30, 1000), invalid}, levels(300, 400, 500), nil, nil, nil, 4},
		{"TestNoScaleDownOneMetricInvalid", 2, 6, 5, []HPAMetric{cpu(50, 1000), invalid}, levels(100, 300, 500, 250, 250), nil, nil, emptyHistory, 5},
		{"TestNoScaleDownOneMetricEmpty", 2, 6, 5, []HPAMetric{cpu(50, 1000), invalid}, levels(100, 300, 500, 250, 250), nil, nil, emptyHistory, 5},
		{"TestScaleDownCM", 2, 6, 5, []HPAMetric{qps(20000)}, levels(12000, 12000, 12000, 12000, 12000), nil, nil, emptyHistory, 3},
		{"TestScaleDownCMExternal", 2, 6, 5, []HPAMetric{extValue(14400, 8600)}, withMissing(nil, 5), nil, nil, emptyHistory, 3},
		{"TestScaleDownToZeroCMExternal", 0, 6, 5, []HPAMetric{extValue(14400, 0)}, withMissing(nil, 5), nil, nil, emptyHistory, 0},
		{"TestScaleDownPerPodCMExternal", 2, 6, 5, []HPAMetric{extAverage(3000, 8600)}, withMissing(nil, 5), nil, nil, emptyHistory, 3},
		{"TestScaleDownIncludeUnreadyPods", 2, 6, 5, cpu1(50),
			readiness(levels(100, 300, 500, 250, 250), T, T, T, F, F), nil, nil, emptyHistory, 2},
		{"TestScaleDownIgnoreHotCpuPods", 2, 6, 5, cpu1(50),
			starts(levels(100, 300, 500, 250, 250), cool, cool, cool, hot, hot), nil, nil, emptyHistory, 2},
		{"TestScaleDownIgnoresFailedPods", 2, 6, 5, cpu1(50),
			append(levels(100, 300, 500, 250, 250), upPod{state: failedOrDeleting, noMetric: true}, upPod{state: failedOrDeleting, noMetric: true}),
			nil, nil, emptyHistory, 3},
		{"TestScaleDownIgnoresDeletionPods", 2, 6, 5, cpu1(50),
			append(levels(100, 300, 500, 250, 250), upPod{state: failedOrDeleting, noMetric: true}, upPod{state: failedOrDeleting, noMetric: true}),
			nil, nil, emptyHistory, 3},
		{"TestTolerance", 1, 5, 3, cpu1(100), levels(1010, 1030, 1020), nil, nil, nil, 3},
		{"TestToleranceCM", 1, 5, 3, []HPAMetric{qps(20000)}, levels(20000, 20001, 21000), nil, nil, nil, 3},
		{"TestToleranceCMExternal", 2, 6, 4, []HPAMetric{extValue(8666, 8600)}, withMissing(nil, 4), nil, nil, nil, 4},
		{"TestTolerancePerPodCMExternal", 2, 6, 4, []HPAMetric{extAverage(2200, 8600)}, withMissing(nil, 4), nil, nil, nil, 4},
		{"TestMinReplicas", 2, 5, 3, cpu1(90), levels(10, 95, 10), nil, nil, emptyHistory, 2},
		{"TestZeroMinReplicasDesiredZero", 0, 5, 3, cpu1(90), levels(0, 0, 0), nil, nil, emptyHistory, 0},
		{"TestMinReplicasDesiredZero", 2, 5, 3, cpu1(90), levels(0, 0, 0), nil, nil, emptyHistory, 2},
		{"TestZeroReplicas", 3, 5, 0, cpu1(90), nil, nil, nil, nil, 0},
		{"TestTooFewReplicas", 3, 5, 2, cpu1(90), nil, nil, nil, nil, 3},
		{"TestTooManyReplicas", 3, 5, 10, cpu1(90), nil, nil, nil, nil, 5},
		{"TestMaxReplicas", 2, 5, 3, cpu1(90), levels(8000, 9500, 1000), nil, nil, nil, 5},
		// upstream also reports metrics for two pods that do not exist; the
		// emulation has no such input
		{"TestSuperfluousMetrics", 2, 6, 4, cpu1(100), levels(4000, 9500, 3000, 7000), nil, nil, nil, 6},
		{"TestMissingMetrics", 2, 6, 4, cpu1(100), withMissing(levels(400, 95), 2), nil, nil, emptyHistory, 3},
		{"TestEmptyMetrics", 2, 6, 4, cpu1(100), withMissing(nil, 4), nil, nil, nil, 4},
		{"TestEventCreated", 1, 5, 1, []HPAMetric{cpu(50, 200)}, levels(200), nil, nil, nil, 2},
		{"TestEventNotCreated", 1, 5, 2, []HPAMetric{cpu(50, 400)}, levels(200, 200), nil, nil, nil, 2},
		{"TestMissingReports", 1, 5, 4, []HPAMetric{cpu(50, 200)}, levels(200), nil, nil, emptyHistory, 2},
		{"TestUpscaleCap", 1, 100, 3, []HPAMetric{cpu(10, 100)}, levels(100, 200, 300), rules(0, 0, 700, 60, 0), nil, nil, 24},
		{"TestUpscaleCapGreaterThanMaxReplicas", 1, 20, 3, []HPAMetric{cpu(10, 100)}, levels(100, 200, 300),
			rules(0, 0, 700, 60, 0), nil, nil, 20},
		{"TestMoreReplicasThanSpecNoScale", 1, 8, 4, cpu1(50), levels(500, 500, 500, 500, 500), nil, nil, nil, 4},
		{"TestNoBackoffUpscaleCM", 1, 5, 3, []HPAMetric{qps(15000)}, levels(20000, 10000, 30000), nil, nil, nil, 4},
		{"TestNoBackoffUpscaleCMNoBackoffCpu", 1, 5, 3, []HPAMetric{cpu(10, 1000), qps(15000)},
			levels(20000, 10000, 30000), nil, nil, nil, 5},
		{"TestStabilizeDownscale", 1, 5, 4, []HPAMetric{cpu(100, 100)}, levels(50, 50, 50), nil, nil,
			history{{10, 10 * time.Minute}, {4, time.Minute}}, 4},
		{"TestScaleUpRCImmediately", 2, 6, 1, cpu1(0.1), levels(0, 0, 0, 0), nil, nil, nil, 2},
		{"TestScaleDownRCImmediately", 2, 5, 6, cpu1(50), levels(8000, 9500, 1000), nil, nil, nil, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := at(0)
			h := newUpstreamHPA(t, c.metrics, behaviorOf(c.up, c.down))
			h.recommendations = c.recs.at(now)
			got, _ := h.Recommend(upstreamObs(now, c.spec, c.minR, c.maxR, c.pods))
			if got != c.want {
				t.Errorf("desired replicas %d, want %d", got, c.want)
			}
		})
	}
}

// TestReplicaCalculator runs replica_calculator_test.go cases the
// controller-level table does not already cover: the calculator alone
// (no stabilisation, no bounds).
func TestReplicaCalculator(t *testing.T) {
	readiness := func(pods []upPod, states ...podState) []upPod {
		for i, s := range states {
			pods[i].state = s
		}
		return pods
	}
	const T, F = running, notReady
	hotFirst := func(pods []upPod) []upPod {
		pods[0].start = startedHot
		for i := 1; i < len(pods); i++ {
			pods[i].start = startedCool
		}
		return pods
	}
	cases := []struct {
		name   string
		cur    int
		metric HPAMetric
		pods   []upPod
		want   int
	}{
		{"TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown", 3, qps(15000),
			func() []upPod {
				p := readiness(levels(50000, 15000, 30000), F, T, F)
				p[0].start, p[1].start, p[2].start = startedHot, startedCool, startedHot
				return p
			}(), 7},
		{"TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods", 3, extValue(4400, 8600),
			readiness(withMissing(nil, 3), F, T, F), 2},
		{"TestReplicaCalcScaleDownExcludeUnscheduledPods", 5, cpu(50, 1000),
			append(levels(100), upPod{state: pendingPod}, upPod{state: pendingPod}, upPod{state: pendingPod}, upPod{state: pendingPod}), 1},
		{"TestReplicaCalcSuperfluousMetrics", 4, cpu(100, 1000), levels(4000, 9500, 3000, 7000), 24},
		{"TestReplicaCalcMissingMetricsNoChangeEq", 2, cpu(100, 1000), withMissing(levels(1000), 1), 2},
		{"TestReplicaCalcMissingMetricsNoChangeGt", 2, cpu(100, 1000), withMissing(levels(1900), 1), 2},
		{"TestReplicaCalcMissingMetricsNoChangeLt", 2, cpu(100, 1000), withMissing(levels(600), 1), 2},
		{"TestReplicaCalcMissingMetricsUnreadyChange", 3, cpu(50, 1000),
			readiness(withMissing(levels(100, 450), 1), F, T, T), 3},
		{"TestReplicaCalcMissingMetricsHotCpuNoChange", 3, cpu(50, 1000), hotFirst(withMissing(levels(100, 450), 1)), 3},
		{"TestReplicaCalcMissingMetricsUnreadyScaleUp", 3, cpu(50, 1000),
			readiness(withMissing(levels(100, 2000), 1), F, T, T), 4},
		{"TestReplicaCalcMissingMetricsHotCpuScaleUp", 3, cpu(50, 1000),
			hotFirst(readiness(withMissing(levels(100, 2000), 1), F, T, T)), 4},
		{"TestReplicaCalcMissingMetricsUnreadyScaleDown", 4, cpu(50, 1000),
			readiness(withMissing(levels(100, 100, 100), 1), F, T, T, T), 3},
		{"TestReplicaCalcDuringRollingUpdateWithMaxSurge", 2, cpu(50, 1000), withMissing(levels(100, 100), 1), 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newUpstreamHPA(t, []HPAMetric{c.metric}, nil)
			got, err := h.replicasForMetric(upstreamObs(at(0), c.cur, 0, 1000, c.pods), c.metric)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("replicas %d, want %d", got, c.want)
			}
		})
	}
}

func TestConvertDesiredReplicasWithRules(t *testing.T) {
	for _, c := range []struct {
		annotation                  string
		cur, desired, minR, maxR, w int
	}{
		{"prenormalized desired replicas within range", 5, 7, 3, 8, 7},
		{"prenormalized desired replicas < minReplicas", 3, 1, 2, 8, 2},
		{"prenormalized desired zeroed replicas within range", 1, 0, 0, 10, 0},
		{"maxReplicas is the limit because maxReplicas < scaleUpLimit", 20, 1000, 1, 10, 10},
		// calculateScaleUpLimit(3) = max(2·3, 4) with the production factor
		{"scaleUpLimit is the limit because scaleUpLimit < maxReplicas", 3, 1000, 1, 2000, 6},
	} {
		t.Run(c.annotation, func(t *testing.T) {
			h := newUpstreamHPA(t, []HPAMetric{cpu(50, 1000)}, nil)
			h.recommendations = []timedRecommendation{}
			if got := h.normalizeLegacy(upstreamObs(at(0), c.cur, c.minR, c.maxR, nil), c.desired); got != c.w {
				t.Errorf("got %d, want %d", got, c.w)
			}
		})
	}
}

func TestCalculateScaleUpLimitWithScalingRules(t *testing.T) {
	r := ScalingRules{StabilizationWindow: 300 * time.Second, Select: SelectMin, Policies: []ScalingPolicy{
		{Type: PodsPolicy, Value: 2, Period: time.Minute}, {Type: PercentPolicy, Value: 50, Period: time.Minute}}}
	h := newUpstreamHPA(t, []HPAMetric{cpu(50, 1000)}, behaviorOf(&r, &r))
	if got := h.scaleLimit(at(0), 1, r, true); got != 2 {
		t.Errorf("scale-up limit %d, want 2", got)
	}
}

func TestCalculateScaleDownLimitWithBehaviors(t *testing.T) {
	r := ScalingRules{StabilizationWindow: 300 * time.Second, Select: SelectMin, Policies: []ScalingPolicy{
		{Type: PodsPolicy, Value: 2, Period: time.Minute}, {Type: PercentPolicy, Value: 50, Period: time.Minute}}}
	h := newUpstreamHPA(t, []HPAMetric{cpu(50, 1000)}, behaviorOf(&r, &r))
	if got := h.scaleLimit(at(0), 5, r, false); got != 3 {
		t.Errorf("scale-down limit %d, want 3", got)
	}
}

// spread is generateEventsUniformDistribution: the changes placed in the
// middle of equal segments of the last period, oldest first.
func spread(now time.Time, changes []int, period time.Duration) []scaleEvent {
	seg := period / time.Duration(len(changes))
	out := make([]scaleEvent, len(changes))
	for i, c := range changes {
		ago := period - seg*time.Duration(i+1) + seg/2
		out[i] = scaleEvent{change: c, at: now.Add(-ago)}
	}
	return out
}

func TestNormalizeDesiredReplicas(t *testing.T) {
	for _, c := range []struct {
		name     string
		recs     history
		proposal int
		want     int
		logLen   int
	}{
		{"empty log", emptyHistory, 5, 5, 1},
		{"stabilize", history{{4, 2 * time.Minute}, {5, time.Minute}}, 3, 5, 3},
		{"no stabilize", history{{1, 2 * time.Minute}, {2, time.Minute}}, 3, 3, 3},
		{"no stabilize - old recommendations", history{{10, 10 * time.Minute}, {9, 9 * time.Minute}}, 3, 3, 2},
		{"stabilize - old recommendations", history{{10, 10 * time.Minute}, {4, time.Minute}, {5, 2 * time.Minute}, {9, 9 * time.Minute}}, 3, 5, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := at(0)
			h := newUpstreamHPA(t, []HPAMetric{cpu(50, 1000)}, nil)
			h.recommendations = c.recs.at(now)
			if got := h.stabilizeLegacy(now, c.proposal); got != c.want {
				t.Errorf("stabilized %d, want %d", got, c.want)
			}
			if len(h.recommendations) != c.logLen {
				t.Errorf("log length %d, want %d", len(h.recommendations), c.logLen)
			}
		})
	}
}

func TestScalingWithRules(t *testing.T) {
	type evs struct {
		changes []int
		period  time.Duration
	}
	cases := []struct {
		name             string
		upEvents, downEv *evs
		minR, maxR       int
		up, down         *ScalingRules
		cur, desired     int
		want             int
	}{
		{"prenormalized desired replicas within range", nil, nil, 3, 8, nil, nil, 5, 7, 7},
		{"prenormalized desired replicas < minReplicas", nil, nil, 2, 8, nil, nil, 3, 1, 2},
		{"prenormalized desired replicas within range when minReplicas is 0", nil, nil, 0, 10, nil, nil, 1, 0, 0},
		{"maxReplicas is the limit because maxReplicas < scaleUpLimit", nil, nil, 1, 10, nil, nil, 20, 1000, 10},
		{"desired replica count is more than the maximum replica count", nil, nil, 100, 150, nil, nil, 100, 1000, 150},
		{"scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies", nil, nil, 1, 2000,
			rules(0, 0, 1, 60, 0), nil, 3, 1000, 4},
		// (upstream skips the "scaleDownLimit ... with user defined policies" case: testThis)
		{"scaleUp with default behavior", nil, nil, 1, 1000, nil, nil, 10, 50, 20},
		{"scaleUp with pods policy larger than percent policy", nil, nil, 1, 1000, rules(100, 60, 100, 60, 0), nil, 10, 500, 110},
		{"scaleUp with percent policy larger than pods policy", nil, nil, 1, 1000, rules(2, 60, 100, 60, 0), nil, 10, 500, 20},
		{"scaleUp with spec MaxReplicas limitation with large pod policy", nil, nil, 1, 1000, rules(100, 60, 0, 0, 0), nil, 10, 50, 50},
		{"scaleUp with spec MaxReplicas limitation with large percent policy", nil, nil, 1, 1000, rules(10000, 60, 0, 0, 0), nil, 10, 50, 50},
		{"scaleUp with pod policy limitation", nil, nil, 1, 1000, rules(30, 60, 0, 0, 0), nil, 10, 50, 40},
		{"scaleUp with percent policy limitation", nil, nil, 1, 1000, rules(0, 0, 200, 60, 0), nil, 10, 50, 30},
		{"scaleDown with percent policy larger than pod policy", nil, nil, 1, 1000, nil, rules(20, 60, 1, 60, 300), 100, 2, 80},
		{"scaleDown with pod policy larger than percent policy", nil, nil, 1, 1000, nil, rules(2, 60, 1, 60, 300), 100, 2, 98},
		{"scaleDown with spec MinReplicas=nil limitation with large pod policy", nil, nil, 1, 1000, nil, rules(100, 60, 0, 0, 300), 10, 0, 1},
		{"scaleDown with spec MinReplicas limitation with large pod policy", nil, nil, 1, 1000, nil, rules(100, 60, 0, 0, 300), 10, 0, 1},
		{"scaleDown with spec MinReplicas limitation with large percent policy", nil, nil, 5, 1000, nil, rules(0, 0, 100, 60, 300), 10, 2, 5},
		{"scaleDown with pod policy limitation", nil, nil, 1, 1000, nil, rules(5, 60, 0, 0, 300), 10, 2, 5},
		{"scaleDown with percent policy limitation", nil, nil, 1, 1000, nil, rules(0, 0, 50, 60, 300), 10, 5, 5},
		{"scaleUp with spec MaxReplicas limitation with large pod policy and events", &evs{[]int{1, 5, 9}, 120 * time.Second}, nil,
			1, 200, rules(300, 60, 0, 0, 0), nil, 100, 500, 200},
		{"scaleUp with spec MaxReplicas limitation with large percent policy and events", &evs{[]int{1, 5, 9}, 120 * time.Second}, nil,
			1, 200, rules(0, 0, 10000, 60, 0), nil, 100, 500, 200},
		{"scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events", &evs{[]int{1, 5, 9}, 120 * time.Second}, nil,
			1, 1000, rules(5, 120, 0, 0, 0), nil, 100, 500, 100},
		{"scaleUp with pod policy and previous scale up events", &evs{[]int{1, 5, 9}, 120 * time.Second}, nil,
			1, 1000, rules(150, 120, 0, 0, 0), nil, 100, 500, 235},
		{"scaleUp with percent policy and previous scale up events", &evs{[]int{1, 5, 9}, 120 * time.Second}, nil,
			1, 1000, rules(0, 0, 200, 120, 0), nil, 100, 500, 255},
		{"scaleUp with percent policy and previous scale up and down events", &evs{[]int{4}, 120 * time.Second}, &evs{[]int{2}, 120 * time.Second},
			1, 1000, rules(0, 0, 300, 300, 0), nil, 6, 24, 16},
		{"scaleDown with default policy and previous events", nil, &evs{[]int{1, 5, 9}, 120 * time.Second},
			1, 1000, nil, nil, 10, 5, 5},
		{"scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events", nil, &evs{[]int{1, 5, 9}, 120 * time.Second},
			1, 1000, nil, rules(115, 120, 0, 0, 300), 100, 0, 1},
		{"scaleDown with spec MinReplicas limitation with large pod policy and previous events", nil, &evs{[]int{1, 5, 9}, 120 * time.Second},
			5, 1000, nil, rules(130, 120, 0, 0, 300), 100, 0, 5},
		{"scaleDown with spec MinReplicas limitation with large percent policy and previous events", nil, &evs{[]int{1, 5, 9}, 120 * time.Second},
			5, 1000, nil, rules(0, 0, 100, 120, 300), 100, 2, 5},
		{"scaleDown with pod policy limitation and previous events", nil, &evs{[]int{1, 5, 9}, 120 * time.Second},
			1, 1000, nil, rules(5, 120, 0, 0, 300), 100, 2, 100},
		{"scaleDown with percent policy limitation and previous events", nil, &evs{[]int{2, 4, 6}, 120 * time.Second},
			1, 1000, nil, rules(0, 0, 50, 120, 300), 100, 0, 56},
		{"scaleDown with percent policy and previous scale up and down events", &evs{[]int{2}, 120 * time.Second}, &evs{[]int{4}, 120 * time.Second},
			1, 1000, nil, rules(0, 0, 50, 180, 0), 10, 1, 6},
		{"scaleDown with previous events preventing further scale down", nil, &evs{[]int{10, 10, 10}, 120 * time.Second},
			1, 1000, nil, rules(0, 0, 10, 120, 300), 100, 0, 100},
		{"scaleDown with with previous events still allowing more scale down", nil, &evs{[]int{10, 10, 10}, 120 * time.Second},
			1, 1000, nil, rules(0, 0, 1000, 120, 300), 10, 5, 5},
		{"check 'outdated' flag for events for one behavior for up", &evs{[]int{8, 12, 9, 11}, 120 * time.Second}, nil,
			1, 1000, rules(1000, 60, 0, 0, 0), nil, 100, 200, 200},
		{"check that events were not marked 'outdated' for two different policies in the behavior for up", &evs{[]int{8, 12, 9, 11}, 120 * time.Second}, nil,
			1, 1000, rules(1000, 120, 100, 60, 0), nil, 100, 200, 200},
		{"check that events were marked 'outdated' for two different policies in the behavior for up", &evs{[]int{8, 12, 9, 11}, 120 * time.Second}, nil,
			1, 1000, rules(1000, 30, 100, 60, 0), nil, 100, 200, 200},
		{"check 'outdated' flag for events for one behavior for down", nil, &evs{[]int{8, 12, 9, 11}, 120 * time.Second},
			1, 1000, nil, rules(1000, 60, 0, 0, 300), 100, 5, 5},
		{"check that events were not marked 'outdated' for two different policies in the behavior for down", nil, &evs{[]int{8, 12, 9, 11}, 120 * time.Second},
			1, 1000, nil, rules(1000, 120, 100, 60, 300), 100, 5, 5},
		{"check that events were marked 'outdated' for two different policies in the behavior for down", nil, &evs{[]int{8, 12, 9, 11}, 120 * time.Second},
			1, 1000, nil, rules(1000, 30, 100, 60, 300), 100, 5, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := at(0)
			b := behaviorOf(c.up, c.down)
			if b == nil {
				b = DefaultBehavior()
			}
			h := newUpstreamHPA(t, []HPAMetric{cpu(50, 1000)}, b)
			if c.upEvents != nil {
				h.upEvents = spread(now, c.upEvents.changes, c.upEvents.period)
			}
			if c.downEv != nil {
				h.downEvents = spread(now, c.downEv.changes, c.downEv.period)
			}
			if got := h.limitRate(now, c.cur, c.desired, c.minR, c.maxR); got != c.want {
				t.Errorf("replicas %d, want %d", got, c.want)
			}
		})
	}
}

// TestStoreScaleEvents checks the events kept after one scale event of +5
// (scale-up) and of -5 (scale-down) from 10 replicas, and the change
// counted over the last 60 s before it. "replace one entry, use policies
// with different periods" is the fixed case: the last outdated event is
// reused, the other one stays, marked outdated.
func TestStoreScaleEvents(t *testing.T) {
	type ev struct {
		change   int
		ago      time.Duration
		outdated bool
	}
	s := time.Second
	cases := []struct {
		name       string
		prev, next []ev
		rules      *ScalingRules
		wantChange int
	}{
		{"empty entries with default behavior", nil, nil, nil, 0},
		{"empty entries with two-policy-behavior", nil, []ev{{5, 0, false}}, rules(10, 60, 100, 60, 0), 0},
		{"one outdated entry to be kept untouched without behavior", []ev{{7, 61 * s, false}}, []ev{{7, 61 * s, false}}, nil, 0},
		{"one outdated entry to be replaced with behavior", []ev{{7, 61 * s, false}}, []ev{{5, 0, false}}, rules(10, 60, 100, 60, 0), 0},
		{"one actual entry to be not touched with behavior", []ev{{7, 58 * s, false}},
			[]ev{{7, 58 * s, false}, {5, 0, false}}, rules(10, 60, 100, 60, 0), 7},
		{"two entries, one of them to be replaced", []ev{{7, 61 * s, false}, {6, 59 * s, false}},
			[]ev{{5, 0, false}, {6, 59 * s, false}}, rules(10, 60, 0, 0, 0), 6},
		{"replace one entry, use policies with different periods",
			[]ev{{8, 29 * s, false}, {6, 59 * s, false}, {7, 61 * s, false}, {9, 61 * s, false}},
			[]ev{{8, 29 * s, false}, {6, 59 * s, false}, {7, 61 * s, true}, {5, 0, false}}, rules(10, 60, 100, 30, 0), 14},
		{"two entries, both actual", []ev{{7, 58 * s, false}, {6, 59 * s, false}},
			[]ev{{7, 58 * s, false}, {6, 59 * s, false}, {5, 0, false}}, rules(10, 120, 100, 30, 0), 13},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := at(0)
			events := func() []scaleEvent {
				out := []scaleEvent{}
				for _, e := range c.prev {
					out = append(out, scaleEvent{change: e.change, at: now.Add(-e.ago), outdated: e.outdated})
				}
				return out
			}
			check := func(dir string, got []scaleEvent) {
				t.Helper()
				if len(got) != len(c.next) {
					t.Fatalf("%s: %d events, want %d", dir, len(got), len(c.next))
				}
				for i, e := range c.next {
					if got[i].change != e.change || got[i].outdated != e.outdated {
						t.Errorf("%s: event %d = {%d outdated=%v}, want {%d outdated=%v}", dir, i, got[i].change, got[i].outdated, e.change, e.outdated)
					}
				}
			}
			var b *Behavior
			if c.rules != nil {
				b = behaviorOf(c.rules, c.rules)
			}
			up := newUpstreamHPA(t, []HPAMetric{cpu(50, 1000)}, b)
			up.upEvents = events()
			if got := changeWithin(up.upEvents, now, time.Minute); got != c.wantChange {
				t.Errorf("up: change over 60 s = %d, want %d", got, c.wantChange)
			}
			if b != nil { // as upstream, no behavior stores no event
				up.storeScaleEvent(now, 10, 15)
			}
			check("up", up.upEvents)

			down := newUpstreamHPA(t, []HPAMetric{cpu(50, 1000)}, b)
			down.downEvents = events()
			if got := changeWithin(down.downEvents, now, time.Minute); got != c.wantChange {
				t.Errorf("down: change over 60 s = %d, want %d", got, c.wantChange)
			}
			if b != nil {
				down.storeScaleEvent(now, 10, 5)
			}
			check("down", down.downEvents)
		})
	}
}

func TestNormalizeDesiredReplicasWithBehavior(t *testing.T) {
	m := time.Minute
	cases := []struct {
		name              string
		recs              history
		cur, proposal     int
		want              int
		wantRecs          []int // nil: not checked
		upWindow, downWin time.Duration
	}{
		{"empty recommendations for scaling down", emptyHistory, 100, 5, 5, []int{5}, 0, 0},
		{"simple scale down stabilization", history{{4, 2 * m}, {5, m}}, 100, 3, 5, []int{4, 5, 3}, 0, 3 * m},
		{"simple scale up stabilization", history{{4, 2 * m}, {5, m}}, 1, 7, 4, []int{4, 5, 7}, 5 * m, 0},
		{"no scale down stabilization", history{{1, 2 * m}, {2, m}}, 100, 3, 3, []int{1, 2, 3}, 5 * m, 0},
		{"no scale up stabilization", history{{4, 2 * m}, {5, m}}, 1, 3, 3, []int{4, 5, 3}, 0, 5 * m},
		{"no scale down stabilization, reuse recommendation element", history{{10, 10 * m}, {9, 9 * m}}, 100, 3, 3, []int{10, 3}, 0, 0},
		{"no scale up stabilization, reuse recommendation element", history{{10, 10 * m}, {9, 9 * m}}, 1, 100, 100, []int{10, 100}, 0, 0},
		{"scale down stabilization, reuse one of obsolete recommendation element",
			history{{10, 10 * m}, {4, m}, {5, 2 * m}, {9, 9 * m}}, 100, 3, 5, []int{10, 4, 5, 3}, 0, 3 * m},
		{"scale up stabilization, reuse one of obsolete recommendation element",
			history{{10, 100 * m}, {6, m}, {5, 2 * m}, {9, 3 * m}}, 1, 100, 5, []int{100, 6, 5, 9}, 300 * time.Second, 0},
		{"scale up and down stabilization, do not scale up when prenormalized rec goes down",
			history{{2, 100 * m}, {3, 3 * m}}, 2, 1, 2, nil, 300 * time.Second, 300 * time.Second},
		{"scale up and down stabilization, do not scale down when prenormalized rec goes up",
			history{{2, 100 * m}, {1, 3 * m}}, 2, 3, 2, nil, 300 * time.Second, 300 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := at(0)
			b := DefaultBehavior()
			b.ScaleUp.StabilizationWindow, b.ScaleDown.StabilizationWindow = c.upWindow, c.downWin
			h := newUpstreamHPA(t, []HPAMetric{cpu(50, 1000)}, b)
			h.recommendations = c.recs.at(now)
			if got := h.stabilizeWithBehaviors(now, c.cur, c.proposal); got != c.want {
				t.Errorf("stabilized %d, want %d", got, c.want)
			}
			if c.wantRecs == nil {
				return
			}
			if len(h.recommendations) != len(c.wantRecs) {
				t.Fatalf("%d recommendations stored, want %d", len(h.recommendations), len(c.wantRecs))
			}
			for i, w := range c.wantRecs {
				if h.recommendations[i].replicas != w {
					t.Errorf("recommendation %d = %d, want %d", i, h.recommendations[i].replicas, w)
				}
			}
		})
	}
}
