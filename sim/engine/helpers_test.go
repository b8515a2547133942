package engine

import "github.com/inferscale/inferscale/shared/signal"

type signalReport struct{ p *signal.Pod }

func (s *signalReport) validate() error {
	r := signal.Report{Version: signal.Version, Pods: []signal.Pod{*s.p}}
	return r.Validate()
}
