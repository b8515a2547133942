package state_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/statetest"
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
