package baseline

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// MetricSource is the HPA metric type and target type of one metric.
type MetricSource int

// The replica-calculator branches of the Kubernetes HPA.
const (
	// PodsAverageValue: type Pods, target AverageValue (per-pod average).
	PodsAverageValue MetricSource = iota
	// ResourceUtilization: type Resource, target Utilization (percent of request).
	ResourceUtilization
	// ExternalValue: type External, target Value (total, × ready pods).
	ExternalValue
	// ExternalAverageValue: type External, target AverageValue (ceil(total/target)); KEDA's default.
	ExternalAverageValue
)

// HPAMetric is one entry of spec.metrics.
type HPAMetric struct {
	Name   string
	Source MetricSource
	// Target is the AverageValue (Pods, External AverageValue), the Value
	// (External Value) or the averageUtilization in percent (Resource).
	Target float64
	// PodValue reads a pod's usage (Pods, Resource); ok=false makes the pod
	// missing. It is only called for pods whose metrics were delivered.
	PodValue func(p scaler.PodView) (float64, bool)
	// Request is each pod's resource request for Resource metrics
	// (utilisation = usage/request); 0 means 1.
	Request float64
	// External returns the external series' value (External metrics).
	External func(obs scaler.Observation) (float64, error)
}

// PolicyType is an HPA scaling policy type.
type PolicyType int

// Scaling policy types.
const (
	PodsPolicy PolicyType = iota
	PercentPolicy
)

// SelectPolicy chooses among scaling policies.
type SelectPolicy int

// selectPolicy values.
const (
	SelectMax SelectPolicy = iota
	SelectMin
	SelectDisabled
)

// ScalingPolicy is one behavior policy: at most Value pods or percent per Period.
type ScalingPolicy struct {
	Type   PolicyType
	Value  int
	Period time.Duration
}

// ScalingRules is behavior.scaleUp or behavior.scaleDown.
type ScalingRules struct {
	StabilizationWindow time.Duration
	Select              SelectPolicy
	Policies            []ScalingPolicy
	// Tolerance overrides the controller's tolerance for this direction
	// (KEP-4951); nil keeps the controller flag.
	Tolerance *float64
}

// Behavior is spec.behavior.
type Behavior struct {
	ScaleUp, ScaleDown ScalingRules
}

// DefaultBehavior is what the API server fills in when spec.behavior is
// set but empty (autoscaling/v2 defaults.go), with the scale-down window
// taken from the controller flag (300 s).
func DefaultBehavior() *Behavior {
	return &Behavior{
		ScaleUp: ScalingRules{Select: SelectMax, Policies: []ScalingPolicy{
			{Type: PodsPolicy, Value: 4, Period: 15 * time.Second},
			{Type: PercentPolicy, Value: 100, Period: 15 * time.Second},
		}},
		ScaleDown: ScalingRules{StabilizationWindow: 300 * time.Second, Select: SelectMax, Policies: []ScalingPolicy{
			{Type: PercentPolicy, Value: 100, Period: 15 * time.Second},
		}},
	}
}

// Seed002Behavior is the behavior block of seed 002: up with a 30 s window
// and max(4 pods, 50%) per 60 s; down with a 600 s window and 1 pod per
// 120 s, selectPolicy Min.
func Seed002Behavior() *Behavior {
	return &Behavior{
		ScaleUp: ScalingRules{StabilizationWindow: 30 * time.Second, Select: SelectMax, Policies: []ScalingPolicy{
			{Type: PodsPolicy, Value: 4, Period: 60 * time.Second},
			{Type: PercentPolicy, Value: 50, Period: 60 * time.Second},
		}},
		ScaleDown: ScalingRules{StabilizationWindow: 600 * time.Second, Select: SelectMin, Policies: []ScalingPolicy{
			{Type: PodsPolicy, Value: 1, Period: 120 * time.Second},
		}},
	}
}

// HPAConfig is one HorizontalPodAutoscaler plus the controller flags that matter.
type HPAConfig struct {
	Name    string
	Metrics []HPAMetric
	// Behavior nil selects the legacy normalisation path.
	Behavior *Behavior
	// Tolerance is --horizontal-pod-autoscaler-tolerance (0.1).
	Tolerance float64
	// DownscaleStabilization is the controller flag used by the legacy path (300 s).
	DownscaleStabilization time.Duration
	// SyncPeriod is --horizontal-pod-autoscaler-sync-period (15 s).
	SyncPeriod time.Duration
	// ExternalValueBySpec multiplies External Value ratios by
	// spec.replicas instead of ready pods: the assumption of llm-d's
	// overshoot write-up, kept to reproduce it (upstream uses ready pods).
	ExternalValueBySpec bool
}

type timedRecommendation struct {
	replicas int
	at       time.Time
}

// scaleEvent is timestampedScaleEvent: a replica change, when it happened,
// and whether it has left the longest policy period of its direction
// (then its slot may be reused by the next event).
type scaleEvent struct {
	change   int
	at       time.Time
	outdated bool
}

// HPA is the Kubernetes horizontal-pod-autoscaler controller for one HPA
// object: the replica calculator of replica_calculator.go and the
// normalisation of horizontal.go, with its recommendations and scale
// events kept between syncs.
type HPA struct {
	cfg             HPAConfig
	recommendations []timedRecommendation
	upEvents        []scaleEvent
	downEvents      []scaleEvent
}

// NewHPA checks the configuration and returns a controller with no history.
func NewHPA(cfg HPAConfig) (*HPA, error) {
	if len(cfg.Metrics) == 0 {
		return nil, errors.New("hpa: no metrics")
	}
	if cfg.Tolerance < 0 || cfg.Tolerance >= 1 {
		return nil, fmt.Errorf("hpa %s: tolerance %g must be in [0, 1)", cfg.Name, cfg.Tolerance)
	}
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = 15 * time.Second
	}
	for i, m := range cfg.Metrics {
		if !(m.Target > 0) {
			return nil, fmt.Errorf("hpa %s: metric %d (%s): target %g must be positive", cfg.Name, i, m.Name, m.Target)
		}
		switch m.Source {
		case PodsAverageValue, ResourceUtilization:
			if m.PodValue == nil {
				return nil, fmt.Errorf("hpa %s: metric %s: pod metric without a reader", cfg.Name, m.Name)
			}
		case ExternalValue, ExternalAverageValue:
			if m.External == nil {
				return nil, fmt.Errorf("hpa %s: metric %s: external metric without a source", cfg.Name, m.Name)
			}
		default:
			return nil, fmt.Errorf("hpa %s: metric %s: unknown source %d", cfg.Name, m.Name, m.Source)
		}
	}
	if b := cfg.Behavior; b != nil {
		for dir, r := range map[string]ScalingRules{"scaleUp": b.ScaleUp, "scaleDown": b.ScaleDown} {
			if r.StabilizationWindow < 0 {
				return nil, fmt.Errorf("hpa %s: %s: negative stabilization window", cfg.Name, dir)
			}
			if r.Select != SelectDisabled && len(r.Policies) == 0 {
				return nil, fmt.Errorf("hpa %s: %s: no policies", cfg.Name, dir)
			}
			for _, p := range r.Policies {
				if p.Value <= 0 || p.Period <= 0 {
					return nil, fmt.Errorf("hpa %s: %s: policy value and period must be positive", cfg.Name, dir)
				}
			}
			if r.Tolerance != nil && (*r.Tolerance < 0 || *r.Tolerance >= 1) {
				return nil, fmt.Errorf("hpa %s: %s: tolerance %g must be in [0, 1)", cfg.Name, dir, *r.Tolerance)
			}
		}
	}
	return &HPA{cfg: cfg}, nil
}

// Name implements scaler.Autoscaler.
func (h *HPA) Name() string { return h.cfg.Name }

// Period implements scaler.Autoscaler.
func (h *HPA) Period() time.Duration { return h.cfg.SyncPeriod }

// tolerances is the effective tolerance band.
type tolerances struct{ down, up float64 }

func (t tolerances) isWithin(r float64) bool { return (1-t.down) <= r && r <= (1+t.up) }

func (h *HPA) tolerances() tolerances {
	t := tolerances{h.cfg.Tolerance, h.cfg.Tolerance}
	if b := h.cfg.Behavior; b != nil {
		if b.ScaleDown.Tolerance != nil {
			t.down = *b.ScaleDown.Tolerance
		}
		if b.ScaleUp.Tolerance != nil {
			t.up = *b.ScaleUp.Tolerance
		}
	}
	return t
}

// Recommend runs one HPA sync (reconcileAutoscaler).
func (h *HPA) Recommend(obs scaler.Observation) (int, error) {
	cur := obs.SpecReplicas
	h.recordInitialRecommendation(obs.Now, cur)
	var desired int
	switch {
	case cur == 0 && obs.MinReplicas != 0:
		return 0, nil // scaling is disabled
	case cur > obs.MaxReplicas:
		desired = obs.MaxReplicas
	case cur < obs.MinReplicas:
		desired = obs.MinReplicas
	default:
		proposal, err := h.replicasForMetrics(obs)
		if err != nil {
			return cur, err
		}
		if h.cfg.Behavior == nil {
			desired = h.normalizeLegacy(obs, proposal)
		} else {
			desired = h.normalizeWithBehaviors(obs, proposal)
		}
	}
	if desired != cur && h.cfg.Behavior != nil {
		h.storeScaleEvent(obs.Now, cur, desired)
	}
	return desired, nil
}

// recordInitialRecommendation seeds an empty recommendation history with
// the current scale, as the controller does on its first sync of an HPA
// (horizontal.go recordInitialRecommendation): the scale the HPA found
// counts as a recommendation, so the first down-window holds at least it.
func (h *HPA) recordInitialRecommendation(now time.Time, cur int) {
	if h.recommendations == nil {
		h.recommendations = []timedRecommendation{{cur, now}}
	}
}

// replicasForMetrics is computeReplicasForMetrics: the max over metrics,
// and an error rather than a scale-down when some metrics are invalid.
func (h *HPA) replicasForMetrics(obs scaler.Observation) (int, error) {
	replicas, invalid := 0, 0
	var firstErr error
	for _, m := range h.cfg.Metrics {
		r, err := h.replicasForMetric(obs, m)
		if err != nil {
			invalid++
			if firstErr == nil {
				firstErr = fmt.Errorf("metric %s: %w", m.Name, err)
			}
			continue
		}
		if replicas == 0 || r > replicas {
			replicas = r
		}
	}
	if invalid >= len(h.cfg.Metrics) || (invalid > 0 && replicas < obs.SpecReplicas) {
		return 0, fmt.Errorf("hpa %s: invalid metrics (%d of %d), first: %w", h.cfg.Name, invalid, len(h.cfg.Metrics), firstErr)
	}
	return replicas, nil
}

func (h *HPA) replicasForMetric(obs scaler.Observation, m HPAMetric) (int, error) {
	cur := obs.SpecReplicas
	tol := h.tolerances()
	switch m.Source {
	case PodsAverageValue, ResourceUtilization:
		return podMetricReplicas(obs, m, tol)
	case ExternalValue:
		v, err := m.External(obs)
		if err != nil {
			return 0, err
		}
		ratio := v / m.Target
		if cur == 0 {
			return int(math.Ceil(ratio)), nil
		}
		if tol.isWithin(ratio) {
			return cur, nil
		}
		mult := obs.Ready()
		if h.cfg.ExternalValueBySpec {
			mult = cur
		}
		return int(math.Ceil(ratio * float64(mult))), nil
	case ExternalAverageValue:
		v, err := m.External(obs)
		if err != nil {
			return 0, err
		}
		status := activeReplicas(obs)
		ratio := v / (m.Target * float64(status))
		if tol.isWithin(ratio) {
			return status, nil
		}
		return int(math.Ceil(v / m.Target)), nil
	}
	return 0, fmt.Errorf("unknown metric source %d", m.Source)
}

// podMetricReplicas is GetResourceReplicas / GetMetricReplicas with
// groupPods: Draining pods are ignored; Pending pods are unready; pods
// without a sample (Starting pods among them: no /metrics yet) are
// missing; for Resource metrics, pods that report a sample can still be
// unready under the CPU-initialisation rules (cpuUnready); the rest are
// ready.
func podMetricReplicas(obs scaler.Observation, m HPAMetric, tol tolerances) (int, error) {
	cur := obs.SpecReplicas
	request := m.Request
	if request <= 0 {
		request = 1
	}
	metrics := map[string]float64{}
	var unready, missing []string
	for _, p := range obs.Pods {
		switch p.Phase {
		case scaler.Draining:
			continue
		case scaler.Pending:
			unready = append(unready, p.Name)
			continue
		}
		v, ok := 0.0, false
		if usable(p) {
			v, ok = m.PodValue(p)
		}
		if !ok {
			missing = append(missing, p.Name)
			continue
		}
		if m.Source == ResourceUtilization && cpuUnready(p, obs.Now) {
			unready = append(unready, p.Name)
			continue
		}
		metrics[p.Name] = v
	}
	if len(metrics) == 0 {
		return 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	readyCount := len(metrics)
	ratio := usageRatio(metrics, m, request)
	scaleUpWithUnready := len(unready) > 0 && ratio > 1
	if !scaleUpWithUnready && len(missing) == 0 {
		if tol.isWithin(ratio) {
			return cur, nil
		}
		return int(math.Ceil(ratio * float64(readyCount))), nil
	}
	if len(missing) > 0 {
		switch {
		case ratio < 1:
			fill := m.Target // Pods: exactly the target
			if m.Source == ResourceUtilization {
				fill = math.Max(100, m.Target) / 100 * request
			}
			for _, n := range missing {
				metrics[n] = fill
			}
		case ratio > 1:
			for _, n := range missing {
				metrics[n] = 0
			}
		}
	}
	if scaleUpWithUnready {
		for _, n := range unready {
			metrics[n] = 0
		}
	}
	newRatio := usageRatio(metrics, m, request)
	if tol.isWithin(newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1) {
		return cur, nil
	}
	n := int(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1 && n > cur) || (newRatio > 1 && n < cur) {
		return cur, nil
	}
	return n, nil
}

// Controller defaults behind the CPU sample sanitisation of groupPods.
const (
	cpuInitializationPeriod = 5 * time.Minute  // --horizontal-pod-autoscaler-cpu-initialization-period
	initialReadinessDelay   = 30 * time.Second // --horizontal-pod-autoscaler-initial-readiness-delay
	resourceMetricWindow    = 30 * time.Second // metrics-server sample window
)

// cpuUnready is groupPods' test for Resource metrics. Within the
// initialisation period after start (CreatedAt here) a pod is unready
// when not Ready or when its sample does not cover one full window since
// it became Ready; afterwards only when it is not Ready and never became
// Ready within the initial-readiness delay.
func cpuUnready(p scaler.PodView, now time.Time) bool {
	notReady := p.Phase != scaler.Ready || p.ReadyAt.IsZero()
	if p.CreatedAt.Add(cpuInitializationPeriod).After(now) {
		return notReady || p.Metrics.ScrapeTime.Before(p.ReadyAt.Add(resourceMetricWindow))
	}
	transition := p.ReadyAt
	if transition.IsZero() {
		transition = p.CreatedAt
	}
	return notReady && p.CreatedAt.Add(initialReadinessDelay).After(transition)
}

// usageRatio is GetMetricUsageRatio for Pods metrics and
// GetResourceUtilizationRatio (with its integer-percent truncation) for
// Resource metrics.
func usageRatio(metrics map[string]float64, m HPAMetric, request float64) float64 {
	sum := 0.0
	for _, v := range metrics {
		sum += v
	}
	if m.Source == ResourceUtilization {
		util := math.Floor(sum * 100 / (request * float64(len(metrics))))
		return util / m.Target
	}
	return sum / float64(len(metrics)) / m.Target
}

// normalizeLegacy is normalizeDesiredReplicas (spec.behavior unset):
// max over the downscale-stabilisation window, then clamp to
// [min, min(max, max(2·cur, 4))].
func (h *HPA) normalizeLegacy(obs scaler.Observation, proposal int) int {
	stabilized := h.stabilizeLegacy(obs.Now, proposal)
	upLimit := max(2*obs.SpecReplicas, 4)
	maxAllowed := min(obs.MaxReplicas, upLimit)
	switch {
	case stabilized < obs.MinReplicas:
		return obs.MinReplicas
	case stabilized > maxAllowed:
		return maxAllowed
	}
	return stabilized
}

func (h *HPA) stabilizeLegacy(now time.Time, proposal int) int {
	cutoff := now.Add(-h.cfg.DownscaleStabilization)
	rec, old := proposal, -1
	for i, r := range h.recommendations {
		if r.at.Before(cutoff) {
			old = i
			continue
		}
		rec = max(rec, r.replicas)
	}
	h.record(old, timedRecommendation{proposal, now})
	return rec
}

func (h *HPA) record(old int, r timedRecommendation) {
	if old >= 0 {
		h.recommendations[old] = r
		return
	}
	h.recommendations = append(h.recommendations, r)
}

// normalizeWithBehaviors is normalizeDesiredReplicasWithBehaviors:
// stabilise over both windows, then rate-limit against the scale events of
// each policy's period (up and down events netted).
func (h *HPA) normalizeWithBehaviors(obs scaler.Observation, proposal int) int {
	rec := h.stabilizeWithBehaviors(obs.Now, obs.SpecReplicas, proposal)
	return h.limitRate(obs.Now, obs.SpecReplicas, rec, obs.MinReplicas, obs.MaxReplicas)
}

// stabilizeWithBehaviors is stabilizeRecommendationWithBehaviors: the
// current scale brought within [min of the scale-up window, max of the
// scale-down window] (the proposal included), and the proposal recorded in
// place of one recommendation older than both windows.
func (h *HPA) stabilizeWithBehaviors(now time.Time, cur, proposal int) int {
	b := h.cfg.Behavior
	upCut := now.Add(-b.ScaleUp.StabilizationWindow)
	downCut := now.Add(-b.ScaleDown.StabilizationWindow)
	upRec, downRec, old := proposal, proposal, -1
	for i, r := range h.recommendations {
		if r.at.After(upCut) {
			upRec = min(upRec, r.replicas)
		}
		if r.at.After(downCut) {
			downRec = max(downRec, r.replicas)
		}
		if r.at.Before(upCut) && r.at.Before(downCut) {
			old = i
		}
	}
	rec := max(cur, upRec)
	rec = min(rec, downRec)
	h.record(old, timedRecommendation{proposal, now})
	return rec
}

// limitRate is convertDesiredReplicasWithBehaviorRate: a scale-up is held
// to the scale-up policies (never below cur) and maxReplicas, a scale-down
// to the scale-down policies (never above cur) and minReplicas.
func (h *HPA) limitRate(now time.Time, cur, desired, minR, maxR int) int {
	b := h.cfg.Behavior
	switch {
	case desired > cur:
		limit := max(h.scaleLimit(now, cur, b.ScaleUp, true), cur)
		return min(desired, maxR, limit)
	case desired < cur:
		limit := min(h.scaleLimit(now, cur, b.ScaleDown, false), cur)
		return max(desired, minR, limit)
	}
	return desired
}

// scaleLimit is calculateScaleUpLimitWithScalingRules /
// calculateScaleDownLimitWithBehaviors.
func (h *HPA) scaleLimit(now time.Time, cur int, r ScalingRules, up bool) int {
	if r.Select == SelectDisabled {
		return cur
	}
	// For scale-up Max picks the largest proposal; for scale-down Max (the
	// biggest change) picks the smallest.
	pickLarger := (r.Select == SelectMax) == up
	result := 0
	for i, p := range r.Policies {
		added := changeWithin(h.upEvents, now, p.Period)
		deleted := changeWithin(h.downEvents, now, p.Period)
		start := cur - added + deleted
		var prop int
		switch {
		case up && p.Type == PodsPolicy:
			prop = start + p.Value
		case up:
			prop = int(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		case p.Type == PodsPolicy:
			prop = start - p.Value
		default:
			prop = int(float64(start) * (1 - float64(p.Value)/100))
		}
		if i == 0 || (pickLarger && prop > result) || (!pickLarger && prop < result) {
			result = prop
		}
	}
	return result
}

func changeWithin(events []scaleEvent, now time.Time, period time.Duration) int {
	cutoff := now.Add(-period)
	n := 0
	for _, e := range events {
		if e.at.After(cutoff) {
			n += e.change
		}
	}
	return n
}

// storeScaleEvent records a scale event (horizontal.go storeScaleEvent):
// events older than the longest policy period of the direction are marked
// outdated (markScaleEventsOutdated), and the last outdated one is replaced
// by the new event; with none outdated the event is appended.
func (h *HPA) storeScaleEvent(now time.Time, prev, next int) {
	b := h.cfg.Behavior
	if next > prev {
		h.upEvents = storeEvent(h.upEvents, now, longestPeriod(b.ScaleUp), next-prev)
	} else {
		h.downEvents = storeEvent(h.downEvents, now, longestPeriod(b.ScaleDown), prev-next)
	}
}

func storeEvent(events []scaleEvent, now time.Time, longest time.Duration, change int) []scaleEvent {
	cutoff := now.Add(-longest)
	reuse := -1
	for i := range events {
		if events[i].at.Before(cutoff) {
			events[i].outdated = true
		}
		if events[i].outdated {
			reuse = i
		}
	}
	e := scaleEvent{change: change, at: now}
	if reuse >= 0 {
		events[reuse] = e
		return events
	}
	return append(events, e)
}

func longestPeriod(r ScalingRules) time.Duration {
	longest := time.Duration(0)
	for _, p := range r.Policies {
		longest = max(longest, p.Period)
	}
	return longest
}
