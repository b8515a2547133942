package main

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/model"
)

// profileOut runs `simulate profile args...` and parses its output the way
// the policy reads the profile setting.
func profileOut(t *testing.T, args ...string) model.Params {
	t.Helper()
	var b strings.Builder
	if err := cmdProfile(args, &b); err != nil {
		t.Fatalf("profile %v: %v", args, err)
	}
	if strings.Count(b.String(), "\n") != 1 {
		t.Fatalf("profile %v printed %q, want one line", args, b.String())
	}
	p, err := knobs.ParseProfile(strings.TrimSpace(b.String()))
	if err != nil {
		t.Fatalf("profile %v printed %q, which the profile setting refuses: %v", args, b.String(), err)
	}
	return p
}

func near(got, want float64) bool { return math.Abs(got/want-1) < 1e-5 }

// TestProfilePrintsTheFleetModelAsAPrior guards `simulate profile`: its
// line is a valid profile setting whose coefficients are the engine's
// (α = IterBase 6 ms, β = PerPrefillToken 14.94 µs + PerAttnPair 0.812 ns ×
// 1,155/2 = 15.409 µs, γs = PerDecodeSeq 0.29 ms, γkv = PerKVToken 0.039 µs
// × 400k tokens = 15.6 ms), that -gpu-speed 2 halves and 0.5 doubles every
// one, and that -prompt moves only β, by the attention term.
func TestProfilePrintsTheFleetModelAsAPrior(t *testing.T) {
	base := profileOut(t)
	want := model.Params{Alpha: 0.006, Beta: 14.94e-6 + 0.812e-9*1155/2, GammaSeq: 0.00029, GammaKV: 0.039e-6 * 400000}
	if !near(base.Alpha, want.Alpha) || !near(base.Beta, want.Beta) || !near(base.GammaSeq, want.GammaSeq) || !near(base.GammaKV, want.GammaKV) {
		t.Errorf("profile %+v, want %+v", base, want)
	}
	for _, c := range []struct {
		speed  string
		factor float64
	}{{"2", 0.5}, {"0.5", 2}} {
		p := profileOut(t, "-gpu-speed", c.speed)
		if !near(p.Alpha, base.Alpha*c.factor) || !near(p.Beta, base.Beta*c.factor) || !near(p.GammaSeq, base.GammaSeq*c.factor) || !near(p.GammaKV, base.GammaKV*c.factor) {
			t.Errorf("-gpu-speed %s: %+v, want %g × %+v", c.speed, p, c.factor, base)
		}
	}
	long := profileOut(t, "-prompt", "8192")
	if !near(long.Beta, 14.94e-6+0.812e-9*8192/2) || long.Alpha != base.Alpha || long.GammaSeq != base.GammaSeq || long.GammaKV != base.GammaKV {
		t.Errorf("-prompt 8192: %+v; want only β moved, to %g", long, 14.94e-6+0.812e-9*8192/2)
	}
}

func TestProfileRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-gpu-speed", "0"}, {"-gpu-speed", "-2"}, {"-gpu-speed", "NaN"}, {"-gpu-speed", "Inf"}, {"-gpu-speed", "1e308"},
		{"-gpu-speed", "x"}, {"-prompt", "0"}, {"-prompt", "200000"}, {"-prompt", "1.5"}, {"-nosuchflag"}, {"extra"},
	} {
		var b strings.Builder
		if err := cmdProfile(args, &b); err == nil {
			t.Errorf("profile %v: accepted, printed %q", args, b.String())
		} else if b.Len() > 0 {
			t.Errorf("profile %v: failed (%v) but printed %q", args, err, b.String())
		}
		if err := dispatch(context.Background(), append([]string{"profile"}, args...), quietLog()); err == nil {
			t.Errorf("simulate profile %v: accepted", args)
		}
	}
}
