package inferscale

import (
	"io"
	"math"
	"time"

	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/sim/scaler"
)

// DecisionLine is the decision log's line for one decision taken at now:
// what evaluate writes to stderr every tick (the decide stage calls the same
// conversion), and what the simulator writes for `simulate decisions`.
func DecisionLine(d policy.Decision, now time.Time, mode string, slo time.Duration) decisionlog.Line {
	l := decisionlog.Line{
		Time: now.UTC(), Mode: mode, Current: d.Current, Target: d.Target,
		Reasons: d.Reasons, Alerts: d.Alerts, SLOSeconds: slo.Seconds(),
		Fleet: decisionlog.Fleet{
			Ready: d.Fleet.Ready, Starting: d.Fleet.Starting, Missing: d.Fleet.Missing,
			Waiting: finite(d.Fleet.Waiting), Running: finite(d.Fleet.Running),
			KVMean: opt(d.Fleet.KVMean), TTFTP95: opt(d.Fleet.TTFTP95), ArrivalRate: opt(d.Fleet.ArrivalRate),
		},
	}
	for _, r := range d.Rules {
		l.Rules = append(l.Rules, decisionlog.Rule{Name: r.Name, Value: opt(r.Value), Threshold: finite(r.Threshold),
			Over: r.Over, Proposal: r.Proposal})
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

// Logged is a Fast that writes every tick's decision to W as a decision
// log line (mode active), like evaluate does on stderr.
type Logged struct {
	*Fast
	W io.Writer
	// Err is the first write error (the replay goes on, as a tick would).
	Err error
}

// Recommend implements scaler.Autoscaler.
func (l *Logged) Recommend(obs scaler.Observation) (int, error) {
	n, err := l.Fast.Recommend(obs)
	if err != nil {
		return n, err
	}
	if werr := decisionlog.Write(l.W, DecisionLine(l.Fast.Last, obs.Now, decisionlog.Active, l.Fast.cfg.TTFTSLO)); werr != nil && l.Err == nil {
		l.Err = werr
	}
	return n, nil
}
