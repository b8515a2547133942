package policy

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // schedule floors name IANA time zones; the image may have none

	"github.com/robfig/cron/v3"
	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/shared/config"
	"github.com/inferscale/inferscale/shared/fleet"
)

// Config is every knob of the policy. Default gives the seed-derived
// values; FromSource reads them from CPA-style environment variables or the
// policy file. Field comments name the config key.
type Config struct {
	MinReplicas int // minReplicas (env or CPA config.yaml; default 1)
	MaxReplicas int // maxReplicas (env or CPA config.yaml; default 10)

	// Queue pressure: waiting (optionally + running) requests per ready pod.
	QueueTarget          float64 // queueTarget, default 3 (GKE: start at 3-5; seed 002: 5)
	QueueIncludesRunning bool    // queueIncludesRunning, default false
	QueueLowWater        float64 // queueLowWater, default 0 (seed 000 rule D: queue 0)

	// Batch headroom: running requests per ready pod against the server's
	// concurrency limit (vLLM --max-num-seqs). Latency climbs steeply as a
	// pod's batch fills, well before requests wait.
	MaxNumSeqs  float64 // maxNumSeqs, default 256 (vLLM's default; 0 turns the rule off)
	BatchTarget float64 // batchTarget, default 0.7 (fraction of maxNumSeqs)

	// KV-cache headroom.
	KVHigh     float64 // kvHigh, default 0.9 (pressure)
	KVTarget   float64 // kvTarget, default 0.8
	KVLowWater float64 // kvLowWater, default 0.5

	// GPU headroom (corroborates only).
	GPUTarget   float64 // gpuTarget, default 0.75 (seed 004)
	GPULowWater float64 // gpuLowWater, default 0.2 (seed 000 rule D)

	// Latency SLO.
	TTFTSLO            time.Duration // ttftSLO, default 2s
	E2ESLO             time.Duration // e2eSLO, default 0 (off)
	LatencyMaxFactor   float64       // latencyMaxFactor, default 2 (cap of the proportional increase)
	LatencyLowFraction float64       // latencyLowFraction, default 0.7 (low-water = SLO x this)
	LatencyMinRequests float64       // latencyMinRequests, default 5 (fewer finished requests: no quantile)
	P99Baseline        time.Duration // p99Baseline, default 1s; TTFT p99 above 2x with nothing else wrong is an alert
	LatencyNeedsLoad   bool          // latencyNeedsLoad, default true: a breach with nothing queueing does not scale

	// Demand and startup compensation.
	StartupCompensation bool          // startupCompensation, default true
	PodCapacityRPS      float64       // podCapacityRPS, default 0 (learn: finished requests/s per pod while saturated)
	CapacityTarget      float64       // capacityTarget, default 0.8 (fraction of a pod's capacity to plan for)
	MaxGrowth           float64       // maxGrowth, default 3 (cap on the projected demand growth over one startup)
	PeakWindow          time.Duration // peakWindow, default 2m (removals must fit the peak arrival rate of this window)
	DefaultStartup      time.Duration // defaultStartup, default 90s (until startups are observed)
	StuckAfter          time.Duration // stuckAfter, default 15m (a pod not ready after this is stuck, not starting)

	// Corroboration and step sizes.
	ModerateFactor       float64 // moderateFactor, default 1.3 (one signal: at least +1, at most x this)
	DecisiveMaxPods      int     // decisiveMaxPods, default 4
	DecisiveMaxFraction  float64 // decisiveMaxFraction, default 0.5 (cap: max(4 pods, 50%))
	MaxScaleDownFraction float64 // maxScaleDownFraction, default 0.5 (at most this share removed per decision)
	Tolerance            float64 // tolerance, default 0.1
	ScaleUpCooldown      time.Duration
	// UrgentBypassesCooldown lets a corroborated queue or SLO breach scale
	// up inside the up-cooldown (urgentBypassesCooldown, default false:
	// seed 000's cooldown holds).
	UrgentBypassesCooldown bool
	ScaleDownCooldown      time.Duration
	UpStabilization        time.Duration
	DownStabilization      time.Duration
	EWMAAlpha              float64
	StaleAfter             time.Duration
	TrendWindow            time.Duration
	ScheduleFloors         []ScheduleFloor
	PredictiveFloor        bool
	PredictiveDays         int
	PredictiveFraction     float64
	SaturationWaitingPods  float64
}

// ScheduleFloor is a cron-style window with a minimum replica count, like
// a KEDA cron trigger: active from each Start firing until the next End
// firing.
type ScheduleFloor struct {
	Start    string `json:"start"`
	End      string `json:"end"`
	Replicas int    `json:"replicas"`
	Timezone string `json:"timezone,omitempty"`

	start, end cron.Schedule
}

// Default returns the policy defaults (seeds 000, 002, 003, 004).
func Default() Config {
	return Config{
		MinReplicas: 1, MaxReplicas: 10,
		QueueTarget: 3, QueueLowWater: 0.5,
		MaxNumSeqs: 256, BatchTarget: 0.7,
		KVHigh: 0.9, KVTarget: 0.8, KVLowWater: 0.5,
		GPUTarget: 0.75, GPULowWater: 0.2,
		TTFTSLO: 2 * time.Second, LatencyMaxFactor: 2, LatencyLowFraction: 0.7, LatencyMinRequests: 5,
		P99Baseline: time.Second, LatencyNeedsLoad: true,
		StartupCompensation: true, CapacityTarget: 0.8, MaxGrowth: 3, PeakWindow: 2 * time.Minute, DefaultStartup: 90 * time.Second, StuckAfter: 15 * time.Minute,
		ModerateFactor: 1.3, DecisiveMaxPods: 4, DecisiveMaxFraction: 0.5, MaxScaleDownFraction: 0.5,
		Tolerance:       0.1,
		ScaleUpCooldown: 60 * time.Second, ScaleDownCooldown: 300 * time.Second, UrgentBypassesCooldown: false,
		UpStabilization: 0, DownStabilization: 300 * time.Second,
		EWMAAlpha: 0.3, StaleAfter: 90 * time.Second, TrendWindow: 3 * time.Minute,
		PredictiveFloor: true, PredictiveDays: 7, PredictiveFraction: 0.7,
		SaturationWaitingPods: 5,
	}
}

// Keys lists every config key FromSource reads.
var Keys = []string{"minReplicas", "maxReplicas", "configPath", "queueTarget", "queueIncludesRunning", "queueLowWater",
	"maxNumSeqs", "batchTarget", "kvHigh", "kvTarget", "kvLowWater", "gpuTarget", "gpuLowWater", "ttftSLO", "e2eSLO", "latencyMaxFactor",
	"latencyLowFraction", "latencyMinRequests", "p99Baseline", "latencyNeedsLoad", "startupCompensation", "podCapacityRPS", "maxGrowth", "peakWindow",
	"capacityTarget", "defaultStartup", "stuckAfter", "moderateFactor", "decisiveMaxPods", "decisiveMaxFraction",
	"maxScaleDownFraction", "tolerance", "scaleUpCooldown", "urgentBypassesCooldown", "scaleDownCooldown", "upStabilization",
	"downStabilization", "ewmaAlpha", "staleAfter", "trendWindow", "scheduleFloors", "predictiveFloor",
	"predictiveDays", "predictiveFraction", "saturationWaiting"}

// FromSource reads the policy from s; the error names every bad key.
func FromSource(s *config.Source) (Config, error) {
	d := Default()
	c := d
	c.MinReplicas, c.MaxReplicas = config.ReplicaBounds(s)
	c.QueueTarget = s.Float("queueTarget", d.QueueTarget, 0.01, 1e6)
	c.QueueIncludesRunning = s.Bool("queueIncludesRunning", d.QueueIncludesRunning)
	c.QueueLowWater = s.Float("queueLowWater", d.QueueLowWater, 0, 1e6)
	c.MaxNumSeqs = s.Float("maxNumSeqs", d.MaxNumSeqs, 0, 1e6)
	c.BatchTarget = s.Float("batchTarget", d.BatchTarget, 0.05, 1)
	c.KVHigh = s.Float("kvHigh", d.KVHigh, 0.01, 1)
	c.KVTarget = s.Float("kvTarget", d.KVTarget, 0.01, 1)
	c.KVLowWater = s.Float("kvLowWater", d.KVLowWater, 0, 1)
	c.GPUTarget = s.Float("gpuTarget", d.GPUTarget, 0.01, 1)
	c.GPULowWater = s.Float("gpuLowWater", d.GPULowWater, 0, 1.0001)
	c.TTFTSLO = s.Duration("ttftSLO", d.TTFTSLO, 0, time.Hour)
	c.E2ESLO = s.Duration("e2eSLO", d.E2ESLO, 0, 24*time.Hour)
	c.LatencyMaxFactor = s.Float("latencyMaxFactor", d.LatencyMaxFactor, 1, 100)
	c.LatencyLowFraction = s.Float("latencyLowFraction", d.LatencyLowFraction, 0, 1)
	c.LatencyMinRequests = s.Float("latencyMinRequests", d.LatencyMinRequests, 0, 1e9)
	c.P99Baseline = s.Duration("p99Baseline", d.P99Baseline, 0, 24*time.Hour)
	c.LatencyNeedsLoad = s.Bool("latencyNeedsLoad", d.LatencyNeedsLoad)
	c.StartupCompensation = s.Bool("startupCompensation", d.StartupCompensation)
	c.PodCapacityRPS = s.Float("podCapacityRPS", d.PodCapacityRPS, 0, 1e6)
	c.MaxGrowth = s.Float("maxGrowth", d.MaxGrowth, 1, 100)
	c.PeakWindow = s.Duration("peakWindow", d.PeakWindow, 0, 15*time.Minute)
	c.CapacityTarget = s.Float("capacityTarget", d.CapacityTarget, 0.05, 1)
	c.DefaultStartup = s.Duration("defaultStartup", d.DefaultStartup, 0, 2*time.Hour)
	c.StuckAfter = s.Duration("stuckAfter", d.StuckAfter, 0, 24*time.Hour)
	c.ModerateFactor = s.Float("moderateFactor", d.ModerateFactor, 1, 10)
	c.DecisiveMaxPods = s.Int("decisiveMaxPods", d.DecisiveMaxPods, 1, 100000)
	c.DecisiveMaxFraction = s.Float("decisiveMaxFraction", d.DecisiveMaxFraction, 0, 100)
	c.MaxScaleDownFraction = s.Float("maxScaleDownFraction", d.MaxScaleDownFraction, 0, 1)
	c.Tolerance = s.Float("tolerance", d.Tolerance, 0, 1)
	c.ScaleUpCooldown = s.Duration("scaleUpCooldown", d.ScaleUpCooldown, 0, 24*time.Hour)
	c.UrgentBypassesCooldown = s.Bool("urgentBypassesCooldown", d.UrgentBypassesCooldown)
	c.ScaleDownCooldown = s.Duration("scaleDownCooldown", d.ScaleDownCooldown, 0, 24*time.Hour)
	c.UpStabilization = s.Duration("upStabilization", d.UpStabilization, 0, time.Hour)
	c.DownStabilization = s.Duration("downStabilization", d.DownStabilization, 0, time.Hour)
	c.EWMAAlpha = s.Float("ewmaAlpha", d.EWMAAlpha, 0.001, 1)
	c.StaleAfter = s.Duration("staleAfter", d.StaleAfter, 0, 24*time.Hour)
	c.TrendWindow = s.Duration("trendWindow", d.TrendWindow, 10*time.Second, time.Hour)
	c.PredictiveFloor = s.Bool("predictiveFloor", d.PredictiveFloor)
	c.PredictiveDays = s.Int("predictiveDays", d.PredictiveDays, 1, 7)
	c.PredictiveFraction = s.Float("predictiveFraction", d.PredictiveFraction, 0, 2)
	c.SaturationWaitingPods = s.Float("saturationWaiting", d.SaturationWaitingPods, 0.01, 1e6)
	if c.KVTarget > c.KVHigh {
		s.Failf("kvTarget", "kvTarget %g is above kvHigh %g", c.KVTarget, c.KVHigh)
	}
	if c.KVLowWater > c.KVTarget {
		s.Failf("kvLowWater", "kvLowWater %g is above kvTarget %g", c.KVLowWater, c.KVTarget)
	}
	if raw, ok := s.Raw("scheduleFloors"); ok && raw != "" {
		floors, err := ParseScheduleFloors(raw)
		if err != nil {
			s.Failf("scheduleFloors", "%v", err)
		}
		c.ScheduleFloors = floors
	}
	if err := s.Err(); err != nil {
		return Default(), err
	}
	return c, nil
}

// ParseScheduleFloors reads a YAML or JSON list of
// {start, end, replicas, timezone} with five-field cron expressions.
func ParseScheduleFloors(raw string) ([]ScheduleFloor, error) {
	var floors []ScheduleFloor
	if err := yaml.UnmarshalStrict([]byte(raw), &floors); err != nil {
		return nil, fmt.Errorf("want a list of {start, end, replicas, timezone}: %w", err)
	}
	parser := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	for i := range floors {
		f := &floors[i]
		if f.Replicas < 0 {
			return nil, fmt.Errorf("entry %d: replicas %d is negative", i, f.Replicas)
		}
		tz := ""
		if f.Timezone != "" {
			if _, err := time.LoadLocation(f.Timezone); err != nil {
				return nil, fmt.Errorf("entry %d: timezone %q: %w", i, f.Timezone, err)
			}
			tz = "CRON_TZ=" + f.Timezone + " "
		}
		var err error
		if f.start, err = parser.Parse(tz + strings.TrimSpace(f.Start)); err != nil {
			return nil, fmt.Errorf("entry %d: start %q: %w", i, f.Start, err)
		}
		if f.end, err = parser.Parse(tz + strings.TrimSpace(f.End)); err != nil {
			return nil, fmt.Errorf("entry %d: end %q: %w", i, f.End, err)
		}
	}
	return floors, nil
}

// Active reports whether the window is open at now: the next end comes
// before the next start (KEDA's cron rule).
func (f ScheduleFloor) Active(now time.Time) bool {
	if f.start == nil || f.end == nil {
		return false
	}
	return f.end.Next(now).Before(f.start.Next(now))
}

// fleetOptions are the aggregation settings within the policy config.
func (c Config) FleetOptions() fleet.Options {
	return fleet.Options{EWMAAlpha: c.EWMAAlpha, StaleAfter: c.StaleAfter, TrendWindow: c.TrendWindow, PeakWindow: c.PeakWindow,
		DefaultStartup: c.DefaultStartup, SaturationWaiting: c.SaturationWaitingPods, TrackE2E: c.E2ESLO > 0,
		StuckAfter: c.StuckAfter}
}
