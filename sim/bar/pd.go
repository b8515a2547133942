package bar

import (
	"fmt"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/pd"
	"github.com/inferscale/inferscale/sim/runner"
)

// PDWorkload is one trace of the P/D cells (issue 19 item 3): replayed
// through a prefill pool, the KV transfer and a decode pool (package pd).
type PDWorkload struct {
	Name        string
	Trace       runner.Trace // Seed is set per cell
	OutputScale float64      // every output × this (0 or 1: as recorded)
	// Seeded workloads are generated from the seed, so they take every
	// seed of the matrix; a recorded trace takes the first seed only.
	Seeded bool
}

// PDWorkloads are the two hours docs/simulator.md measures with simulate
// pd: Mooncake's conversation hour (prefill-heavy: 12k tokens in, 343
// out) and the synthetic demo with every output ×4 (decode-heavy).
func PDWorkloads(shared string) []PDWorkload {
	return []PDWorkload{
		{Name: "mooncake-conv", Trace: runner.Trace{Spec: tracePath(shared, "mooncake_fast25", "conversation_trace.jsonl"), Duration: time.Hour}},
		{Name: "demo-out×4", Trace: runner.Trace{Spec: "synthetic:demo"}, OutputScale: 4, Seeded: true},
	}
}

// PDCase is one P/D cell.
type PDCase struct {
	Workload PDWorkload
	Seed     int64
	Speed    float64 // both pools' GPU speed
}

// Name labels the cell: pd/workload/seed/GPU speed.
func (c PDCase) Name() string {
	return fmt.Sprintf("pd/%s/s%d/gpu×%g", c.Workload.Name, c.Seed, c.Speed)
}

// Trace is the cell's trace spec.
func (c PDCase) Trace() runner.Trace {
	t := c.Workload.Trace
	t.Seed = c.Seed
	return t
}

// PDMatrix is every P/D cell, workload-major: a seeded workload at every
// seed, a recorded one at the first.
func PDMatrix(workloads []PDWorkload, seeds []int64, speeds []float64) []PDCase {
	var out []PDCase
	for _, w := range workloads {
		ss := seeds
		if !w.Seeded && len(ss) > 1 {
			ss = ss[:1]
		}
		for _, seed := range ss {
			for _, sp := range speeds {
				out = append(out, PDCase{Workload: w, Seed: seed, Speed: sp})
			}
		}
	}
	return out
}

// PDSettings are what every P/D cell shares: simulate pd's defaults.
type PDSettings struct {
	Target           float64 // attainment objective (0.99) of user TTFT and of decode ITL
	SLO              float64 // the user's TTFT objective, seconds
	PrefillSLO       float64 // the prefill leg's; the decode leg gets SLO − PrefillSLO
	ITLSLO           float64 // the decode pool's inter-token objective, seconds
	TransferPerToken float64 // seconds
	MinReplicas      int     // per pool
	MaxReplicas      int     // per pool
	MaxFlapsHour     float64 // per pool
	// Model is the fleet model both pools run on, at the cell's GPU speed
	// (engine.Named): the oracle, the static pairs and the peers' pools
	// too, and the policy's prior is not told.
	Model engine.Model
}

// DefaultPDSettings are simulate pd's defaults and the unified bar's
// target and flap limit.
func DefaultPDSettings() PDSettings {
	return PDSettings{Target: 0.99, SLO: 2, PrefillSLO: 1.5, ITLSLO: 0.05, TransferPerToken: pd.DefaultTransferPerToken,
		MinReplicas: 1, MaxReplicas: 64, MaxFlapsHour: 1, Model: engine.DefaultConfig().Model}
}

// Pools are the cell's two pools before the warm start is sized (the
// engine's defaults otherwise, as simulate pd's).
func (s PDSettings) Pools(c PDCase, opts runner.Options) pd.Pools {
	pool := func(slo float64) engine.Config {
		cfg := engine.DefaultConfig()
		cfg.Seed = uint64(c.Seed)
		cfg.Model = s.Model.Scaled(c.Speed)
		cfg.TTFTSLOSeconds = slo
		cfg.TPOTSLOSeconds = s.ITLSLO
		cfg.MinReplicas, cfg.MaxReplicas = s.MinReplicas, s.MaxReplicas
		return cfg
	}
	return pd.Pools{Prefill: pool(s.PrefillSLO), Decode: pool(s.SLO - s.PrefillSLO), TransferPerToken: s.TransferPerToken, SLO: s.SLO, Options: opts}
}

// PDFigures are a pair's outcome as the P/D cells report it.
type PDFigures struct {
	UserAttainment  float64 `json:"userAttainment"` // user TTFT attainment of the feasible requests
	ITLAttainment   float64 `json:"itlAttainment"`  // the decode pool's inter-token gaps within the objective
	PrefillGPUHours float64 `json:"prefillGPUHours"`
	DecodeGPUHours  float64 `json:"decodeGPUHours"`
}

// GPUHours is both pools'.
func (f PDFigures) GPUHours() float64 { return f.PrefillGPUHours + f.DecodeGPUHours }

// reaches reports whether f's attainments are at least want's.
func (f PDFigures) reaches(want PDFigures) bool {
	return f.UserAttainment >= want.UserAttainment && f.ITLAttainment >= want.ITLAttainment
}

// pdFigures reads a pair's figures, infeasible requests left out.
func pdFigures(r *pd.Result, infeasible int) PDFigures {
	r.Infeasible = infeasible
	return PDFigures{UserAttainment: r.FeasibleUserAttainment(), ITLAttainment: r.Decode.ITLAttainment(),
		PrefillGPUHours: r.Prefill.GPUHours(), DecodeGPUHours: r.Decode.GPUHours()}
}

// PDPeer is a peer pair reported next to the policy pair.
type PDPeer struct {
	Name string `json:"name"` // "prefill + decode"
	PDFigures
	// Compared is whether the peer reaches the policy pair's attainments,
	// so that the policy pair must cost less (PDVerdict.BelowPeers).
	Compared bool `json:"compared"`
}

// PDRow is one P/D cell's outcome.
type PDRow struct {
	Case string `json:"case"`

	// The policy pair.
	PDFigures
	PrefillKilled       int     `json:"prefillKilled"` // by scale-down
	DecodeKilled        int     `json:"decodeKilled"`
	PrefillFlapsPerHour float64 `json:"prefillFlapsPerHour"`
	DecodeFlapsPerHour  float64 `json:"decodeFlapsPerHour"`

	// The oracle per pool (OracleOK false: none found).
	OracleOK     bool      `json:"oracleOK"`
	OracleTarget float64   `json:"oracleTarget"` // the target it was searched for (below Target when that is out of reach)
	Oracle       PDFigures `json:"oracle"`

	// The cheapest static pair found reaching the policy pair's
	// attainments (StaticPrefill 0: not even MaxReplicas + MaxReplicas).
	StaticPrefill int       `json:"staticPrefill"`
	StaticDecode  int       `json:"staticDecode"`
	Static        PDFigures `json:"static"`

	Peers []PDPeer `json:"peers,omitempty"`

	Verdict PDVerdict `json:"verdict"`
}

// PDVerdict is a P/D row's pass or fail per criterion.
type PDVerdict struct {
	UserAttainment bool    `json:"userAttainment"` // ≥ Target, or the oracle's where that is lower
	ITLAttainment  bool    `json:"itlAttainment"`  // likewise
	BelowStatic    bool    `json:"belowStatic"`
	BelowPeers     bool    `json:"belowPeers"` // below every peer reaching the same attainments
	NoKills        bool    `json:"noKills"`    // in both pools
	FewFlaps       bool    `json:"fewFlaps"`   // in each pool
	UserBar        float64 `json:"userBar"`    // the user TTFT attainment the row had to reach
	ITLBar         float64 `json:"itlBar"`
}

// All reports whether every criterion passed.
func (v PDVerdict) All() bool {
	return v.UserAttainment && v.ITLAttainment && v.BelowStatic && v.BelowPeers && v.NoKills && v.FewFlaps
}

// Judge fills the row's verdict and marks the peers it compares.
func (s PDSettings) Judge(r *PDRow) {
	v := PDVerdict{UserBar: s.Target, ITLBar: s.Target}
	if r.OracleOK {
		v.UserBar, v.ITLBar = min(v.UserBar, r.Oracle.UserAttainment), min(v.ITLBar, r.Oracle.ITLAttainment)
	}
	v.UserAttainment = r.UserAttainment >= v.UserBar-1e-12
	v.ITLAttainment = r.ITLAttainment >= v.ITLBar-1e-12
	// No static pair up to the maximum reaches the policy pair's
	// attainments: it beats every static pair.
	v.BelowStatic = r.StaticPrefill == 0 || r.GPUHours() < r.Static.GPUHours()
	v.BelowPeers = true
	for i := range r.Peers {
		p := &r.Peers[i]
		p.Compared = p.reaches(r.PDFigures)
		if p.Compared && r.GPUHours() >= p.GPUHours() {
			v.BelowPeers = false
		}
	}
	v.NoKills = r.PrefillKilled == 0 && r.DecodeKilled == 0
	v.FewFlaps = r.PrefillFlapsPerHour <= s.MaxFlapsHour+1e-12 && r.DecodeFlapsPerHour <= s.MaxFlapsHour+1e-12
	r.Verdict = v
}
