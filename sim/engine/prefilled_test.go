package engine

import (
	"context"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/workload"
)

// A prefilled request (the decode leg of a P/D pair) computes only its
// last prompt token against the transferred KV: its TTFT is one
// iteration of one token over the whole prompt's KV, it decodes as the
// same request would after a local prefill, and its prompt still counts
// in full in the prompt-token counter.
func TestPrefilledRequestSkipsPrefillComputeButHoldsItsKV(t *testing.T) {
	cfg := DefaultConfig()
	req := workload.Request{Arrival: time.Second, InputTokens: 8000, OutputTokens: 51, Prefilled: true}
	e, res := replayOne(t, cfg, req)
	m := cfg.Model
	// One 1-token iteration over the 8000 transferred KV tokens, then the
	// decode of a locally prefilled request.
	checkTimeline(t, m, res, 1, m.Iteration(1, AttnPairs(1, 7999), 0, 8000), 8000, 51)
	if full := m.IsolatedTTFT(8000); float64(res.TTFT[0]) > full/10 {
		t.Errorf("prefilled TTFT %.4f is not far below a local prefill's %.4f", res.TTFT[0], full)
	}
	if got := e.pods[0].promptTotal; got != 8000 {
		t.Errorf("prompt tokens counted %g, want 8000 (vLLM counts a transferred prompt in full)", got)
	}
	if res.Infeasible != 0 {
		t.Errorf("a prefilled request counted infeasible: its leg computes one token")
	}
}

// The transferred KV takes cache room on admission: two prefilled
// requests whose prompts do not fit together are admitted one after the
// other, as two local prefills would be.
func TestPrefilledRequestsAreAdmittedOnKVRoom(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model.KVCapacity = 10000
	reqs := []workload.Request{
		{Arrival: time.Second, InputTokens: 6000, OutputTokens: 20, Prefilled: true},
		{Arrival: time.Second, InputTokens: 6000, OutputTokens: 20, Prefilled: true},
	}
	res, err := Run(context.Background(), cfg, &sliceSource{reqs: reqs}, fixed{1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 2 {
		t.Fatalf("completed %d of 2", res.Completed)
	}
	if res.TTFT[1] <= res.TTFT[0]+float32(19*cfg.Model.DecodeStep(1, 6000)) {
		t.Errorf("second TTFT %.4f not after the first request's decode (first %.4f): its KV was admitted without room", res.TTFT[1], res.TTFT[0])
	}
}
