package state

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func sample() *State {
	st := New()
	at := t0
	st.LastScaleUp = &at
	replicas := 3
	st.Replicas = &replicas
	st.GPUUtilEWMA = signal.F(0.1 + 0.2) // not exactly representable: must round-trip bit for bit
	st.PutPod(PodCounters{Name: "b", ScrapeTime: t0, SeenAt: t0, RequestsTotal: signal.F(1e6 / 3)})
	st.PutPod(PodCounters{Name: "a", ScrapeTime: t0, SeenAt: t0,
		TTFT: HistOf(&signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.1, Count: 3}}, Sum: 0.123456789, Count: 4})})
	st.AddStartup(Startup{Pod: "a", Seconds: 61.5, At: t0})
	st.AddRate(RateSample{At: t0, RPS: 7.25}, time.Minute)
	st.AddRecommendation(Recommendation{At: t0, Replicas: 3}, time.Minute)
	st.NotePeak(t0, 5)
	return st
}

func TestEncodeDecodeRoundTripsExactly(t *testing.T) {
	st := sample()
	b, err := Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
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
		"unsorted":     `{"v":1,"pods":[{"name":"b","scrapeTime":"2026-01-01T00:00:00Z","seenAt":"2026-01-01T00:00:00Z"},{"name":"a","scrapeTime":"2026-01-01T00:00:00Z","seenAt":"2026-01-01T00:00:00Z"}]}`,
		"negative":     `{"v":1,"recommendations":[{"at":"2026-01-01T00:00:00Z","replicas":-1}]}`,
		"wrong type":   `{"v":1,"gpuUtilEwma":"high"}`,
		"ragged hist":  `{"v":1,"pods":[{"name":"a","scrapeTime":"2026-01-01T00:00:00Z","seenAt":"2026-01-01T00:00:00Z","ttft":{"le":[1,2],"c":[1],"sum":0,"count":1}}]}`,
	} {
		if _, err := Decode([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Decode([]byte(strings.Repeat(" ", MaxStateBytes+1))); err == nil {
		t.Error("oversized state accepted")
	}
}

func TestFileStoreSavesAndRecoversFromCorruption(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.json")
	fs := FileStore{Path: path}
	txn, err := fs.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if txn.Warning() != nil || len(txn.State().Pods) != 0 {
		t.Fatal("a missing file must give a fresh state without warning")
	}
	if err := txn.Save(ctx, sample()); err != nil {
		t.Fatal(err)
	}
	if err := txn.Save(ctx, sample()); err == nil {
		t.Error("second Save in one transaction accepted")
	}
	txn.Close()
	txn, err = fs.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(txn.State(), sample()) {
		t.Fatal("saved state not read back")
	}
	txn.Close()
	if err := os.WriteFile(path, []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	txn, err = fs.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if txn.Warning() == nil || len(txn.State().Recommendations) != 0 {
		t.Fatal("corrupt file must give a warning and a fresh state")
	}
	left, _ := filepath.Glob(path + ".tmp-*")
	if len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestFileStoreLockExcludes(t *testing.T) {
	ctx := context.Background()
	fs := FileStore{Path: filepath.Join(t.TempDir(), "state.json")}
	first, err := fs.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := fs.Begin(short); err == nil {
		t.Fatal("second transaction opened while the first holds the lock")
	}
	first.Close()
	second, err := fs.Begin(ctx)
	if err != nil {
		t.Fatalf("lock not released: %v", err)
	}
	second.Close()
}

func TestHistoryBounds(t *testing.T) {
	st := New()
	for i := 0; i < 100; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		st.AddStartup(Startup{Pod: string(rune('a' + i%26)), Seconds: float64(i), At: at})
		st.AddRate(RateSample{At: at, RPS: 1}, 30*time.Second)
		st.AddRecommendation(Recommendation{At: at, Replicas: 1}, 10*time.Second)
	}
	if len(st.Startups) != MaxStartups || st.Startups[0].Seconds != 100-MaxStartups {
		t.Errorf("startups %d first %g", len(st.Startups), st.Startups[0].Seconds)
	}
	if len(st.Rates) != 31 || len(st.Recommendations) != 11 {
		t.Errorf("rates %d recommendations %d, want 31 and 11", len(st.Rates), len(st.Recommendations))
	}
	for d := 0; d < 10*24; d++ {
		st.NotePeak(t0.Add(time.Duration(d)*time.Hour), d)
	}
	if len(st.HourlyPeaks) != MaxHourlyPeaks {
		t.Errorf("hourly peaks %d", len(st.HourlyPeaks))
	}
	if p, ok := st.PeakAt(t0.Add(239*time.Hour + 30*time.Minute)); !ok || p != 239 {
		t.Errorf("PeakAt = %d %v", p, ok)
	}
}

func FuzzDecode(f *testing.F) {
	b, _ := Encode(sample())
	f.Add(b)
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":1,"pods":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		st, err := Decode(doc)
		if err != nil {
			return
		}
		again, err := Encode(st)
		if err != nil {
			t.Fatalf("decoded state does not encode: %v", err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("re-encoded state does not decode: %v", err)
		}
	})
}

// A scale is what the observed replica count did between ticks, not what
// was recommended: an unapplied recommendation starts no cooldown.
func TestObserveReplicasRecordsAppliedScalesOnly(t *testing.T) {
	st := New()
	earlier := t0.Add(-time.Hour)
	st.LastScaleDown = &earlier
	// No count observed yet (a state from before the field): nothing inferred.
	if up, down := st.ScaleTimes(2); up != nil || down != &earlier {
		t.Fatalf("no observed count: up %v down %v, want the stored times", up, down)
	}
	tick := t0
	st.ObserveReplicas(5)
	st.LastTick = &tick
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
	next := tick.Add(15 * time.Second)
	st.ObserveReplicas(3)
	st.LastTick = &next
	if st.LastScaleDown == nil || !st.LastScaleDown.Equal(tick) || *st.Replicas != 3 {
		t.Fatalf("after observing 3: lastScaleDown %v replicas %v", st.LastScaleDown, *st.Replicas)
	}
	// ScaleTimes does not change the state.
	st.ScaleTimes(10)
	if st.LastScaleUp != nil || *st.Replicas != 3 {
		t.Fatalf("ScaleTimes changed the state: %+v", st)
	}
}
