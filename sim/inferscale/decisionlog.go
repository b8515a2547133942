package inferscale

import (
	"io"
	"time"

	"github.com/inferscale/inferscale/shared/decide"
	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/sim/scaler"
)

// DecisionLine is decide.DecisionLine: the line evaluate writes.
func DecisionLine(d policy.Decision, now time.Time, mode string, cfg policy.Config) decisionlog.Line {
	return decide.DecisionLine(d, now, mode, cfg)
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
	if werr := decisionlog.Write(l.W, DecisionLine(l.Fast.Last, obs.Now, decisionlog.Active, l.Fast.cfg)); werr != nil && l.Err == nil {
		l.Err = werr
	}
	return n, nil
}
