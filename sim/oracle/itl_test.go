package oracle_test

import (
	"context"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/workload"
)

// A decode pool's oracle (Options.ITL) holds the inter-token objective
// too: on prefilled, long-output requests a TTFT-only oracle batches
// sequences until their gaps run past a tight ITL objective, the ITL
// oracle keeps them within it with more pods.
func TestOracleWithITLHoldsTheInterTokenObjective(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.MaxReplicas = 16
	cfg.TPOTSLOSeconds = 0.012
	src := workload.Synthetic(workload.SyntheticOptions{Duration: 10 * time.Minute, BaseRate: 12, DiurnalPeriod: time.Hour, Seed: 5})
	reqs, err := workload.All(src)
	if err != nil {
		t.Fatal(err)
	}
	for i := range reqs {
		reqs[i].OutputTokens *= 4
		reqs[i].Prefilled = true
	}
	const target = 0.99
	plain, err := oracle.Search(context.Background(), cfg, reqs, oracle.Options{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Run.ITLAttainment() >= target {
		t.Fatalf("TTFT-only oracle already meets the ITL objective (%.4f): the scenario tests nothing", plain.Run.ITLAttainment())
	}
	itl, err := oracle.Search(context.Background(), cfg, reqs, oracle.Options{Target: target, ITL: true})
	if err != nil {
		t.Fatal(err)
	}
	if itl.Run.ITLAttainment() < target || itl.Run.FeasibleTTFTAttainment() < target {
		t.Errorf("ITL oracle: ITL %.4f, TTFT %.4f, want both ≥ %.2f", itl.Run.ITLAttainment(), itl.Run.FeasibleTTFTAttainment(), target)
	}
	if itl.Static <= plain.Static || itl.Run.GPUSeconds <= plain.Run.GPUSeconds {
		t.Errorf("ITL oracle static %d, %.0f GPU-s; TTFT-only %d, %.0f GPU-s: holding ITL should cost more", itl.Static, itl.Run.GPUSeconds, plain.Static, plain.Run.GPUSeconds)
	}
}
