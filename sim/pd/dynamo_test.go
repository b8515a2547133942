package pd

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/scaler"
)

// interval is one adjustment interval's traffic as the pods export it.
type interval struct {
	reqs, isl, osl float64 // finished requests and their mean lengths
	ttft, itl, dur float64 // means of the TTFT, gap and request histograms (0: none)
	waiting        float64 // still queued at the end of the interval
	min, max       int
}

// hist is a histogram of n observations of mean v (only Sum and Count
// are read).
func hist(n, v float64) *signal.Histogram { return &signal.Histogram{Sum: n * v, Count: n} }

// observations are two ticks an interval apart: two pods at zero, then
// the interval's counters split over them, and a third pod new and idle
// (three ready decode pods for the concurrency of d_corr).
func (iv interval) observations(base time.Time, at time.Duration) []scaler.Observation {
	pod := func(name string, share, waiting float64) scaler.PodView {
		n := iv.reqs * share
		m := &signal.Pod{RequestsTotal: signal.F(n), Waiting: signal.F(waiting), Running: signal.F(0),
			PromptLength: hist(n, iv.isl), GenerationLength: hist(n, iv.osl)}
		if iv.ttft > 0 {
			m.TTFT = hist(n, iv.ttft)
		}
		if iv.itl > 0 {
			m.InterToken = hist(n*iv.osl, iv.itl)
		}
		if iv.dur > 0 {
			m.E2E = hist(n, iv.dur)
		}
		return scaler.PodView{Name: name, Phase: scaler.Ready, Metrics: m}
	}
	zero := func(name string) scaler.PodView {
		return scaler.PodView{Name: name, Phase: scaler.Ready, Metrics: &signal.Pod{RequestsTotal: signal.F(0)}}
	}
	obs := func(t time.Duration, pods ...scaler.PodView) scaler.Observation {
		return scaler.Observation{Now: base.Add(t), SpecReplicas: 2, Pods: pods, MinReplicas: iv.min, MaxReplicas: iv.max}
	}
	return []scaler.Observation{
		obs(0, zero("a"), zero("b")),
		obs(at, pod("a", 0.75, iv.waiting), pod("b", 0.25, 0), zero("c")),
	}
}

func TestDynamoSizesFromTheProfile(t *testing.T) {
	m := engine.Llama31_8B_H100()
	prof, err := ProfileDynamo(m)
	if err != nil {
		t.Fatal(err)
	}
	// 1024-token prompts: 47,050 tokens/s per GPU. Decode at context 924 +
	// 200/2 = 1024 and ITL 50 ms: 133 sequences, 2,666 tokens/s per GPU.
	doubled := func(reqs float64) float64 { // twice the profiled ITL at the load's concurrency
		return 2 * prof.DecodeITL(reqs/3*2/180, 1024)
	}
	for _, tc := range []struct {
		name       string
		role       DynamoRole
		correction bool
		iv         interval
		at         time.Duration
		want       int
	}{
		{"prefill: ⌈100 req/s × 1024 / 47,050⌉ = ⌈2.18⌉", DynamoPrefill, true, interval{reqs: 18000, isl: 1024, osl: 1, max: 64}, 180 * time.Second, 3},
		{"prefill: the queued requests arrived too: ⌈3.63⌉", DynamoPrefill, true, interval{reqs: 18000, isl: 1024, osl: 1, waiting: 12000, max: 64}, 180 * time.Second, 4},
		{"prefill: TTFT twice the profile: min(1, p_corr)", DynamoPrefill, true, interval{reqs: 18000, isl: 1024, osl: 1, ttft: 2 * prof.PrefillTTFT(1024), max: 64}, 180 * time.Second, 3},
		{"prefill: TTFT half the profile halves the load: ⌈1.09⌉", DynamoPrefill, true, interval{reqs: 18000, isl: 1024, osl: 1, ttft: prof.PrefillTTFT(1024) / 2, max: 64}, 180 * time.Second, 2},
		{"prefill: idle: min_endpoint 1", DynamoPrefill, true, interval{reqs: 10, isl: 1024, osl: 1, max: 64}, 180 * time.Second, 1},
		{"prefill: MinReplicas above 1", DynamoPrefill, true, interval{reqs: 10, isl: 1024, osl: 1, min: 2, max: 64}, 180 * time.Second, 2},
		{"prefill: MaxReplicas", DynamoPrefill, true, interval{reqs: 18000, isl: 1024, osl: 1, max: 2}, 180 * time.Second, 2},
		{"decode: ⌈50 req/s × 200 / 2,666⌉ = ⌈3.75⌉", DynamoDecode, true, interval{reqs: 9000, isl: 924, osl: 200, max: 64}, 180 * time.Second, 4},
		{"decode: ITL twice the profile: 25 ms, 57 sequences, ⌈10,000 / 2,298⌉", DynamoDecode, true, interval{reqs: 9000, isl: 924, osl: 200, itl: doubled(9000), dur: 2, max: 64}, 180 * time.Second, 5},
		{"decode: correction=false", DynamoDecode, false, interval{reqs: 9000, isl: 924, osl: 200, itl: doubled(9000), dur: 2, max: 64}, 180 * time.Second, 4},
		{"before the interval ends: spec kept", DynamoDecode, true, interval{reqs: 9000, isl: 924, osl: 200, max: 64}, 90 * time.Second, 2},
		{"no request finished: adjustment skipped", DynamoDecode, true, interval{reqs: 0, isl: 924, osl: 200, max: 64}, 180 * time.Second, 2},
	} {
		d, err := NewDynamo(DynamoConfig{Role: tc.role, Interval: DefaultDynamoInterval, ITL: 0.05, Correction: tc.correction, Profile: prof})
		if err != nil {
			t.Fatal(err)
		}
		var got int
		for _, obs := range tc.iv.observations(engine.DefaultConfig().Base, tc.at) {
			if got, err = d.Recommend(obs); err != nil {
				t.Fatal(err)
			}
		}
		if got != tc.want {
			t.Errorf("%s: %d replicas, want %d", tc.name, got, tc.want)
		}
	}
}

func TestNewDynamoRejectsBadConfigs(t *testing.T) {
	prof, err := ProfileDynamo(engine.Llama31_8B_H100())
	if err != nil {
		t.Fatal(err)
	}
	ok := DynamoConfig{Role: DynamoDecode, Interval: time.Minute, ITL: 0.05, Profile: prof}
	for _, tc := range []struct {
		name string
		edit func(*DynamoConfig)
		want string
	}{
		{"role", func(c *DynamoConfig) { c.Role = "both" }, "role"},
		{"interval under the scrape", func(c *DynamoConfig) { c.Interval = 5 * time.Second }, "interval"},
		{"no ITL objective", func(c *DynamoConfig) { c.ITL = 0 }, "ITL"},
		{"infinite ITL objective", func(c *DynamoConfig) { c.ITL = math.Inf(1) }, "ITL"},
		{"no profile", func(c *DynamoConfig) { c.Profile = nil }, "profile"},
	} {
		c := ok
		tc.edit(&c)
		if _, err := NewDynamo(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
		// Check reads the parameters alone: only the profile passes it.
		if err := c.Check(); (err == nil) != (tc.name == "no profile") {
			t.Errorf("%s: Check said %v", tc.name, err)
		}
	}
	if _, err := NewDynamo(ok); err != nil {
		t.Errorf("a good config: %v", err)
	}
}
