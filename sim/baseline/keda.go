package baseline

import (
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/inferscale/inferscale/sim/scaler"
)

// PrometheusTrigger is a KEDA prometheus trigger: Query's value against
// threshold (AverageValue) and activationThreshold.
type PrometheusTrigger struct {
	Name                string
	Query               func(obs scaler.Observation) (float64, error)
	Threshold           float64
	ActivationThreshold float64
}

// CronTrigger is a KEDA cron trigger: DesiredReplicas between the Start and
// End schedules (standard 5-field cron), 0 outside.
type CronTrigger struct {
	Start, End      string
	Location        *time.Location // nil: UTC
	DesiredReplicas int
}

// KEDAConfig is one ScaledObject.
type KEDAConfig struct {
	Name            string
	PollingInterval time.Duration // 30 s
	CooldownPeriod  time.Duration // 300 s
	// InitialCooldownPeriod delays the first deactivation after creation
	// while no trigger has ever been active (0).
	InitialCooldownPeriod time.Duration
	// IdleReplicas is idleReplicaCount; nil when unset.
	IdleReplicas *int
	Prometheus   []PrometheusTrigger
	Cron         []CronTrigger
	// Behavior is advanced.horizontalPodAutoscalerConfig.behavior (nil: legacy HPA path).
	Behavior  *Behavior
	Tolerance float64
	// HPASync is the generated HPA's sync period (15 s).
	HPASync time.Duration
}

type cronWindow struct {
	start, end cron.Schedule
	loc        *time.Location
	replicas   int
}

// active follows KEDA's cron scaler: inside the window when the next end
// comes before the next start.
func (c cronWindow) active(now time.Time) bool {
	t := now.In(c.loc)
	return c.end.Next(t).Before(c.start.Next(t))
}

// KEDA is the KEDA operator's scale loop (activation and cooldown, every
// pollingInterval) on top of the HPA it generates (every trigger an
// External metric, AverageValue).
type KEDA struct {
	cfg        KEDAConfig
	hpa        *HPA
	crons      []cronWindow
	lastPoll   time.Time
	created    time.Time
	lastActive time.Time // zero until a trigger is first active (status.lastActiveTime)
}

// NewKEDA checks the ScaledObject and builds its HPA.
func NewKEDA(cfg KEDAConfig) (*KEDA, error) {
	if len(cfg.Prometheus)+len(cfg.Cron) == 0 {
		return nil, errors.New("keda: no triggers")
	}
	if cfg.PollingInterval <= 0 || cfg.CooldownPeriod < 0 || cfg.InitialCooldownPeriod < 0 {
		return nil, fmt.Errorf("keda %s: pollingInterval must be positive and cooldown periods not negative", cfg.Name)
	}
	if cfg.IdleReplicas != nil && *cfg.IdleReplicas < 0 {
		return nil, fmt.Errorf("keda %s: idleReplicaCount is negative", cfg.Name)
	}
	if cfg.HPASync <= 0 {
		cfg.HPASync = 15 * time.Second
	}
	k := &KEDA{cfg: cfg}
	var metrics []HPAMetric
	for i, t := range cfg.Prometheus {
		if t.Query == nil {
			return nil, fmt.Errorf("keda %s: prometheus trigger %d has no query", cfg.Name, i)
		}
		metrics = append(metrics, HPAMetric{Name: t.Name, Source: ExternalAverageValue, Target: t.Threshold, External: t.Query})
	}
	for i, c := range cfg.Cron {
		loc := c.Location
		if loc == nil {
			loc = time.UTC
		}
		start, err := cron.ParseStandard(c.Start)
		if err != nil {
			return nil, fmt.Errorf("keda %s: cron trigger %d: start %q: %w", cfg.Name, i, c.Start, err)
		}
		end, err := cron.ParseStandard(c.End)
		if err != nil {
			return nil, fmt.Errorf("keda %s: cron trigger %d: end %q: %w", cfg.Name, i, c.End, err)
		}
		if c.Start == c.End {
			return nil, fmt.Errorf("keda %s: cron trigger %d: start and end are the same", cfg.Name, i)
		}
		if c.DesiredReplicas < 1 {
			return nil, fmt.Errorf("keda %s: cron trigger %d: desiredReplicas must be at least 1", cfg.Name, i)
		}
		w := cronWindow{start: start, end: end, loc: loc, replicas: c.DesiredReplicas}
		k.crons = append(k.crons, w)
		metrics = append(metrics, HPAMetric{
			Name: fmt.Sprintf("cron-%d", i), Source: ExternalAverageValue, Target: 1,
			External: func(obs scaler.Observation) (float64, error) {
				if w.active(obs.Now) {
					return float64(w.replicas), nil
				}
				return 0, nil
			},
		})
	}
	h, err := NewHPA(HPAConfig{
		Name: cfg.Name, Metrics: metrics, Behavior: cfg.Behavior, Tolerance: cfg.Tolerance,
		DownscaleStabilization: 300 * time.Second, SyncPeriod: cfg.HPASync,
	})
	if err != nil {
		return nil, fmt.Errorf("keda %s: %w", cfg.Name, err)
	}
	k.hpa = h
	return k, nil
}

// Name implements scaler.Autoscaler.
func (k *KEDA) Name() string { return k.cfg.Name }

// Period is the generated HPA's sync period; the activation loop runs on
// the ticks where pollingInterval has elapsed.
func (k *KEDA) Period() time.Duration { return k.cfg.HPASync }

// isActive is any trigger above its activation threshold (prometheus:
// value > activationThreshold; cron: inside its window).
func (k *KEDA) isActive(obs scaler.Observation) (bool, error) {
	for _, t := range k.cfg.Prometheus {
		v, err := t.Query(obs)
		if err != nil {
			return false, fmt.Errorf("trigger %s: %w", t.Name, err)
		}
		if v > t.ActivationThreshold {
			return true, nil
		}
	}
	for _, c := range k.crons {
		if c.active(obs.Now) {
			return true, nil
		}
	}
	return false, nil
}

// cooledDown is scaleToZeroOrIdle's test: lastActiveTime + cooldownPeriod
// before now, or, when no trigger was ever active, creation +
// initialCooldownPeriod before now.
func (k *KEDA) cooledDown(now time.Time) bool {
	if k.lastActive.IsZero() {
		return k.created.Add(k.cfg.InitialCooldownPeriod).Before(now)
	}
	return k.lastActive.Add(k.cfg.CooldownPeriod).Before(now)
}

// Recommend runs KEDA's activation step when a poll is due, then the HPA.
func (k *KEDA) Recommend(obs scaler.Observation) (int, error) {
	cur := obs.SpecReplicas
	if k.created.IsZero() {
		k.created = obs.Now // the ScaledObject's creation
	}
	idle, canIdle := 0, obs.MinReplicas == 0
	if k.cfg.IdleReplicas != nil {
		idle, canIdle = *k.cfg.IdleReplicas, true
		if idle >= obs.MinReplicas {
			return cur, fmt.Errorf("keda %s: idleReplicaCount %d must be below minReplicaCount %d", k.cfg.Name, idle, obs.MinReplicas)
		}
	}
	atIdle := canIdle && cur == idle
	if k.lastPoll.IsZero() || obs.Now.Sub(k.lastPoll) >= k.cfg.PollingInterval {
		k.lastPoll = obs.Now
		active, err := k.isActive(obs)
		if err != nil {
			return cur, fmt.Errorf("keda %s: %w", k.cfg.Name, err)
		}
		switch {
		case active:
			k.lastActive = obs.Now
			if atIdle {
				return max(obs.MinReplicas, 1), nil // activate
			}
		case canIdle && cur > idle && k.cooledDown(obs.Now):
			return idle, nil // deactivate after the cooldown
		}
	}
	if atIdle {
		// The HPA is idle too: at 0 it disables itself; at idleReplicaCount
		// KEDA keeps the target parked until a trigger activates.
		return cur, nil
	}
	hobs := obs
	hobs.MinReplicas = max(1, obs.MinReplicas)
	return k.hpa.Recommend(hobs)
}

func kedaTunables() []Tunable {
	return []Tunable{
		{Name: "threshold", Default: 3, Min: 0.5, Max: 100, Doc: "prometheus threshold: waiting requests per replica (AverageValue)"},
		{Name: "activation_threshold", Default: 0, Min: 0, Max: 100, Doc: "activationThreshold on summed waiting requests"},
		{Name: "cooldown_s", Default: 300, Min: 0, Max: 3600, Doc: "cooldownPeriod (active → idle/0), seconds"},
		{Name: "polling_s", Default: 30, Min: 1, Max: 300, Doc: "pollingInterval, seconds"},
		{Name: "tolerance", Default: 0.1, Min: 0, Max: 0.5, Doc: "HPA tolerance band"},
		{Name: "idle_replicas", Default: -1, Min: -1, Max: 0, Integer: true,
			Doc: "idleReplicaCount 0 (needs minReplicas ≥ 1); -1 leaves it unset (the Go API takes any count)"},
	}
}

func kedaFrom(name string, v Params, crons []CronTrigger) (scaler.Autoscaler, error) {
	var idle *int
	if v["idle_replicas"] >= 0 {
		n := int(v["idle_replicas"])
		idle = &n
	}
	return NewKEDA(KEDAConfig{
		IdleReplicas: idle,
		Name:         name, PollingInterval: secs(v["polling_s"]), CooldownPeriod: secs(v["cooldown_s"]),
		Tolerance: v["tolerance"],
		Prometheus: []PrometheusTrigger{{
			Name: "sum(vllm:num_requests_waiting)", Query: externalSum(readWaiting),
			Threshold: v["threshold"], ActivationThreshold: v["activation_threshold"],
		}},
		Cron: crons,
	})
}

// keda-queue: prometheus trigger on the summed waiting requests.
func kedaQueuePreset() preset {
	return preset{tunables: kedaTunables(), build: func(v Params) (scaler.Autoscaler, error) {
		return kedaFrom("keda-queue", v, nil)
	}}
}

// keda-cron: keda-queue plus a daily cron floor, in UTC minutes of the day
// (the defaults cover 00:20–00:50, the daily peak of the demo workload,
// whose trace starts at midnight UTC).
func kedaCronPreset() preset {
	return preset{
		tunables: append(kedaTunables(),
			Tunable{Name: "cron_start_minute", Default: 20, Min: 0, Max: 1439, Integer: true, Doc: "cron floor starts daily at this UTC minute of the day"},
			Tunable{Name: "cron_end_minute", Default: 50, Min: 0, Max: 1439, Integer: true, Doc: "cron floor ends daily at this UTC minute of the day"},
			Tunable{Name: "cron_replicas", Default: 6, Min: 1, Max: 1000, Integer: true, Doc: "desiredReplicas inside the cron window"}),
		build: func(v Params) (scaler.Autoscaler, error) {
			daily := func(minute float64) string {
				m := int(minute)
				return fmt.Sprintf("%d %d * * *", m%60, m/60)
			}
			return kedaFrom("keda-cron", v, []CronTrigger{{
				Start: daily(v["cron_start_minute"]), End: daily(v["cron_end_minute"]),
				DesiredReplicas: int(v["cron_replicas"]),
			}})
		},
	}
}
