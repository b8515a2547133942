package workload

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// Poisson arrivals read 1 at every window; the same arrivals in batches
// of four read 4 at windows that hold many batches; a rate that doubles
// every other minute reads far above 1 at a minute and barely at a second.
func TestDispersionSeesBatchesAndWanderAtTheirScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var poisson, batched, wander []Request
	var at time.Duration
	for at < 2*time.Hour {
		at += time.Duration(rng.ExpFloat64() / 10 * float64(time.Second)) // 10 req/s
		poisson = append(poisson, Request{Arrival: at})
		for range 4 {
			batched = append(batched, Request{Arrival: at})
		}
	}
	at = 0
	for at < 2*time.Hour {
		rate := 10.0
		if int(at/time.Minute)%2 == 1 {
			rate = 20
		}
		at += time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
		wander = append(wander, Request{Arrival: at})
	}
	for _, c := range []struct {
		name     string
		reqs     []Request
		window   time.Duration
		low, hig float64
	}{
		{"poisson, 1 s", poisson, time.Second, 0.9, 1.1},
		{"poisson, 30 s", poisson, 30 * time.Second, 0.85, 1.15},
		{"batches of 4, 2 s", batched, 2 * time.Second, 3.6, 4.4},
		{"batches of 4, 15 s", batched, 15 * time.Second, 3.4, 4.6},
		{"wandering rate, 1 s", wander, time.Second, 0.9, 1.3},
		{"wandering rate, 60 s", wander, time.Minute, 20, math.Inf(1)},
	} {
		z, ok := Dispersion(c.reqs, c.window)
		if !ok || z < c.low || z > c.hig {
			t.Errorf("%s: z %.3g (ok %v), want in [%g, %g]", c.name, z, ok, c.low, c.hig)
		}
	}
}

func TestDispersionNeedsTwoWindowsOfArrivals(t *testing.T) {
	one := []Request{{Arrival: 0}, {Arrival: time.Second}, {Arrival: 2 * time.Second}}
	for _, c := range []struct {
		name   string
		reqs   []Request
		window time.Duration
	}{
		{"no requests", nil, time.Second},
		{"one whole window", one, 1500 * time.Millisecond},
		{"a window of zero", one, 0},
	} {
		if z, ok := Dispersion(c.reqs, c.window); ok {
			t.Errorf("%s: read %g", c.name, z)
		}
	}
	if z, ok := Dispersion(one, time.Second); !ok || z != 0 {
		t.Errorf("one request a second: z %g (ok %v), want 0 (every count the same)", z, ok)
	}
}
