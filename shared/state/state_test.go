package state_test

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/statetest"
	"github.com/inferscale/inferscale/shared/forecast"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestEncodeDecodeRoundTripsExactly(t *testing.T) {
	st := statetest.Sample(t0)
	b, err := state.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := state.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Fatalf("round trip differs:\n%+v\n%+v", got, st)
	}
	if st.Pods[0].Name != "a" || st.Pod("b") == nil || st.Pod("c") != nil {
		t.Error("pods not kept sorted or not found")
	}
}

func TestDecodeRejectsBadDocuments(t *testing.T) {
	for name, doc := range map[string]string{
		"not json":     `{"v":1,`,
		"no version":   `{"pods":[]}`,
		"other schema": `{"v":2}`,
		"unknown key":  `{"v":1,"surprise":true}`,
		"trailing":     `{"v":1} {"v":1}`,
		"unsorted":     `{"v":1,"pods":[{"name":"b","scrapeTime":"2026-01-01T00:00:00Z","seenAt":"2026-01-01T00:00:00Z"},{"name":"a","scrapeTime":"2026-01-01T00:00:00Z","seenAt":"2026-01-01T00:00:00Z"}]}`,
		"negative":     `{"v":1,"recommendations":[{"at":"2026-01-01T00:00:00Z","replicas":-1}]}`,
		"wrong type":   `{"v":1,"gpuUtilEwma":"high"}`,
		"ragged hist":  `{"v":1,"pods":[{"name":"a","scrapeTime":"2026-01-01T00:00:00Z","seenAt":"2026-01-01T00:00:00Z","ttft":{"le":[1,2],"c":[1],"sum":0,"count":1}}]}`,
	} {
		if _, err := state.Decode([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := state.Decode([]byte(strings.Repeat(" ", state.MaxStateBytes+1))); err == nil {
		t.Error("oversized state accepted")
	}
}

// Record keeps every history bounded: the newest startups, the rate and
// recommendation windows, a week of hourly peaks.
func TestRecordKeepsHistoryBounded(t *testing.T) {
	st := state.New()
	for i := 0; i < 100; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		st.Record(state.Tick{At: at,
			Observed: state.Observed{Startups: []state.Startup{{Pod: string(rune('a' + i%26)), Seconds: float64(i), At: at}},
				Rate: &state.RateSample{At: at, RPS: 1}, RateKeep: 30 * time.Second},
			Decided: state.Decided{Recommendation: 1, RecommendationKeep: 10 * time.Second}})
	}
	if len(st.Startups) != state.MaxStartups || st.Startups[0].Seconds != 100-state.MaxStartups {
		t.Errorf("startups %d first %g", len(st.Startups), st.Startups[0].Seconds)
	}
	if len(st.Rates) != 31 || len(st.Recommendations) != 11 {
		t.Errorf("rates %d recommendations %d, want 31 and 11", len(st.Rates), len(st.Recommendations))
	}
	for h := 0; h < 10*24; h++ {
		st.Record(state.Tick{At: t0.Add(time.Duration(h) * time.Hour), Decided: state.Decided{Need: h}})
	}
	if len(st.HourlyPeaks) != state.MaxHourlyPeaks {
		t.Errorf("hourly peaks %d", len(st.HourlyPeaks))
	}
	if p, ok := st.PeakAt(t0.Add(239*time.Hour + 30*time.Minute)); !ok || p != 239 {
		t.Errorf("PeakAt = %d %v", p, ok)
	}
}

// The history helpers the aggregation previews with return new slices and
// never write into the one they are given.
func TestHistoryHelpersDoNotChangeTheirInput(t *testing.T) {
	prev := make([]state.RateSample, 1, 8)
	prev[0] = state.RateSample{At: t0, RPS: 1}
	next := state.WithRate(prev, state.RateSample{At: t0.Add(time.Second), RPS: 2}, time.Minute)
	if len(next) != 2 || &next[0] == &prev[0] || prev[:2][1].RPS != 0 {
		t.Fatalf("WithRate aliased or changed its input: %v %v", prev[:2], next)
	}
	ss := make([]state.Startup, 0, 8)
	if out := state.WithStartups(ss, state.Startup{Pod: "a"}); len(out) != 1 || ss[:1][0].Pod != "" {
		t.Fatal("WithStartups wrote into its input")
	}
}

func FuzzDecode(f *testing.F) {
	b, _ := state.Encode(statetest.Sample(t0))
	f.Add(b)
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":1,"pods":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		st, err := state.Decode(doc)
		if err != nil {
			return
		}
		again, err := state.Encode(st)
		if err != nil {
			t.Fatalf("decoded state does not encode: %v", err)
		}
		if _, err := state.Decode(again); err != nil {
			t.Fatalf("re-encoded state does not decode: %v", err)
		}
	})
}

// A scale is what the observed replica count did between ticks, not what
// was recommended: an unapplied recommendation starts no cooldown.
func TestRecordDatesAppliedScalesOnly(t *testing.T) {
	st := state.New()
	earlier := t0.Add(-time.Hour)
	st.LastScaleDown = &earlier
	// No count observed yet (a state from before the field): nothing inferred.
	if up, down := st.ScaleTimes(2); up != nil || down != &earlier {
		t.Fatalf("no observed count: up %v down %v, want the stored times", up, down)
	}
	tick := t0
	st.Record(state.Tick{At: tick, Decided: state.Decided{Replicas: 5}})
	// Same count at the next tick: the previous tick's recommendation (say 4) was not applied.
	if up, down := st.ScaleTimes(5); up != nil || !down.Equal(earlier) {
		t.Fatalf("unchanged count: up %v down %v, want no new scale", up, down)
	}
	if up, down := st.ScaleTimes(4); up != nil || !down.Equal(tick) {
		t.Fatalf("count fell: down %v, want dated at the previous tick %v (up %v)", down, tick, up)
	}
	if up, down := st.ScaleTimes(7); up == nil || !up.Equal(tick) || !down.Equal(earlier) {
		t.Fatalf("count rose: up %v down %v", up, down)
	}
	st.Record(state.Tick{At: tick.Add(15 * time.Second), Decided: state.Decided{Replicas: 3}})
	if st.LastScaleDown == nil || !st.LastScaleDown.Equal(tick) || *st.Replicas != 3 {
		t.Fatalf("after observing 3: lastScaleDown %v replicas %v", st.LastScaleDown, *st.Replicas)
	}
	// ScaleTimes does not change the state.
	st.ScaleTimes(10)
	if st.LastScaleUp != nil || *st.Replicas != 3 {
		t.Fatalf("ScaleTimes changed the state: %+v", st)
	}
}

// countingReader serves n bytes of spaces and counts what was read.
type countingReader struct{ left, read int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > r.left {
		n = r.left
	}
	for i := range p[:n] {
		p[i] = ' '
	}
	r.left -= n
	r.read += n
	return int(n), nil
}

// Defect 4: an oversized state is refused after reading at most the limit,
// not read whole first (a 500 MB file cost 520 MB of memory).
func TestOversizedStateIsNotReadWhole(t *testing.T) {
	r := &countingReader{left: 500 << 20}
	if _, err := state.Read(r); err == nil {
		t.Fatal("a 500 MB state was accepted")
	}
	if r.read > state.MaxStateBytes+64<<10 {
		t.Fatalf("read %d bytes of a 500 MB state, want at most about the %d-byte limit", r.read, state.MaxStateBytes)
	}
	st, err := state.Read(strings.NewReader(`{"v":1}`))
	if err != nil || st.Version != 1 {
		t.Fatalf("a small state: %v", err)
	}
}

// Defect 3: whatever the fleet reports, Record keeps the state under the
// size Decode accepts (far below a ConfigMap's 1 MiB), and Encode refuses
// a state above it rather than write one Decode would throw away.
func TestStateStaysFarBelowTheConfigMapLimit(t *testing.T) {
	huge := make([]float64, 100_000)
	for i := range huge {
		huge[i] = float64(i) + 0.123456789
	}
	many := make([]float64, 40)
	for i := range many {
		many[i] = float64(i)*1.000000001 + 1e-9
	}
	cases := map[string]struct {
		pods    int
		buckets []float64
		name    string
	}{
		"9 pods of 100k-bucket histograms": {9, huge, "vllm-%d"},
		"3000 pods, 40-bucket histograms":  {3000, many, "vllm-deployment-7f9c8d6b5-%05d"},
		"long escaped names":               {600, many, strings.Repeat("\u0001", 200) + "%d"},
	}
	for name, c := range cases {
		st := state.New()
		for tick := 0; tick < 3; tick++ {
			at := t0.Add(time.Duration(tick) * 15 * time.Second)
			var pods []state.PodCounters
			for i := 0; i < c.pods; i++ {
				h := &state.Hist{LE: c.buckets, C: c.buckets, Sum: 1e15 / 3, Count: 1e15 / 7}
				pods = append(pods, state.PodCounters{Name: fmt.Sprintf(c.name, i), ScrapeTime: at, SeenAt: at,
					RequestsTotal: signalF(1e15 / 3), InFlight: signalF(1e15 / 11), TTFT: h, E2E: h})
			}
			if len(c.buckets) > state.MaxHistogramBuckets {
				for i := range pods { // what HistOf keeps of such a histogram
					pods[i].TTFT, pods[i].E2E = nil, nil
				}
			}
			st.Record(state.Tick{At: at, Observed: state.Observed{Pods: pods}, Decided: state.Decided{Replicas: c.pods}})
		}
		b, err := state.Encode(st)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(b) > state.MaxStateBytes {
			t.Fatalf("%s: %d bytes", name, len(b))
		}
		if _, err := state.Decode(b); err != nil {
			t.Fatalf("%s: the state Encode wrote does not decode: %v", name, err)
		}
		if len(st.Pods) == 0 || len(st.Pods) > state.MaxPods {
			t.Fatalf("%s: %d pods kept", name, len(st.Pods))
		}
		t.Logf("%s: %d pods kept, %d bytes", name, len(st.Pods), len(b))
	}
	if state.HistOf(&signal.Histogram{Buckets: make([]signal.Bucket, state.MaxHistogramBuckets+1)}) != nil {
		t.Error("HistOf kept a histogram above MaxHistogramBuckets")
	}
	// A state built by hand past the limit is refused, not written.
	big := state.New()
	for i := 0; i < 20; i++ {
		big.Pods = append(big.Pods, state.PodCounters{Name: fmt.Sprintf("p%02d", i), TTFT: &state.Hist{LE: huge, C: huge}})
	}
	if _, err := state.Encode(big); err == nil {
		t.Fatal("Encode wrote a state Decode refuses")
	}
}

func signalF(f float64) *float64 { return &f }

// TestServiceAtItsLimitsFitsTheBudget: a service memory filled to every
// limit Check allows still leaves the pods their budget (the state's
// non-pod part must stay under 128 KiB).
func TestServiceAtItsLimitsFitsTheBudget(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var s state.Service
	for i := 0; i < state.MaxForecastScores; i++ {
		s.Forecast.Scores = append(s.Forecast.Scores, 0.123456789012345)
	}
	for i := 0; i < state.MaxForecastPending; i++ {
		s.Forecast.Pending = append(s.Forecast.Pending, forecast.Pending{At: at, Due: at, Forecast: 12.3456789012, Upper: 23.456789012, Peak: 34.56789012})
	}
	for i := 0; i < state.MaxServiceNeeds; i++ {
		s.Needs = append(s.Needs, state.Need{At: at, Pods: 1000})
	}
	for i := 0; i < state.MaxLengthBuckets; i++ {
		s.Prompts.LE = append(s.Prompts.LE, 123456.789)
		s.Prompts.C = append(s.Prompts.C, 98765.4321)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	st := state.New()
	st.Service = &s
	b, err := state.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 128<<10 {
		t.Errorf("a service memory at its limits encodes to %d bytes, more than the 128 KiB budget", len(b))
	}
	t.Logf("service memory at its limits: %d bytes", len(b))
}
