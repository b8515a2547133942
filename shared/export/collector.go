package export

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

// Namespace prefixes every series the exporter serves.
const Namespace = "inferscale"

// KnownAlertReasons are the alert reasons served as 0 when the last tick
// raised none of them, so an alert on one is a comparison, not absent().
var KnownAlertReasons = []string{policy.WarnMaxReplicas, policy.WarnStuckPods, policy.WarnLatencyOutlier,
	policy.WarnNotLoadDriven, policy.WarnStateReset, "UnknownSetting"}

// Collector reads the state on every scrape (prometheus.Collector).
type Collector struct {
	reader   Reader
	interval time.Duration
	timeout  time.Duration
	now      func() time.Time
	log      *slog.Logger
	version  string
	d        descs

	// mu guards lastErr, the read error last logged: a state that stays
	// unreadable is logged once, not at every scrape.
	mu      sync.Mutex
	lastErr string
}

// Options are a Collector's settings.
type Options struct {
	// Interval is CPA's interval between ticks (see Interval), for the
	// intervals missed.
	Interval time.Duration
	// Timeout bounds one read of the state (default 5s).
	Timeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Version is the exporter's build version.
	Version string
	Log     *slog.Logger
}

// NewCollector builds the collector over r.
func NewCollector(r Reader, o Options) *Collector {
	c := &Collector{reader: r, interval: o.Interval, timeout: o.Timeout, now: o.Now, log: o.Log, version: o.Version, d: newDescs()}
	if c.timeout <= 0 {
		c.timeout = 5 * time.Second
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

// descs are the series' descriptions.
type descs struct {
	build, up, ticks, lastTick, age, missed, interval           *prometheus.Desc
	current, target, minR, maxR, decision, alerts               *prometheus.Desc
	level, upper, ceiling, source, beta, reserve, slo, reqs, ok *prometheus.Desc
	need, hold, floor                                           *prometheus.Desc
}

func newDescs() descs {
	g := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(Namespace+"_"+name, help, labels, nil)
	}
	return descs{
		build:    g("exporter_build_info", "The exporter's build version, as a label; always 1.", "version"),
		up:       g("state_up", "1 when the last read of the persisted state succeeded and decoded, 0 when it failed (no state yet, an API or file error, a state this build cannot decode): then no other state series is served."),
		ticks:    g("ticks_total", "Ticks saved into the state since it began (a fresh state starts again from 1)."),
		lastTick: g("last_tick_timestamp_seconds", "When the last saved tick ran (Unix time). A tick that fails saves nothing."),
		age:      g("last_tick_age_seconds", "Seconds since the last saved tick, by the exporter's clock: it grows while ticks fail or do not run."),
		missed:   g("missed_ticks", "CPA intervals since the last saved tick in which no tick was saved, allowing one interval for the next: floor(age / interval) - 1, at least 0."),
		interval: g("tick_interval_seconds", "CPA's interval between ticks (its interval config entry, else tickInterval), which missed_ticks counts in."),
		current:  g("current_replicas", "spec.replicas of the scale target as the last saved tick saw it."),
		target:   g("target_replicas", "The replicas the last saved tick decided (in advisory mode the advice, not what CPA got)."),
		minR:     g("min_replicas", "minReplicas the last saved tick ran with."),
		maxR:     g("max_replicas", "maxReplicas the last saved tick ran with."),
		decision: g("decision_info", "The last saved tick's mode and the step that set its target (a rule such as sizing or queue, hold, scaleDown, stabilisation, scheduleFloor, predictiveFloor, ratioFloor, minReplicas, maxReplicas, breachHold, scaleFromZero); always 1.", "mode", "decided_by"),
		alerts:   g("alerts", "Alerts the last saved tick raised, by Event reason.", "reason"),
		level:    g("forecast_arrivals_requests_per_second", "Policy v2's forecast of the arrival rate (its level), in requests per second."),
		upper:    g("forecast_arrivals_upper_requests_per_second", "The forecast's calibrated upper bound over the horizon, in requests per second."),
		ceiling:  g("pod_ceiling_requests_per_second", "The requests per second one pod carries within every limit, by the service model."),
		source:   g("pod_ceiling_source_info", "Whether the service model behind the ceiling is the prior, partly fitted or fitted; always 1.", "source"),
		beta:     g("headroom_beta", "The learned square-root-staffing headroom beta (need = R + beta*sqrt(R))."),
		reserve:  g("surge_reserve", "The share of the load the plan keeps spare for a surge; learned is true once an hour of the workload's forecast horizons set it, false while it is the prior.", "learned"),
		need:     g("plan_need_replicas", "The fleet policy v2's plan asked for at the last saved tick (its need now, before the hold)."),
		hold:     g("plan_hold_replicas", "The lowest a scale-down could go at the last saved tick: the largest need of the hold's window, the floor of a reactive scale-up, and the need now. A target above the need and on the hold is held."),
		floor:    g("plan_floor_replicas", "What the floor of a reactive scale-up the plan was short for still kept at the last saved tick (0: none); it comes down a pod a minute once no objective is breached and the misses are within the plan's aim."),
		slo:      g("ttft_objective_seconds", "The TTFT objective the last saved tick ran with."),
		reqs:     g("ttft_requests_total", "Requests with a TTFT reading, per pod, cumulative since the pod started, as of the pod's last scrape kept in the state.", "pod"),
		ok: g("ttft_within_objective_requests_total", "Requests whose TTFT was within the objective, per pod, cumulative: "+
			"the pod's histogram at the objective, estimated linearly inside the bucket that holds it (bucket: its bounds, one bound when the objective is one: exact).", "pod", "bucket"),
	}
}

// Describe sends every series' description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.d.build, c.d.up, c.d.ticks, c.d.lastTick, c.d.age, c.d.missed, c.d.interval,
		c.d.current, c.d.target, c.d.minR, c.d.maxR, c.d.decision, c.d.alerts, c.d.level, c.d.upper, c.d.ceiling,
		c.d.source, c.d.beta, c.d.reserve, c.d.need, c.d.hold, c.d.floor, c.d.slo, c.d.reqs, c.d.ok} {
		ch <- d
	}
}

// Collect reads the state and sends its series: inferscale_state_up 0
// and the build info alone when the read fails.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.d.build, prometheus.GaugeValue, 1, c.version)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := c.reader.Read(ctx)
	c.noteRead(err)
	if err != nil {
		ch <- gauge(c.d.up, 0)
		return
	}
	ch <- gauge(c.d.up, 1)
	if c.interval > 0 {
		ch <- gauge(c.d.interval, c.interval.Seconds())
	}
	if st.LastTick != nil {
		age := c.now().Sub(*st.LastTick).Seconds()
		ch <- gauge(c.d.lastTick, float64(st.LastTick.UnixNano())/1e9)
		ch <- gauge(c.d.age, age)
		if c.interval > 0 {
			ch <- gauge(c.d.missed, Missed(age, c.interval.Seconds()))
		}
	}
	if st.Last != nil {
		c.collectLast(ch, st.Last)
		c.collectTTFT(ch, st)
	}
}

// noteRead logs a read error when it differs from the last one logged,
// and that the state is readable again after one.
func (c *Collector) noteRead(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	c.mu.Lock()
	changed := msg != c.lastErr
	c.lastErr = msg
	c.mu.Unlock()
	switch {
	case changed && err != nil:
		c.log.Warn("state not read: serving inferscale_state_up 0 (said again when the error changes)", "err", err)
	case changed:
		c.log.Info("state readable again")
	}
}

// Missed is the intervals in which no tick was saved, age seconds after
// the last saved one: the next tick is due one interval after it and is
// given that interval to save.
func Missed(age, interval float64) float64 {
	if !(interval > 0) || age < 0 {
		return 0
	}
	return math.Max(0, math.Floor(age/interval)-1)
}

func (c *Collector) collectLast(ch chan<- prometheus.Metric, l *state.Last) {
	ch <- prometheus.MustNewConstMetric(c.d.ticks, prometheus.CounterValue, float64(l.Ticks))
	ch <- gauge(c.d.current, float64(l.Current))
	ch <- gauge(c.d.target, float64(l.Target))
	ch <- gauge(c.d.minR, float64(l.MinReplicas))
	ch <- gauge(c.d.maxR, float64(l.MaxReplicas))
	ch <- gauge(c.d.decision, 1, l.Mode, l.DecidedBy)
	counts := map[string]int{}
	for _, r := range KnownAlertReasons {
		counts[r] = 0
	}
	for _, r := range l.Alerts {
		counts[r]++
	}
	for r, n := range counts {
		ch <- gauge(c.d.alerts, float64(n), r)
	}
	if l.SLOSeconds > 0 {
		ch <- gauge(c.d.slo, l.SLOSeconds)
	}
	if p := l.Plan; p != nil {
		ch <- gauge(c.d.level, p.ForecastLevel)
		ch <- gauge(c.d.upper, p.ForecastUpper)
		ch <- gauge(c.d.ceiling, p.CeilingRPS)
		ch <- gauge(c.d.source, 1, p.CeilingSource)
		ch <- gauge(c.d.beta, p.Beta)
		if p.SurgeReserve != nil {
			ch <- gauge(c.d.reserve, *p.SurgeReserve, strconv.FormatBool(p.ReserveLearned))
		}
		// A state saved before the plan's counts were kept has none: the
		// series are absent, not 0 (no plan asks for no pods).
		if p.Need != nil && p.Hold != nil {
			ch <- gauge(c.d.need, float64(*p.Need))
			ch <- gauge(c.d.hold, float64(*p.Hold))
			ch <- gauge(c.d.floor, float64(p.Floor))
		}
	}
}

// collectTTFT sends each kept pod's cumulative TTFT counts: the total,
// and those within the objective, estimated inside the histogram bucket
// that holds the objective by linear interpolation (as histogram_quantile
// does; exact when the objective is a bucket bound), labelled with that
// bucket. When the state coarsens a histogram to fit its byte budget the
// bucket may change: that is another series, not a counter that went
// down (which rate() would take for a reset).
func (c *Collector) collectTTFT(ch chan<- prometheus.Metric, st *state.State) {
	slo := st.Last.SLOSeconds
	for _, p := range st.Pods {
		h := p.TTFT
		if h == nil || len(h.LE) != len(h.C) {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.d.reqs, prometheus.CounterValue, h.Count, p.Name)
		if slo > 0 {
			n, bucket := Within(h.LE, h.C, slo)
			ch <- prometheus.MustNewConstMetric(c.d.ok, prometheus.CounterValue, n, p.Name, bucket)
		}
	}
}

// Within estimates the count of a cumulative histogram (ascending finite
// bounds le, counts c, the +Inf bucket left out) at most x, and names the
// bucket it read: "b" when x is the bound b (exact), "a,b" when x lies
// between bounds a and b (linear inside the bucket, the first one from
// 0), "a,+Inf" beyond the last bound (the count at a: a lower bound).
func Within(le, c []float64, x float64) (float64, string) {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	i, _ := slices.BinarySearch(le, x)
	switch {
	case i < len(le) && math.Abs(le[i]-x) <= 1e-9*math.Abs(x):
		return c[i], f(le[i])
	case i > 0 && math.Abs(le[i-1]-x) <= 1e-9*math.Abs(x):
		return c[i-1], f(le[i-1])
	case len(le) == 0:
		return 0, "0,+Inf"
	case i == len(le):
		return c[i-1], f(le[i-1]) + ",+Inf"
	}
	lo, clo := 0.0, 0.0
	if i > 0 {
		lo, clo = le[i-1], c[i-1]
	}
	return clo + (c[i]-clo)*(x-lo)/(le[i]-lo), f(lo) + "," + f(le[i])
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}
