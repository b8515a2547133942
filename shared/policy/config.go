package policy

import (
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/sizing"
)

// Config is every knob of the policy. The tags declare each knob once
// (key, default, range, doc); package settings reads them, and
// docs/configuration.md is generated from them. The embedded
// fleet.Options are the aggregation knobs.
type Config struct {
	MinReplicas int `setting:"minReplicas" default:"1" min:"0" max:"100000" cpa:"true" doc:"the fewest replicas evaluate asks for"`
	MaxReplicas int `setting:"maxReplicas" default:"10" min:"1" max:"100000" cpa:"true" doc:"the most replicas evaluate asks for"`

	// Queue pressure: waiting (optionally + running) requests per ready pod.
	QueueTarget          float64 `setting:"queueTarget" default:"3" min:"0.01" max:"1e6" doc:"waiting requests per ready pod above which the queue rule scales up (GKE: start at 3-5; seed 002: 5)"`
	QueueIncludesRunning bool    `setting:"queueIncludesRunning" default:"false" doc:"count running requests in the queue too (a server with no batch limit)"`
	QueueLowWater        float64 `setting:"queueLowWater" default:"0.5" min:"0" max:"1e6" doc:"waiting requests per ready pod under which the queue allows a scale-down"`

	// Batch headroom: running requests per ready pod against the server's
	// concurrency limit (vLLM --max-num-seqs). Latency climbs steeply as a
	// pod's batch fills, well before requests wait.
	MaxNumSeqs  float64 `setting:"maxNumSeqs" default:"256" min:"0" max:"1e6" doc:"the server's running-request limit (vLLM --max-num-seqs); 0 turns the batch rule off"`
	BatchTarget float64 `setting:"batchTarget" default:"0.7" min:"0.05" max:"1" doc:"the batch fill (running / maxNumSeqs) to keep each pod at"`

	// KV-cache headroom.
	KVHigh     float64 `setting:"kvHigh" default:"0.9" min:"0.01" max:"1" doc:"mean KV-cache usage at which the KV rule scales up"`
	KVTarget   float64 `setting:"kvTarget" default:"0.8" min:"0.01" max:"1" doc:"the KV-cache usage a scale-up or a removal aims for"`
	KVLowWater float64 `setting:"kvLowWater" default:"0.5" min:"0" max:"1" doc:"mean KV-cache usage under which KV allows a scale-down"`

	// GPU headroom (corroborates only).
	GPUTarget   float64 `setting:"gpuTarget" default:"0.75" min:"0.01" max:"1" doc:"GPU utilisation (EWMA) above which the GPU corroborates another signal; alone it never scales (seed 004)"`
	GPULowWater float64 `setting:"gpuLowWater" default:"0.2" min:"0" max:"1.0001" doc:"GPU utilisation under which the GPU allows a scale-down when it is the only utilisation evidence (seed 000 rule D)"`

	// Latency SLO.
	TTFTSLO            time.Duration `setting:"ttftSLO" default:"2s" min:"0" max:"1h" doc:"the time-to-first-token p95 objective (0: off)"`
	E2ESLO             time.Duration `setting:"e2eSLO" default:"0" min:"0" max:"24h" doc:"the end-to-end latency p95 objective (0: off; on, it doubles the state size)"`
	Role               string        `setting:"role" default:"unified" enum:"unified,prefill,decode" doc:"which pool of a prefill/decode disaggregated deployment this CR scales (one CR per role, docs/roles.md): unified serves whole requests; prefill streams no tokens, so itlSLO must stay off; decode is judged by its streaming speed, so itlSLO must be set (its ttftSLO then covers the KV transfer and the first step)"`
	ITLSLO             time.Duration `setting:"itlSLO" default:"0" min:"0" max:"10s" doc:"the inter-token latency p95 objective, the streaming speed users see (0: off, the default for unified pools; a decode pool sets it): the per-pod ceiling keeps the modelled step within it and the itl rule reads the inter-token histogram against it (on, the state keeps each pod's inter-token buckets)"`
	LatencyMaxFactor   float64       `setting:"latencyMaxFactor" default:"2" min:"1" max:"100" doc:"the largest factor one latency breach multiplies the ready pods by"`
	LatencyLowFraction float64       `setting:"latencyLowFraction" default:"0.7" min:"0" max:"1" doc:"latency under this fraction of the SLO allows a scale-down"`
	LatencyMinRequests float64       `setting:"latencyMinRequests" default:"5" min:"0" max:"1e9" doc:"finished requests a tick needs for its latency quantiles to count"`
	P99Baseline        time.Duration `setting:"p99Baseline" default:"1s" min:"0" max:"24h" doc:"a TTFT p99 above twice this with nothing else wrong is an alert, not a scale (seed 000 rule C)"`
	LatencyNeedsLoad   bool          `setting:"latencyNeedsLoad" default:"true" doc:"a latency breach with nothing queueing and batch and KV within target does not scale (more replicas would not shorten a prefill)"`

	// Demand and startup compensation.
	StartupCompensation bool    `setting:"startupCompensation" default:"true" doc:"size for the demand projected one startup time ahead, net of the pods already starting"`
	PodCapacityRPS      float64 `setting:"podCapacityRPS" default:"0" min:"0" max:"1e6" doc:"finished requests/s one pod sustains (0: learn it while the fleet is saturated)"`
	MaxGrowth           float64 `setting:"maxGrowth" default:"3" min:"1" max:"100" doc:"cap on the projected demand growth over one startup time"`
	CapacityTarget      float64 `setting:"capacityTarget" default:"0.8" min:"0.05" max:"1" doc:"the fraction of a pod's capacity to plan for"`

	// Corroboration and step sizes.
	ModerateFactor       float64 `setting:"moderateFactor" default:"1.3" min:"1" max:"10" doc:"one signal over threshold: a step of at least +1 and at most this factor"`
	DecisiveMaxPods      int     `setting:"decisiveMaxPods" default:"4" min:"1" max:"100000" doc:"two or more signals: a step capped at max(decisiveMaxPods, decisiveMaxFraction x replicas)"`
	DecisiveMaxFraction  float64 `setting:"decisiveMaxFraction" default:"0.5" min:"0" max:"100" doc:"see decisiveMaxPods"`
	MaxScaleDownFraction float64 `setting:"maxScaleDownFraction" default:"0.5" min:"0" max:"1" doc:"the largest share of the replicas one decision removes"`
	Tolerance            float64 `setting:"tolerance" default:"0.1" min:"0" max:"1" doc:"a reading within this fraction above its target is not over it (HPA's tolerance)"`

	// Stabilisation and cooldowns.
	ScaleUpCooldown time.Duration `setting:"scaleUpCooldown" default:"60s" min:"0" max:"24h" doc:"time after an applied scale-up before the next one (seed 000)"`
	// UrgentBypassesCooldown lets a corroborated queue or SLO breach scale
	// up inside the up-cooldown (default false: seed 000's cooldown holds).
	UrgentBypassesCooldown bool          `setting:"urgentBypassesCooldown" default:"false" doc:"a corroborated queue or SLO breach with nothing starting scales up inside the up-cooldown"`
	ScaleDownCooldown      time.Duration `setting:"scaleDownCooldown" default:"300s" min:"0" max:"24h" doc:"time after an applied scale-down before the next one"`
	UpStabilization        time.Duration `setting:"upStabilization" default:"0" min:"0" max:"1h" doc:"a scale-up goes no higher than the lowest recommendation of this window (HPA's scaleUp window)"`
	DownStabilization      time.Duration `setting:"downStabilization" default:"300s" min:"0" max:"1h" doc:"a scale-down goes no lower than the highest recommendation of this window (HPA's scaleDown window)"`

	// Floors.
	ScheduleFloors     []ScheduleFloor `setting:"scheduleFloors" doc:"cron windows with a minimum replica count: a YAML list of {start, end, replicas, timezone}"`
	PredictiveFloor    bool            `setting:"predictiveFloor" default:"true" doc:"keep predictiveFraction of the same hour's peak need on previous days"`
	PredictiveDays     int             `setting:"predictiveDays" default:"7" min:"1" max:"7" doc:"how many previous days the predictive floor looks at"`
	PredictiveFraction float64         `setting:"predictiveFraction" default:"0.7" min:"0" max:"2" doc:"the share of the median past peak the predictive floor keeps"`
	RatioMin           float64         `setting:"ratioMin" default:"0" min:"0" max:"1000" doc:"the ratio guard (P/D pools, docs/roles.md): keep at least this many replicas per replica the other pool (ratioPeer) asks for, rounded up; a guard under the plan, not the method; 0: off"`

	// Policy v2: the learned service model, the calibrated forecast and
	// the sizing from both (package sizing), drain-aware scale-down.
	ServiceModel        bool          `setting:"serviceModel" default:"true" doc:"size the fleet from the learned service model and a calibrated demand forecast over the startup horizon (policy v2); false keeps v1's demand rule, windows and cooldowns"`
	SLOAttainment       float64       `setting:"sloAttainment" default:"0.99" min:"0.5" max:"0.9999" doc:"the share of feasible requests whose TTFT must meet ttftSLO: the headroom plans for 70 % of the miss budget, and a latency breach adds a pod once the recent requests spent all of it"`
	MetricLag           time.Duration `setting:"metricLag" default:"15s" min:"0" max:"10m" doc:"how old the metrics are when evaluate reads them; part of the horizon H = startup p90 + tickInterval + metricLag"`
	TickInterval        time.Duration `setting:"tickInterval" default:"15s" min:"1s" max:"10m" doc:"CPA's interval between ticks (its interval key, in ms there); part of the horizon"`
	ScaleDownHold       time.Duration `setting:"scaleDownHold" default:"8m" min:"0" max:"1h" doc:"a v2 scale-down goes no lower than the largest need of the last max(H, scaleDownHold), so a burst that just ended does not flap"`
	MinHeadroom         float64       `setting:"minHeadroom" default:"0" min:"0" max:"12" doc:"the least square-root-staffing headroom β the plan keeps (pods = R + β√R for R pods of forecast load) besides the arrivals' margin (the smaller of the window's and the queue's); the workload's own misses raise it"`
	ForecastMiss        float64       `setting:"forecastMiss" default:"0.3" min:"0.001" max:"0.5" doc:"the share of horizons whose demand may exceed the forecast's reported upper bound (adaptive conformal inference holds it there); until ⌈(1−m)/m⌉ of its errors are scored (3 at 0.3; at most the 240 it keeps) the bound stands in at twice the forecast"`
	MaxNumBatchedTokens float64       `setting:"maxNumBatchedTokens" default:"8192" min:"1" max:"1e7" doc:"the server's prefill budget per step (vLLM --max-num-batched-tokens)"`
	Profile             *model.Params `setting:"profile" doc:"the service model's prior as alpha=,beta=,gammaSeq=,gammaKv= (seconds per step, per prompt token, per running sequence, per full KV cache), from a load test or bin/simulate profile (default: Llama-3.1-8B on one H100)"`
	DeletionCost        bool          `setting:"deletionCost" default:"true" doc:"policy v2, active mode: before a scale-down, mark the pods to remove (not ready first, then the idlest) with controller.kubernetes.io/pod-deletion-cost so the ReplicaSet deletes those (needs patch on pods); off, or in advisory mode, the marks a previous tick left are cleared"`

	fleet.Options
}

// Sizing is the plan's options from the policy's.
func (c Config) Sizing() sizing.Options {
	prior := model.DefaultPrior()
	if c.Profile != nil {
		prior = *c.Profile
	}
	return sizing.Options{
		Prior: prior,
		Limits: model.Limits{ChunkTokens: c.MaxNumBatchedTokens, MaxNumSeqs: c.MaxNumSeqs, BatchTarget: 1,
			KVTarget: sizing.KVCeiling, MaxUtilisation: sizing.MaxUtilisation, StepObjective: c.ITLSLO.Seconds()},
		TTFTSLO: c.TTFTSLO.Seconds(), Attainment: c.SLOAttainment,
		Interval: c.TickInterval.Seconds(), MetricLag: c.MetricLag.Seconds(), DefaultStartup: c.DefaultStartup.Seconds(),
		HoldMin: c.ScaleDownHold.Seconds(),
		Miss:    c.ForecastMiss, MinHeadroom: c.MinHeadroom,
		MaxPods: max(c.MaxReplicas*4, 1),
		Decode:  c.Role == "decode",
	}
}

// Schedule is a parsed cron expression: the next firing after a time.
type Schedule interface {
	Next(time.Time) time.Time
}

// ScheduleFloor is a cron window with a minimum replica count, like a
// KEDA cron trigger: active from each Start firing until the next End
// firing.
type ScheduleFloor struct {
	Start, End Schedule
	Replicas   int
}

// Active reports whether the window is open at now: the next end comes
// before the next start (KEDA's cron rule).
func (f ScheduleFloor) Active(now time.Time) bool {
	if f.Start == nil || f.End == nil {
		return false
	}
	return f.End.Next(now).Before(f.Start.Next(now))
}
