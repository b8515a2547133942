package state_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// fullHist is a 128-bucket histogram of 17-digit values, the widest a
// pod's histogram may be kept at.
func fullHist(seed int) *state.Hist {
	h := &state.Hist{Sum: 1.2345678901234567e15 + float64(seed), Count: 7.6543210987654321e14}
	for i := 0; i < state.MaxHistogramBuckets; i++ {
		h.LE = append(h.LE, 1.2345678901234567e-3*float64(i+1)+float64(seed)*1e-17)
		h.C = append(h.C, 5.4321098765432109e12*float64(i+1))
	}
	return h
}

// fullPods are n pods whose five histograms (TTFT, E2E and the three
// service histograms) all carry 128 buckets of 17-digit values.
func fullPods(n int, at time.Time) []state.PodCounters {
	var pods []state.PodCounters
	for i := 0; i < n; i++ {
		pods = append(pods, state.PodCounters{Name: fmt.Sprintf("vllm-7f9c8d6b5-%05d", i), ScrapeTime: at, SeenAt: at,
			RequestsTotal: signalF(1.2345678901234567e14), InFlight: signalF(12),
			TTFT: fullHist(i), E2E: fullHist(i + 1),
			Service: &state.ServiceCounters{ITLSum: 1.2345678901234567e9, ITLCount: 9.876543210987654e8,
				PromptTokens: signalF(1.2345678901234567e14), OutputTokens: signalF(2.2345678901234567e14),
				Queue: fullHist(i + 2), Prompts: fullHist(i + 3), Outputs: fullHist(i + 4),
				E2ESum: 1.2345678901234567e9, E2ECount: 9.876543210987654e8, Waiting: signalF(1234)}})
	}
	return pods
}

// N1 (issue 15): 28–57 pods whose five histograms carry 128 buckets of
// 17-digit values made a state above MaxStateBytes (the size bound counted
// the TTFT and E2E histograms only) and every tick failed on saving it.
// Record now always leaves a state Encode writes, coarsening histograms
// before it drops any pod, and says so once per episode.
func TestStateOverItsBudgetIsShedNotRefused(t *testing.T) {
	for _, n := range []int{28, 57, 200} {
		st := state.New()
		var began int
		for tick := 0; tick < 3; tick++ {
			at := t0.Add(time.Duration(tick) * 15 * time.Second)
			trim := st.Record(state.Tick{At: at, Observed: state.Observed{Pods: fullPods(n, at)}, Decided: state.Decided{Replicas: n}})
			if trim.Began {
				began++
			}
			if len(trim.Shed) == 0 {
				t.Fatalf("%d pods, tick %d: nothing shed, want the histograms coarsened", n, tick)
			}
			b, err := state.Encode(st)
			if err != nil {
				t.Fatalf("%d pods, tick %d: %v", n, tick, err)
			}
			if _, err := state.Decode(b); err != nil {
				t.Fatalf("%d pods: the state written does not decode: %v", n, err)
			}
		}
		if began != 1 {
			t.Errorf("%d pods: shedding announced %d times over 3 ticks, want once", n, began)
		}
		if n <= 57 && len(st.Pods) != n {
			t.Errorf("%d pods: %d kept; coarser buckets must make room for all of them", n, len(st.Pods))
		}
		t.Logf("%d pods: %d kept (%v)", n, len(st.Pods), st.Record(state.Tick{At: t0.Add(time.Minute), Observed: state.Observed{Pods: fullPods(n, t0.Add(time.Minute))}}).Shed)
		// A tick that fits again ends the episode: the next shedding is said again.
		small := st.Record(state.Tick{At: t0.Add(time.Hour), Decided: state.Decided{Replicas: 1}})
		if len(small.Shed) != 0 || st.Trimmed {
			t.Errorf("%d pods: a state of no pods still shed %v", n, small.Shed)
		}
	}
}

// Coarsening keeps the cumulative counts at the bounds it keeps, the last
// (+Inf) bound among them: the next tick's delta is exact there.
func TestCoarsenKeepsCumulativeCountsAtKeptBounds(t *testing.T) {
	h := fullHist(0)
	c := h.Coarsen(16)
	if len(c.LE) > 16 || len(c.LE) != len(c.C) || c.LE[len(c.LE)-1] != h.LE[len(h.LE)-1] || c.Count != h.Count || c.Sum != h.Sum {
		t.Fatalf("coarsened to %d/%d buckets, last %v: %+v", len(c.LE), len(c.C), c.LE[len(c.LE)-1], c)
	}
	at := map[float64]float64{}
	for i, le := range h.LE {
		at[le] = h.C[i]
	}
	for i, le := range c.LE {
		if at[le] != c.C[i] {
			t.Errorf("bound %v: count %v, was %v", le, c.C[i], at[le])
		}
	}
	if got := h.Coarsen(state.MaxHistogramBuckets); len(got.LE) != state.MaxHistogramBuckets {
		t.Error("a histogram already within the level was changed")
	}
}
