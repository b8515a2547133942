// Package policy is inferscale's scaling decision: a pure function of the
// fleet view, the persisted state, the configuration and the time. Every
// rule reports its value, threshold and proposal, and every branch says
// why, in the style of Kubernetes' replica calculator and Knative's decider.
//
// Signals: queue pressure, KV-cache headroom, the latency SLO and projected
// demand at now + startup time (startup compensation) can each move
// replicas; GPU utilisation only corroborates. One signal over threshold
// gives a moderate step, two or more a decisive one. Scale-down needs every
// signal under its low-water mark, complete data, the down-stabilisation
// window and a simulated removal that keeps headroom.
package policy

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/state"
)

// Rule names.
const (
	RuleQueue   = "queue"
	RuleBatch   = "batch"
	RuleKV      = "kv"
	RuleLatency = "latency"
	RuleDemand  = "demand"
	RuleGPU     = "gpu"
)

// Rule is one signal's evaluation.
type Rule struct {
	Name string `json:"name"`
	// Value is the reading; nil when the signal is not available.
	Value     *float64 `json:"value,omitempty"`
	Threshold float64  `json:"threshold"`
	// Over is true when Value is above Threshold (outside the tolerance band).
	Over bool `json:"over"`
	// Proposal is the replica count this rule alone asks for (0: none).
	Proposal int `json:"proposal,omitempty"`
	// Low is true when the reading is under its low-water mark (or absent
	// for an optional signal).
	Low  bool   `json:"low"`
	Note string `json:"note,omitempty"`
}

// Decision is the result of one evaluation.
type Decision struct {
	Target  int `json:"target"`
	Current int `json:"current"`
	// Recommendation is the count before stabilisation, cooldowns and floors;
	// the state keeps it for the stabilisation windows.
	Recommendation int `json:"recommendation"`
	// Need is the reactive need (before floors and windows: the demand
	// model's count when nothing is over threshold), recorded for the
	// predictive floor.
	Need int `json:"need"`
	// Urgent is true when requests are already queueing or missing the SLO,
	// another signal agrees and no pod is starting: the scale-up cooldown
	// does not delay it.
	Urgent          bool       `json:"urgent,omitempty"`
	Signals         int        `json:"signals"`
	Rules           []Rule     `json:"rules"`
	ScheduleFloor   int        `json:"scheduleFloor,omitempty"`
	PredictiveFloor int        `json:"predictiveFloor,omitempty"`
	Reasons         []string   `json:"reasons"`
	Alerts          []string   `json:"alerts,omitempty"`
	Fleet           fleet.View `json:"fleet"`
}

func (d *Decision) because(format string, args ...any) {
	d.Reasons = append(d.Reasons, fmt.Sprintf(format, args...))
}

func (d *Decision) alert(format string, args ...any) {
	d.Alerts = append(d.Alerts, fmt.Sprintf(format, args...))
}

func f64(v float64) *float64 { return &v }

func ceilInt(x float64) int {
	if math.IsNaN(x) || x < 0 {
		return 0
	}
	if x > 1e9 {
		return 1e9
	}
	return int(math.Ceil(x - 1e-9))
}

// Decide evaluates the policy. It reads st but never changes it.
func Decide(v fleet.View, st *state.State, cfg Config, current int, now time.Time) Decision {
	d := Decision{Current: current, Fleet: v}
	base := v.Ready
	if base == 0 {
		base = 1
	}
	tol := cfg.Tolerance
	// Stuck pods are in spec.replicas but will not serve: proposals are
	// compared with what can, and a scale-up keeps them on top.
	avail := max(0, current-v.Stuck)

	// Queue pressure.
	load := v.Waiting
	name := "waiting"
	if cfg.QueueIncludesRunning {
		load += v.Running
		name = "waiting+running"
	}
	q := Rule{Name: RuleQueue, Threshold: cfg.QueueTarget}
	if v.Ready > 0 || load > 0 {
		per := load / float64(base)
		q.Value = f64(per)
		q.Over = per > cfg.QueueTarget*(1+tol)
		q.Low = v.Waiting/float64(base) <= cfg.QueueLowWater
		if q.Over {
			q.Proposal = ceilInt(load / cfg.QueueTarget)
			q.Note = fmt.Sprintf("%s %.3g per ready pod > target %g", name, per, cfg.QueueTarget)
		}
	} else {
		q.Low = true
	}

	// Batch headroom.
	batch := Rule{Name: RuleBatch, Threshold: cfg.BatchTarget, Low: true}
	if cfg.MaxNumSeqs > 0 && v.Ready > 0 {
		fill := v.Running / float64(v.Ready) / cfg.MaxNumSeqs
		batch.Value = f64(fill)
		batch.Over = fill > cfg.BatchTarget*(1+tol)
		batch.Low = fill <= cfg.BatchTarget
		if batch.Over {
			batch.Proposal = ceilInt(float64(v.Ready) * fill / cfg.BatchTarget)
			batch.Note = fmt.Sprintf("running %.3g per ready pod is %.0f%% of maxNumSeqs %g > target %.0f%%",
				v.Running/float64(v.Ready), 100*fill, cfg.MaxNumSeqs, 100*cfg.BatchTarget)
		}
	}

	// KV-cache headroom.
	kv := Rule{Name: RuleKV, Threshold: cfg.KVHigh, Low: true}
	if v.KVMean != nil {
		kv.Value = f64(*v.KVMean)
		kv.Over = *v.KVMean >= cfg.KVHigh
		kv.Low = *v.KVMean < cfg.KVLowWater
		if kv.Over {
			kv.Proposal = ceilInt(float64(base) * *v.KVMean / cfg.KVTarget)
			kv.Note = fmt.Sprintf("KV cache mean %.2f >= %.2f; target %.2f", *v.KVMean, cfg.KVHigh, cfg.KVTarget)
		}
	}

	// Latency SLO: proportional to the worst of TTFT and e2e p95, capped.
	lat := Rule{Name: RuleLatency, Threshold: 1, Low: true}
	enough := v.LatencyRequests >= cfg.LatencyMinRequests
	var ratio float64
	var have bool
	if cfg.TTFTSLO > 0 && v.TTFTP95 != nil && enough {
		ratio, have = *v.TTFTP95/cfg.TTFTSLO.Seconds(), true
		lat.Note = fmt.Sprintf("TTFT p95 %.3gs vs SLO %s", *v.TTFTP95, cfg.TTFTSLO)
	}
	if cfg.E2ESLO > 0 && v.E2EP95 != nil && enough {
		if r := *v.E2EP95 / cfg.E2ESLO.Seconds(); !have || r > ratio {
			ratio = r
			lat.Note = fmt.Sprintf("e2e p95 %.3gs vs SLO %s", *v.E2EP95, cfg.E2ESLO)
		}
		have = true
	}
	if have {
		lat.Value = f64(ratio)
		lat.Over = ratio > 1
		lat.Low = ratio < cfg.LatencyLowFraction
		if lat.Over {
			lat.Proposal = ceilInt(float64(base) * math.Min(ratio, cfg.LatencyMaxFactor))
		}
	}

	// Demand at now + startup, minus capacity already starting (it is in
	// current): the arrival rate projected along its trend over one startup
	// time, plus the waiting backlog to drain within that time, over the
	// per-pod throughput we plan for.
	dem := Rule{Name: RuleDemand, Low: true}
	capRPS := podCapacity(v, cfg)
	needed := -1
	var level, projected float64
	if v.ArrivalRate != nil {
		level = *v.ArrivalRate
		if v.RateFitted != nil && *v.RateFitted > level {
			level = *v.RateFitted
		}
		projected = level
		if v.RateTrend != nil && *v.RateTrend > 0 {
			projected = math.Min(level*cfg.MaxGrowth, level+*v.RateTrend*v.StartupSeconds)
		}
		projected += v.Waiting / math.Max(v.StartupSeconds, 1)
	}
	if cfg.StartupCompensation && capRPS > 0 && v.ArrivalRate != nil {
		perPod := capRPS * cfg.CapacityTarget
		needed = ceilInt(projected / perPod)
		dem.Value = f64(projected)
		dem.Threshold = float64(avail) * perPod
		dem.Over = needed > avail && float64(needed) > float64(avail)*(1+tol)
		dem.Low = needed < avail
		dem.Note = fmt.Sprintf("%.3g req/s expected at now+%.0fs (now %.3g, trend %+.3g/s, backlog %.0f) needs %d pods at %.3g req/s each",
			projected, v.StartupSeconds, level, deref(v.RateTrend), v.Waiting, needed, perPod)
		if dem.Over {
			dem.Proposal = needed
		}
	}

	// GPU headroom: corroboration only.
	gpu := Rule{Name: RuleGPU, Threshold: cfg.GPUTarget, Low: true}
	if v.GPUUtilEWMA != nil {
		gpu.Value = f64(*v.GPUUtilEWMA)
		gpu.Over = *v.GPUUtilEWMA > cfg.GPUTarget*(1+tol)
		gpu.Low = *v.GPUUtilEWMA < cfg.GPULowWater
		if gpu.Over {
			gpu.Proposal = ceilInt(float64(base) * *v.GPUUtilEWMA / cfg.GPUTarget)
		}
	}
	// TTFT is mostly queueing: a latency breach with nothing waiting and
	// batch and KV within target is not load-driven (long prompts, a slow
	// model) and more replicas would not fix it.
	if cfg.LatencyNeedsLoad && lat.Over && q.Low && !batch.Over && !kv.Over {
		// Nor does it block a scale-down: removals are judged on the
		// queue, batch, KV and demand headroom.
		lat.Over, lat.Proposal, lat.Low = false, 0, true
		lat.Note += " with nothing waiting: not load-driven"
		d.alert("latency above the SLO (%s) while nothing queues and batch/KV have headroom: more replicas would not help", lat.Note)
	}
	d.Rules = []Rule{q, batch, kv, lat, dem, gpu}

	rec := current
	primary := 0
	maxProp := 0
	for _, r := range d.Rules[:5] {
		if r.Over {
			primary++
			maxProp = max(maxProp, r.Proposal)
			d.because("%s over threshold: %s -> proposes %d", r.Name, r.Note, r.Proposal)
		}
	}
	d.Signals = primary
	if gpu.Over {
		if primary > 0 {
			d.Signals++
			d.because("gpu corroborates: utilisation EWMA %.2f > target %.2f (its own proposal %d is not used)", *gpu.Value, cfg.GPUTarget, gpu.Proposal)
		} else {
			d.because("gpu utilisation EWMA %.2f > target %.2f but nothing corroborates it: GPU alone never moves replicas", *gpu.Value, cfg.GPUTarget)
		}
	}

	if v.Stuck > 0 {
		d.alert("%d pod(s) not ready after %s: not counted as capacity", v.Stuck, cfg.StuckAfter)
	}
	switch {
	case d.Signals == 0:
		// Removals must also fit the peak rate of the recent past (bursts).
		if needed >= 0 && v.RatePeak != nil {
			if peakNeed := ceilInt(*v.RatePeak / (capRPS * cfg.CapacityTarget)); peakNeed > needed {
				needed = peakNeed
				d.because("peak arrival rate %.3g req/s within %s needs %d pods", *v.RatePeak, cfg.PeakWindow, peakNeed)
			}
		}
		rec = scaleDownRecommendation(&d, v, cfg, current, needed, capRPS)
	case maxProp <= avail:
		d.because("proposals (max %d) are covered by the %d replicas already asked for (%d starting)", maxProp, avail, v.Starting)
	case d.Signals == 1:
		step := max(1, ceilInt(float64(avail)*cfg.ModerateFactor)-avail)
		rec = min(maxProp, avail+step) + (current - avail)
		d.because("one signal: moderate step to %d (at most +%d)", rec, step)
	default:
		limit := max(cfg.DecisiveMaxPods, ceilInt(float64(avail)*cfg.DecisiveMaxFraction))
		rec = min(maxProp, avail+limit) + (current - avail)
		d.because("%d signals agree: decisive step to %d (largest proposal %d, cap +%d)", d.Signals, rec, maxProp, limit)
	}
	if current == 0 && rec == 0 && (v.Waiting > 0 || (v.ArrivalRate != nil && *v.ArrivalRate > 0)) {
		rec = 1
		d.because("requests are waiting with no replica: scale from zero")
	}

	// P99 above 2x baseline with nothing else wrong: alert, not scale (seed 000 rule C).
	if d.Signals == 0 && cfg.P99Baseline > 0 && v.TTFTP99 != nil && enough && *v.TTFTP99 > 2*cfg.P99Baseline.Seconds() {
		d.alert("TTFT p99 %.3gs exceeds 2x baseline %s with no other signal: investigate, not scaling for it", *v.TTFTP99, cfg.P99Baseline)
	}
	d.Recommendation = rec
	d.Need = rec
	if d.Signals == 0 && needed >= 0 && needed < rec {
		// Holding more than the demand needs (windows, cooldowns) is not a
		// need the predictive floor should remember.
		d.Need = needed
	}
	// Pods still starting are the previous step's effect on its way:
	// waiting for them is what the cooldown is for.
	d.Urgent = cfg.UrgentBypassesCooldown && d.Signals >= 2 && (q.Over || lat.Over) && v.Starting == 0
	target := stabilise(&d, st, cfg, current, rec, now)

	// Floors.
	for _, f := range cfg.ScheduleFloors {
		if f.Active(now) && f.Replicas > d.ScheduleFloor {
			d.ScheduleFloor = f.Replicas
		}
	}
	if d.ScheduleFloor > target {
		d.because("schedule floor %d raises the target from %d", d.ScheduleFloor, target)
		target = d.ScheduleFloor
	}
	if cfg.PredictiveFloor {
		d.PredictiveFloor = predictiveFloor(st, cfg, now.Add(time.Duration(v.StartupSeconds*float64(time.Second))))
		if d.PredictiveFloor > target {
			d.because("predictive floor %d (same hour on previous days) raises the target from %d", d.PredictiveFloor, target)
			target = d.PredictiveFloor
		}
	}

	// Bounds.
	if target > cfg.MaxReplicas {
		if rec > cfg.MaxReplicas {
			d.alert("maxReplicas %d blocks a needed scale-up to %d", cfg.MaxReplicas, rec)
		}
		d.because("clamped to maxReplicas %d", cfg.MaxReplicas)
		target = cfg.MaxReplicas
	}
	if target < cfg.MinReplicas {
		d.because("raised to minReplicas %d", cfg.MinReplicas)
		target = cfg.MinReplicas
	}
	d.Target = target
	if target == current && len(d.Reasons) == 0 {
		d.because("hold: no signal over threshold and scale-down not warranted")
	}
	return d
}

// unknownCapacityStep caps the growth of the load per pod that one
// scale-down may cause while the per-pod capacity is unknown.
const unknownCapacityStep = 1.25

// scaleDownRecommendation returns current minus the pods that can go while
// keeping headroom, or current with the reason it may not.
func scaleDownRecommendation(d *Decision, v fleet.View, cfg Config, current, needed int, capRPS float64) int {
	floor := max(cfg.MinReplicas, 1)
	if current <= floor {
		d.because("no signal over threshold; at the minimum (%d)", floor)
		return current
	}
	if v.Missing > 0 {
		d.because("no scale-down: %d pod(s) with missing, failed or stale data %v", v.Missing, v.MissingNames)
		return current
	}
	if v.Starting > 0 {
		d.because("no scale-down: %d pod(s) still starting", v.Starting)
		return current
	}
	if v.Ready == 0 {
		d.because("no scale-down: no ready pod reports")
		return current
	}
	// GPU duty cycle is near 1 whenever a batch runs, so it gates
	// scale-down only when it is the sole utilisation evidence.
	haveCapacityModel := v.KVMean != nil || capRPS > 0 || cfg.MaxNumSeqs > 0 || cfg.QueueIncludesRunning
	var high []string
	for _, r := range d.Rules {
		if r.Name == RuleGPU && haveCapacityModel {
			continue
		}
		if !r.Low {
			high = append(high, r.Name)
		}
	}
	if len(high) > 0 {
		d.because("hold: no signal over threshold, but %v not under the low-water mark", high)
		return current
	}
	// Simulated removal (llm-d WVA): the largest k whose removal keeps every
	// signal at or under its target on the remaining pods.
	maxK := max(1, int(math.Floor(float64(current)*cfg.MaxScaleDownFraction)))
	if !haveCapacityModel {
		maxK = 1
	}
	if capRPS <= 0 {
		// No per-pod capacity known yet: running requests and KV grow
		// much faster than the load per pod near saturation, so their
		// projection cannot tell how far the pods can be packed. One
		// step raises the load per pod by at most unknownCapacityStep.
		maxK = min(maxK, max(1, int(math.Floor(float64(v.Ready)*(1-1/unknownCapacityStep)))))
	}
	k := 0
	for try := 1; try <= maxK && current-try >= floor; try++ {
		n := float64(v.Ready - try)
		if n < 1 {
			break
		}
		ok := true
		if v.KVMean != nil && *v.KVMean*float64(v.Ready)/n > cfg.KVTarget {
			ok = false
		}
		if !haveCapacityModel && v.GPUUtilEWMA != nil && *v.GPUUtilEWMA*float64(v.Ready)/n > cfg.GPUTarget {
			ok = false
		}
		if cfg.QueueIncludesRunning && (v.Waiting+v.Running)/n > cfg.QueueTarget {
			ok = false
		}
		// Running requests grow faster than the load per pod (a fuller
		// batch runs each step slower), so the batch after removal is
		// projected quadratically.
		if cfg.MaxNumSeqs > 0 {
			grow := float64(v.Ready) / n
			if v.Running/float64(v.Ready)*grow*grow > cfg.MaxNumSeqs*cfg.BatchTarget {
				ok = false
			}
		}
		if needed >= 0 && current-try-v.Stuck < needed {
			ok = false
		}
		if !ok {
			break
		}
		k = try
	}
	if k == 0 {
		d.because("hold: signals are low, but removing a pod would leave too little headroom")
		return current
	}
	d.because("every signal under its low-water mark; simulated removal of %d pod(s) keeps headroom", k)
	return current - k
}

// stabilise applies the stabilisation windows and cooldowns to rec.
func stabilise(d *Decision, st *state.State, cfg Config, current, rec int, now time.Time) int {
	// Cooldowns run from scales that happened (the observed count
	// changed), not from recommendations CPA may have clamped or held.
	lastUp, lastDown := st.ScaleTimes(current)
	switch {
	case rec > current:
		if cfg.UpStabilization > 0 {
			lowest := rec
			for _, r := range st.Recommendations {
				if now.Sub(r.At) <= cfg.UpStabilization && r.Replicas < lowest {
					lowest = r.Replicas
				}
			}
			if lowest < rec {
				d.because("up-stabilisation window %s: lowest recent recommendation %d", cfg.UpStabilization, lowest)
				rec = max(lowest, current)
			}
		}
		if lastUp != nil && now.Sub(*lastUp) < cfg.ScaleUpCooldown && now.Sub(*lastUp) >= 0 {
			if d.Urgent {
				d.because("urgent (queue or SLO breach, corroborated): the scale-up cooldown %s does not apply", cfg.ScaleUpCooldown)
				return rec
			}
			if d.Signals > st.LastScaleUpSignals && d.Signals >= 2 {
				d.because("escalation: %d signals now against %d at the last scale-up, the cooldown %s does not hold it",
					d.Signals, st.LastScaleUpSignals, cfg.ScaleUpCooldown)
				return rec
			}
			d.because("scale-up to %d held: cooldown %s since the last scale-up %.0fs ago", rec, cfg.ScaleUpCooldown, now.Sub(*lastUp).Seconds())
			return current
		}
		return rec
	case rec < current:
		if cfg.DownStabilization > 0 {
			covered := false
			highest := rec
			for _, r := range st.Recommendations {
				age := now.Sub(r.At)
				if age >= cfg.DownStabilization {
					covered = true
				}
				if age <= cfg.DownStabilization && age >= 0 && r.Replicas > highest {
					highest = r.Replicas
				}
			}
			if !covered {
				d.because("no scale-down yet: less than the down-stabilisation window (%s) of history", cfg.DownStabilization)
				return current
			}
			if highest > rec {
				rec = min(highest, current)
				if rec == current {
					d.because("no scale-down: a recommendation of %d within the down-stabilisation window %s", highest, cfg.DownStabilization)
					return current
				}
				d.because("down-stabilisation window %s: highest recent recommendation %d", cfg.DownStabilization, highest)
			}
		}
		if lastDown != nil && now.Sub(*lastDown) < cfg.ScaleDownCooldown && now.Sub(*lastDown) >= 0 {
			d.because("scale-down to %d held: cooldown %s since the last scale-down %.0fs ago", rec, cfg.ScaleDownCooldown, now.Sub(*lastDown).Seconds())
			return current
		}
		return rec
	}
	return rec
}

// predictiveFloor is PredictiveFraction x the lower median of the peaks of
// the same clock hour on the previous PredictiveDays days.
func predictiveFloor(st *state.State, cfg Config, at time.Time) int {
	var peaks []int
	for day := 1; day <= cfg.PredictiveDays; day++ {
		if p, ok := st.PeakAt(at.Add(-time.Duration(day) * 24 * time.Hour)); ok {
			peaks = append(peaks, p)
		}
	}
	if len(peaks) == 0 {
		return 0
	}
	sort.Ints(peaks)
	return int(math.Floor(float64(peaks[(len(peaks)-1)/2]) * cfg.PredictiveFraction))
}

// podCapacity is the per-pod throughput to plan with: the learned one,
// else the configured one (0: unknown).
func podCapacity(v fleet.View, cfg Config) float64 {
	if v.PodCapacityRPS != nil && *v.PodCapacityRPS > 0 {
		return *v.PodCapacityRPS
	}
	return cfg.PodCapacityRPS
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
