package preset

import (
	"fmt"

	"github.com/inferscale/inferscale/shared/expo"
	"github.com/inferscale/inferscale/shared/signal"
)

// source is what Apply reads from: parsed families.
type source interface {
	Has(name string) bool
	Value(name string, want map[string]string, agg expo.Agg) (float64, bool)
	Histogram(name string, want map[string]string, scale float64) (*signal.Histogram, int, bool)
}

// firstPresent returns the first of r.Families present in fams.
func firstPresent(fams source, r Reading) (string, bool) {
	for _, f := range r.Families {
		if fams.Has(f) {
			return f, true
		}
	}
	return "", false
}

// Apply fills pod's server readings from fams. A signal whose families
// are absent (or have no sample matching the labels) stays nil.
func (p *Preset) Apply(fams source, pod *signal.Pod) {
	pod.Server = p.Name
	pod.Notes = append(pod.Notes, p.Notes...)
	for _, sig := range signalNames() {
		r, ok := p.Signals[sig]
		if !ok {
			continue
		}
		fam, ok := firstPresent(fams, r)
		if !ok {
			continue
		}
		if IsHistogram(sig) {
			h, skipped, ok := fams.Histogram(fam, r.Labels, r.Factor())
			if skipped > 0 {
				pod.Notes = append(pod.Notes, fmt.Sprintf("%s: %d series of %s left out (bucket bounds differ)", sig, skipped, fam))
			}
			if ok {
				setHistogram(pod, sig, h)
			}
			continue
		}
		v, ok := fams.Value(fam, r.Labels, r.Agg)
		if !ok {
			continue
		}
		v *= r.Factor()
		if sig == GPUUtilization {
			pod.GPU = &signal.GPU{Utilization: signal.F(v), Field: fam, Source: "server", Count: 0}
			continue
		}
		setValue(pod, sig, v)
	}
}

func setHistogram(pod *signal.Pod, sig string, h *signal.Histogram) {
	switch sig {
	case TTFT:
		pod.TTFT = h
	case E2E:
		pod.E2E = h
	case QueueTime:
		pod.QueueTime = h
	case InterToken:
		pod.InterToken = h
	case PromptLength:
		pod.PromptLength = h
	case GenerationLength:
		pod.GenerationLength = h
	}
}

func setValue(pod *signal.Pod, sig string, v float64) {
	switch sig {
	case Waiting:
		pod.Waiting = signal.F(v)
	case Running:
		pod.Running = signal.F(v)
	case KVCacheUsage:
		pod.KVCacheUsage = signal.F(v)
	case RequestsTotal:
		pod.RequestsTotal = signal.F(v)
	case PromptTokensTotal:
		pod.PromptTokensTotal = signal.F(v)
	case GenerationTokensTotal:
		pod.GenerationTokensTotal = signal.F(v)
	case PreemptionsTotal:
		pod.PreemptionsTotal = signal.F(v)
	}
}
