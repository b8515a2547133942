package pd

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/scaler"
	"github.com/inferscale/inferscale/sim/workload"
)

type fixed struct{ n int }

func (f fixed) Name() string                              { return "fixed" }
func (f fixed) Period() time.Duration                     { return 15 * time.Second }
func (f fixed) Recommend(scaler.Observation) (int, error) { return f.n, nil }

func replay(cfg engine.Config, seen *[]workload.Request) Replay {
	return func(ctx context.Context, reqs []workload.Request) (*engine.Result, error) {
		*seen = reqs
		return engine.Run(ctx, cfg, workload.FromRequests(reqs), fixed{1})
	}
}

// On a hand-built trace the user's TTFT is the prefill leg (a full
// prefill), the transfer (per prompt token) and the decode leg (one
// token over the transferred KV), and each pool sees the workload its
// role gets.
func TestUserTTFTIsTheSumOfTheLegs(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.InitialReplicas = 1
	reqs := []workload.Request{
		{Arrival: time.Second, InputTokens: 4000, OutputTokens: 30},
		{Arrival: 100 * time.Second, InputTokens: 1000, OutputTokens: 10},
	}
	const perTok = 1e-5
	var preSeen, decSeen []workload.Request
	res, err := Run(context.Background(), reqs, replay(cfg, &preSeen), replay(cfg, &decSeen), perTok, 2)
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Model
	for i, r := range reqs {
		if preSeen[i].OutputTokens != 1 || preSeen[i].Prefilled {
			t.Errorf("prefill pool request %d: output %d prefilled %v, want 1 token, not prefilled", i, preSeen[i].OutputTokens, preSeen[i].Prefilled)
		}
		pre := m.IsolatedTTFT(r.InputTokens)
		xfer := perTok * float64(r.InputTokens)
		dec := m.Iteration(1, engine.AttnPairs(1, r.InputTokens-1), 0, r.InputTokens)
		if got := float64(res.UserTTFT[i]); math.Abs(got-(pre+xfer+dec)) > 1e-5 {
			t.Errorf("request %d: user TTFT %.6f, want %.6f + %.6f + %.6f", i, got, pre, xfer, dec)
		}
		d := decSeen[i]
		wantArr := r.Arrival + time.Duration((pre+xfer)*float64(time.Second))
		if !d.Prefilled || d.OutputTokens != r.OutputTokens || (d.Arrival-wantArr).Abs() > time.Microsecond {
			t.Errorf("decode pool request %d = %+v, want prefilled, %d tokens out, arriving at %v", i, d, r.OutputTokens, wantArr)
		}
	}
	if res.UserMet != 2 || res.UserAttainment() != 1 {
		t.Errorf("met %d (%.2f), want both", res.UserMet, res.UserAttainment())
	}
	if res.Decode.Gaps != 29+9 {
		t.Errorf("decode pool gaps %g, want 38 (every output token after the first)", res.Decode.Gaps)
	}
}

// A request the prefill pool rejects never reaches the decode pool and
// is a miss; the others are unaffected.
func TestRejectedInThePrefillPoolIsAMiss(t *testing.T) {
	pcfg := engine.DefaultConfig()
	pcfg.InitialReplicas = 1
	pcfg.Model.MaxModelLen = 5000
	dcfg := engine.DefaultConfig()
	dcfg.InitialReplicas = 1
	reqs := []workload.Request{
		{Arrival: time.Second, InputTokens: 1000, OutputTokens: 5},
		{Arrival: 2 * time.Second, InputTokens: 6000, OutputTokens: 5},
		{Arrival: 3 * time.Second, InputTokens: 1000, OutputTokens: 5},
	}
	var preSeen, decSeen []workload.Request
	res, err := Run(context.Background(), reqs, replay(pcfg, &preSeen), replay(dcfg, &decSeen), DefaultTransferPerToken, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Prefill.RejectedTooLong != 1 {
		t.Fatalf("prefill pool rejected %d, want 1", res.Prefill.RejectedTooLong)
	}
	if len(decSeen) != 2 || res.Decode.Requests != 2 {
		t.Fatalf("decode pool got %d requests, want the 2 the prefill pool served", len(decSeen))
	}
	for _, d := range decSeen {
		if d.InputTokens == 6000 {
			t.Errorf("the rejected request reached the decode pool")
		}
	}
	if !math.IsInf(float64(res.UserTTFT[1]), 1) || res.UserMet != 2 {
		t.Errorf("user TTFTs %v met %d: want the rejected one +Inf and the other two met", res.UserTTFT, res.UserMet)
	}
	if got, want := res.UserAttainment(), 2.0/3; math.Abs(got-want) > 1e-9 {
		t.Errorf("attainment %.4f, want %.4f", got, want)
	}
}

// A decode leg slower than the budget makes a user miss even though each
// pool served the request.
func TestSlowLegsMissTheUserObjective(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.InitialReplicas = 1
	reqs := []workload.Request{{Arrival: time.Second, InputTokens: 2000, OutputTokens: 3}}
	var a, b []workload.Request
	res, err := Run(context.Background(), reqs, replay(cfg, &a), replay(cfg, &b), 1e-3, 2) // 2 s of transfer
	if err != nil {
		t.Fatal(err)
	}
	if res.UserMet != 0 || res.Prefill.TTFTMet != 1 || res.Decode.TTFTMet != 1 {
		t.Errorf("met user %d, prefill %d, decode %d: want each leg in time and the sum late", res.UserMet, res.Prefill.TTFTMet, res.Decode.TTFTMet)
	}
}

func TestDecodeRequestsChecksLengths(t *testing.T) {
	if _, _, err := DecodeRequests(make([]workload.Request, 2), make([]float32, 1), 0); err == nil {
		t.Error("no error for one TTFT per two requests")
	}
}

func TestInfeasibleCountsPromptsTooLongForTheObjective(t *testing.T) {
	m := engine.DefaultConfig().Model
	reqs := []workload.Request{{InputTokens: 1000}, {InputTokens: 120000}}
	if got := Infeasible(reqs, m, 0, 2); got != 1 {
		t.Errorf("infeasible %d, want 1 (the 120k-token prompt)", got)
	}
	if got := Infeasible(reqs[:1], m, 1e-2, 2); got != 1 {
		t.Errorf("infeasible %d, want 1 (10 s of transfer)", got)
	}
}
