package decide

import (
	"math"
	"slices"
	"time"

	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/shared/policy"
)

// DecisionLine is the decision log's line for a decision taken at now:
// what evaluate writes to stderr every tick (CPA's logStderr forwards it
// to the pod log), and what the simulator writes for `simulate decisions`.
func DecisionLine(d policy.Decision, now time.Time, mode string, cfg policy.Config) decisionlog.Line {
	l := decisionlog.Line{
		Time: now.UTC(), Mode: mode, Current: d.Current, Target: d.Target,
		Reasons: d.Reasons, Alerts: d.Alerts, SLOSeconds: cfg.TTFTSLO.Seconds(), Victims: d.Victims,
		MinReplicas: cfg.MinReplicas, MaxReplicas: cfg.MaxReplicas, Role: roleOf(cfg),
		Fleet: decisionlog.Fleet{
			Ready: d.Fleet.Ready, Starting: d.Fleet.Starting, Missing: d.Fleet.Missing,
			Waiting: finite(d.Fleet.Waiting), Running: finite(d.Fleet.Running),
			KVMean: opt(d.Fleet.KVMean), TTFTP95: opt(d.Fleet.TTFTP95), ITLP95: opt(d.Fleet.ITLP95), ArrivalRate: opt(d.Fleet.ArrivalRate),
		},
	}
	if l.Reasons == nil {
		l.Reasons = []string{}
	}
	if l.Alerts == nil {
		l.Alerts = []string{}
	}
	for _, w := range d.Warnings {
		if !slices.Contains(l.AlertReasons, w.Reason) {
			l.AlertReasons = append(l.AlertReasons, w.Reason)
		}
	}
	for _, r := range d.Rules {
		l.Rules = append(l.Rules, decisionlog.Rule{Name: r.Name, Value: opt(r.Value), Threshold: finite(r.Threshold),
			Over: r.Over, Proposal: r.Proposal})
	}
	if cfg.RatioMin > 0 {
		l.Ratio = &decisionlog.Ratio{Floor: d.RatioFloor}
		if p := d.Fleet.Peer; p != nil {
			l.Ratio.Peer, l.Ratio.PeerReplicas, l.Ratio.Error = p.Name, p.Replicas, p.Error
		}
	}
	if p := d.Plan; p != nil && p.Valid {
		f := p.Forecast
		l.Forecast = &decisionlog.Forecast{Level: finite(f.Level), Trend: finite(f.Trend), Upper: finite(f.Upper),
			Quantile: finite(f.Quantile), HorizonSeconds: finite(f.Horizon)}
		src := decisionlog.CapacityPrior
		switch p.ParamsSource {
		case decisionlog.CapacityFitted, decisionlog.CapacityPartly:
			src = p.ParamsSource
		}
		m := p.Params
		l.Capacity = &decisionlog.Capacity{PerPod: finite(p.Ceiling.RequestsPerSecond), Source: src, Series: p.ParamsSeries,
			Model:          &decisionlog.Model{Alpha: finite(m.Alpha), Beta: finite(m.Beta), GammaSeq: finite(m.GammaSeq), GammaKV: finite(m.GammaKV)},
			WorkPerRequest: finite(p.WorkPerRequest)}
		l.Plan = &decisionlog.Plan{DemandPods: finite(p.Offered), Beta: finite(p.Beta), Need: p.Need, Hold: p.Hold, Floor: p.Floor}
		if p.Spent != nil {
			l.Plan.BudgetSpent = decisionlog.F(*p.Spent)
		}
	}
	return l
}

func opt(p *float64) *float64 {
	if p == nil {
		return nil
	}
	return decisionlog.F(*p)
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// roleOf is the decision log's role: absent for a unified pool.
func roleOf(cfg policy.Config) string {
	if cfg.Role == "unified" {
		return ""
	}
	return cfg.Role
}
