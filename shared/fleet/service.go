package fleet

import (
	"math"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// Service is what one tick shows of the pods' service, for the service
// model and the demand forecast (package sizing): each pod's readings
// since its previous scrape, and the fleet's histogram deltas merged over
// the pods. It is not part of the decision's JSON.
type Service struct {
	Pods []PodService
	// TTFT, Queue, Prompts and Outputs are the deltas of the TTFT,
	// queue-time, prompt-length and generation-length histograms.
	TTFT, Queue, Prompts, Outputs signal.Histogram
	// PromptRate and OutputRate are prompt and generated tokens per
	// second, summed over the pods with a delta; PromptTokens and
	// OutputTokens the tick's totals (for the request mix where the server
	// exports no length histograms).
	PromptRate, OutputRate     float64
	PromptTokens, OutputTokens float64
	// Running and KV are sums over the ready pods that reported;
	// KVRunning is the running sequences of the pods that reported KV (0:
	// no pod did, a server without a KV gauge such as TGI).
	Running, KV, KVRunning float64
	// Reporting counts the ready pods with complete readings.
	Reporting int
}

// PodService is one pod's tick.
type PodService struct {
	Name    string
	Seconds float64
	// ITL is the mean inter-token gap over the tick, from ITLCount gaps.
	ITL, ITLCount float64
	// PromptRate and OutputRate are tokens per second over the tick.
	PromptRate, OutputRate float64
	// Running and KV are the means of the previous and this scrape;
	// KVRead is false when this scrape has no KV reading (KV then says
	// nothing).
	Running, KV float64
	KVRead      bool
	// Prefill is the tick's mean time from scheduling to first token
	// (mean TTFT minus mean queue time, or what stands for it where the
	// server exports less: PrefillSeries) over Prefills requests, of mean
	// prompt PromptMean (from the prompt-length histogram, or the prompt
	// tokens counted over the first tokens where there is none); Prompts
	// is the tick's prompt-length delta.
	Prefill, Prefills, PromptMean float64
	Prompts                       signal.Histogram
	// PrefillSeries names what Prefill was read from where the server
	// exports less than TTFT and queue time (SeriesTTFTIdle, SeriesE2E;
	// empty: TTFT − queue time, the model's own series) and PrefillSpread is its noise beyond
	// the requests' own (seconds: the decode a prefill read from the
	// end-to-end latency was told apart from).
	PrefillSeries string
	PrefillSpread float64
}

// serviceCounters are p's cumulative readings for the next tick's deltas.
func serviceCounters(p *signal.Pod) *state.ServiceCounters {
	c := &state.ServiceCounters{PromptTokens: p.PromptTokensTotal, OutputTokens: p.GenerationTokensTotal,
		Queue: state.HistOf(p.QueueTime), Prompts: state.HistOf(p.PromptLength), Outputs: state.HistOf(p.GenerationLength)}
	if p.InterToken != nil {
		c.ITLSum, c.ITLCount = p.InterToken.Sum, p.InterToken.Count
	}
	if p.Running != nil {
		c.Running = *p.Running
	}
	if p.KVCacheUsage != nil {
		c.KV = *p.KVCacheUsage
	}
	if p.E2E != nil {
		c.E2ESum, c.E2ECount = p.E2E.Sum, p.E2E.Count
	}
	if p.Waiting != nil {
		c.Waiting = new(*p.Waiting)
	}
	return c
}

// service adds p's tick to the view's Service, against its stored
// counters prev (nil: a first scrape, nothing to add).
func (a *aggregation) service(p *signal.Pod, prev *state.PodCounters) {
	svc := &a.v.Service
	addGauges(svc, p)
	if prev == nil || prev.Service == nil {
		return
	}
	dt := p.ScrapeTime.Sub(prev.ScrapeTime).Seconds()
	if dt <= 0 {
		return
	}
	svc.Pods = append(svc.Pods, podService(svc, p, prev, dt))
}

// addGauges adds p's gauges (running, KV cache) to the fleet's.
func addGauges(svc *Service, p *signal.Pod) {
	if p.Running != nil {
		svc.Running += *p.Running
	}
	if p.KVCacheUsage != nil {
		svc.KV += *p.KVCacheUsage
		if p.Running != nil {
			svc.KVRunning += *p.Running
		}
	}
	svc.Reporting++
}

// podService is p's tick over dt seconds since its stored counters prev:
// its step time, token rates and histogram deltas (added to svc too) and
// the prefill time they let it read.
func podService(svc *Service, p *signal.Pod, prev *state.PodCounters, dt float64) PodService {
	before := prev.Service
	ps := PodService{Name: p.Name, Seconds: dt, Running: before.Running, KV: before.KV}
	if p.Running != nil {
		ps.Running = (before.Running + *p.Running) / 2
	}
	if p.KVCacheUsage != nil {
		ps.KV, ps.KVRead = (before.KV+*p.KVCacheUsage)/2, true
	}
	if p.InterToken != nil && p.InterToken.Count > before.ITLCount {
		n := p.InterToken.Count - before.ITLCount
		if d := (signal.Histogram{Sum: p.InterToken.Sum - before.ITLSum, Count: n}); plausibleDelta(d) {
			ps.ITL, ps.ITLCount = d.Sum/n, n
		}
	}
	prompts, okP := histDelta(p.PromptLength, before.Prompts.Signal())
	outs, okO := histDelta(p.GenerationLength, before.Outputs.Signal())
	if r, ok := tokenRate(p.PromptTokensTotal, before.PromptTokens, prompts, okP, dt); ok {
		ps.PromptRate = r
		svc.PromptRate += r
		svc.PromptTokens += r * dt
	}
	if r, ok := tokenRate(p.GenerationTokensTotal, before.OutputTokens, outs, okO, dt); ok {
		ps.OutputRate = r
		svc.OutputRate += r
		svc.OutputTokens += r * dt
	}
	ttft, okT := histDelta(p.TTFT, prev.TTFT.Signal())
	queue, okQ := histDelta(p.QueueTime, before.Queue.Signal())
	if okO {
		merge(&svc.Outputs, outs)
	}
	if okT {
		merge(&svc.TTFT, ttft)
	}
	if okQ {
		merge(&svc.Queue, queue)
	}
	if okP {
		merge(&svc.Prompts, prompts)
		ps.Prompts = prompts
		if prompts.Count > 0 {
			ps.PromptMean = prompts.Sum / prompts.Count
		}
	}
	ps.readPrefill(p, before, prefillDeltas{ttft: ttft, queue: queue, outs: outs, okTTFT: okT, okQueue: okQ, okOuts: okO})
	if ps.Prefills > 0 && ps.PromptMean == 0 && ps.PromptRate > 0 {
		// No prompt-length histogram: the prompt tokens the tick
		// prefilled over the requests that got their first token.
		ps.PromptMean = ps.PromptRate * dt / ps.Prefills
	}
	return ps
}

// prefillDeltas are the histogram deltas of a pod's tick that its
// prefill time is read from (ok: read; a missing series or a reset is
// not).
type prefillDeltas struct {
	ttft, queue, outs       signal.Histogram
	okTTFT, okQueue, okOuts bool
}

// readPrefill reads the tick's mean prefill time from what the server
// exports: TTFT less queue time; TTFT alone where nothing waited and no
// queue time is exported; or the end-to-end latency less the queue time
// and the decode where no TTFT is.
func (ps *PodService) readPrefill(p *signal.Pod, before *state.ServiceCounters, d prefillDeltas) {
	ttft, queue := d.ttft, d.queue
	switch {
	case d.okTTFT && d.okQueue && ttft.Count > 0 && queue.Count > 0:
		// The mean wait over the requests of the tick: a server that
		// observes the queue time only of the requests that queued (llm-d's
		// vLLM emulator) counts fewer than got a first token, and the others
		// waited nothing; vLLM observes every request, and the counts differ
		// only by the requests scheduled in one tick and answered in the next.
		ps.Prefill = ttft.Sum/ttft.Count - queue.Sum/math.Max(ttft.Count, queue.Count)
		ps.Prefills = ttft.Count
	case d.okTTFT && ttft.Count > 0 && p.QueueTime == nil && nothingWaited(p, before):
		// No queue-time series (Triton; llm-d's emulator, which creates it
		// when a request first queues) and the waiting gauge at zero at
		// both scrapes: the TTFT is the prefill (at most a wait between
		// the scrapes more, which errs towards a slower prefill).
		ps.Prefill, ps.Prefills, ps.PrefillSeries = ttft.Sum/ttft.Count, ttft.Count, SeriesTTFTIdle
	case p.TTFT == nil:
		ps.Prefill, ps.Prefills, ps.PrefillSpread = e2ePrefill(p, before, ps.ITL, d)
		if ps.Prefills > 0 {
			ps.PrefillSeries = SeriesE2E
		}
	}
}

// The series a pod's prefill time is read from where the server exports
// less than TTFT and queue time (PodService.PrefillSeries).
const (
	SeriesTTFTIdle = "TTFT, nothing waiting"
	SeriesE2E      = "e2e − queue time − decode"
)

// nothingWaited reports a waiting gauge read at zero at the previous and
// this scrape.
func nothingWaited(p *signal.Pod, before *state.ServiceCounters) bool {
	return p.Waiting != nil && *p.Waiting == 0 && before.Waiting != nil && *before.Waiting == 0
}

// DecodeSpread is the share of a request's decode time taken as the noise
// of a prefill read from its end-to-end latency (e2ePrefill): the tick's
// mean inter-token gap stands for the gaps of the requests that finished
// in it, over lifetimes that began ticks earlier, and the mean of their
// products for the product of the means.
const DecodeSpread = 0.25

// e2ePrefill reads a pod's mean prefill where it exports no TTFT (TGI):
// the requests that finished in the tick took their end-to-end latency,
// less the mean queue time, less their decode (the tick's mean
// inter-token gap itl times their mean output tokens beyond the first, from
// the generation-length delta). It returns the mean, the requests it is
// over (0: not read — no end-to-end, queue-time, inter-token or length
// reading, or a decode that leaves nothing) and its noise (DecodeSpread of
// the decode, seconds).
func e2ePrefill(p *signal.Pod, before *state.ServiceCounters, itl float64, d prefillDeltas) (mean, n, spread float64) {
	queue, outs := d.queue, d.outs
	if p.E2E == nil || before.E2ECount <= 0 || !d.okQueue || !d.okOuts || outs.Count <= 0 || !(itl > 0) {
		return 0, 0, 0
	}
	e2e := signal.Histogram{Sum: p.E2E.Sum - before.E2ESum, Count: p.E2E.Count - before.E2ECount}
	if e2e.Count <= 0 || !plausibleDelta(e2e) {
		return 0, 0, 0
	}
	decode := itl * math.Max(outs.Sum/outs.Count-1, 0)
	mean = e2e.Sum/e2e.Count - queue.Sum/math.Max(e2e.Count, queue.Count) - decode
	if !(mean > 0) {
		return 0, 0, 0
	}
	return mean, e2e.Count, DecodeSpread * decode
}

// tokenRate is a pod's token rate over the tick: from its token counter,
// or, on a server without one (TGI, whose token totals are only the sums
// of its length histograms), from the tick's length-histogram delta
// (ok: the delta was read).
func tokenRate(cur, before *float64, lengths signal.Histogram, ok bool, dt float64) (float64, bool) {
	if cur != nil {
		return counterRate(cur, before, dt)
	}
	if !ok || dt <= 0 || !(lengths.Sum >= 0) {
		return 0, false
	}
	r := lengths.Sum / dt
	return r, plausibleRate(r, maxPodTokenRate)
}

// counterRate is a counter's increase per second (a reset counts from 0).
func counterRate(cur, before *float64, dt float64) (float64, bool) {
	if cur == nil || before == nil || dt <= 0 {
		return 0, false
	}
	d := *cur - *before
	if d < 0 {
		d = *cur
	}
	r := math.Max(0, d/dt)
	return r, plausibleRate(r, maxPodTokenRate)
}
