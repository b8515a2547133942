package sizing

import (
	"fmt"
	"math"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/state"
)

// queueingMiss is the share of the tick's requests that waiting pushed
// past the objective (nil without a queue-time reading).
func queueingMiss(next *state.Service, svc fleet.Service, params model.Params, o Options) *float64 {
	if svc.Queue.Count <= 0 {
		return nil
	}
	prompts := o.servedPrompts(next, svc)
	le, c := bounds(svc.Queue)
	miss := params.QueueingMiss(prompts, o.Limits.ChunkTokens, o.TTFTSLO, le, c, svc.Queue.Count)
	return &miss
}

// breachRequests is the fewest first tokens a tick needs for its TTFT
// histogram to say the objective is breached.
const breachRequests = 20

// breachRead reports a tick whose TTFT histogram says the objective is
// breached (enough first tokens, the p95 above it).
func breachRead(v fleet.View, slo float64) bool {
	return lengths(v.Service.TTFT).Count >= breachRequests && v.TTFTP95 != nil && *v.TTFTP95 > slo
}

// loadMiss is the share of the tick's requests that load pushed past the
// objective: what waited (queueing, nil without a queue-time reading)
// and, while the TTFT histogram shows a breach, every miss beyond the
// prompts no idle pod prefills in time. vLLM V1 admits a request into the
// running batch at once while the KV cache allows, so on long-prompt
// traffic the delay is other prompts' chunks sharing each step's token
// budget, not the queue; more pods shorten it (fewer prompts share each
// pod). With the model unfitted the infeasible share is the prior's
// guess; with no prompt lengths every miss counts: a breach is
// load-driven until more pods fail to move it.
func loadMiss(next *state.Service, v fleet.View, params model.Params, o Options, queueing *float64) (*float64, string) {
	svc := v.Service
	ttft := lengths(svc.TTFT)
	if !breachRead(v, o.TTFTSLO) {
		if queueing == nil {
			return nil, ""
		}
		return queueing, "waiting (queue-time histogram)"
	}
	missed := 1 - ttft.CDF(o.TTFTSLO)
	if !finite(missed) {
		return queueing, "waiting (queue-time histogram)"
	}
	infeasible := infeasibleShare(next, svc, params, o)
	miss := math.Max(0, missed-infeasible)
	if queueing != nil && *queueing >= miss {
		return queueing, "waiting (queue-time histogram)"
	}
	return &miss, fmt.Sprintf("TTFT misses %.2g%% beyond the %.2g%% of prompts no idle pod prefills in time (waiting and stretched prefills)", 100*miss, 100*infeasible)
}

// infeasibleShare is the share of the tick's prompts (the recent ones
// when the tick has no length histogram) that no idle pod prefills within
// the objective: misses no number of pods fixes (0 without lengths).
func infeasibleShare(next *state.Service, svc fleet.Service, params model.Params, o Options) float64 {
	prompts := o.servedPrompts(next, svc)
	if prompts.Count > 0 {
		if f := prompts.CDF(params.LongestFeasible(o.TTFTSLO, o.Limits.ChunkTokens)); finite(f) {
			return 1 - f
		}
	}
	return 0
}

// UnmovedGain is how fast Unmoved follows the misses seen at ample
// headroom (per tick).
const UnmovedGain = 0.2

// WaitUnmovedFactor is how far above the plan's need the ready fleet must
// be for the waiting its breaches still read to count as unmoved too
// (unmoved). Measured on the bar (90 cells): at 1.25 (the ample fleet's
// quarter) a Mooncake cell fell to 98.998 % and the stress and P/D cells
// lost one each; at 3 almost nothing moved (Mooncake 330.6 → 325.5 GPU-h)
// and four cells flapped; 1.5 and 2 cut Mooncake to 296.0 and 298.5
// GPU-h with every attainment kept.
const WaitUnmovedFactor = 1.5

// unmoved learns what more pods did not fix and takes it out of the load
// miss: while the ready fleet is well above what the last plan asked for
// (a quarter more, at least one pod: a reactive scale-up, the hold), the
// misses beyond waiting are taken as unmovable; a breach that only they
// explain is then an alert, not a scale-up (a slow model, prompts the
// prior thinks short). The estimate moves only at such ticks, so it
// unlearns as soon as an ample fleet misses less.
//
// Waiting is what pods fix near the plan, so it stays load there. Far
// above the plan (WaitUnmovedFactor × its need) waiting that a breach
// still reads is unmoved as well: on long prompts a request waits for the
// step budget a long prompt's chunks hold on whichever pod it lands, and
// the model, linear in the prompt, also calls some of those prompts
// feasible that are not. Counted as load there, it kept every breach
// adding a pod an hour long: Mooncake on a half-speed GPU climbed from 31
// to 53 pods at a plan of 13–19, and each pod moved the share by a
// fraction of a point.
func unmoved(next *state.Service, v fleet.View, slo float64, planned int, queueing, load *float64, note string) (*float64, string) {
	// Only a breach reads the misses beyond waiting (loadMiss).
	if load == nil || planned <= 0 || !breachRead(v, slo) {
		return load, note
	}
	far := float64(v.Ready) >= WaitUnmovedFactor*float64(planned)
	excess := *load
	if queueing != nil && !far {
		excess = math.Max(0, *load-*queueing)
	}
	if v.Starting == 0 && v.Ready >= max(planned+1, int(math.Ceil(1.25*float64(planned)))) {
		next.Unmoved += UnmovedGain * (excess - next.Unmoved)
	}
	if next.Unmoved <= 0 || excess <= 0 {
		return load, note
	}
	miss := math.Max(0, *load-math.Min(excess, next.Unmoved))
	if queueing != nil && !far {
		miss = math.Max(miss, *queueing)
	}
	return &miss, note + fmt.Sprintf(", less %.2g%% that more pods did not move", 100*math.Min(excess, next.Unmoved))
}

// loadCount is how many requests the tick's miss reading stands for.
func loadCount(svc fleet.Service) float64 { return math.Max(svc.Queue.Count, svc.TTFT.Count) }
