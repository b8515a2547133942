package state

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
)

func TestAppendStateMatchesMarshal(t *testing.T) {
	zone := time.FixedZone("x", 5*3600+45*60)
	at := time.Date(2026, 11, 29, 12, 0, 0, 5, zone)
	full := sample()
	full.LastTick, full.LastScaleDown, full.LastScaleUpSignals = &at, &at, 3
	full.PodCapacityRPS, full.LastQueue = signal.F(1e-7), signal.F(0)
	zero := 0
	full.Replicas = &zero
	full.PutPod(PodCounters{Name: "c<&>\"\u2028\xff", ScrapeTime: at, InFlight: signal.F(1e21),
		TTFT: &Hist{}, E2E: &Hist{LE: []float64{}, C: []float64{5e-324}, Sum: math.MaxFloat64, Count: -0.0}})
	for i, st := range []*State{New(), sample(), full, {Version: 1, Pods: []PodCounters{}, Rates: []RateSample{}}} {
		want, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendState(nil, st)
		if err != nil || string(got) != string(want) {
			t.Errorf("state %d:\ngot  %s (%v)\nwant %s", i, got, err, want)
		}
	}
	bad := sample()
	bad.GPUUtilEWMA = signal.F(math.NaN())
	if _, err := Encode(bad); err == nil {
		t.Error("NaN encoded")
	}
	bad = sample()
	bad.Recommendations[0].At = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := Encode(bad); err == nil {
		t.Error("year 10000 encoded")
	}
}

func FuzzAppendStateMatchesMarshal(f *testing.F) {
	for _, in := range stateCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		st, err := decodeDoc(in)
		if err != nil {
			return
		}
		want, err := json.Marshal(st)
		if err != nil {
			return
		}
		got, err := appendState(nil, st)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%q:\ngot  %s (%v)\nwant %s", in, got, err, want)
		}
	})
}
