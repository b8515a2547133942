//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/state"
)

// The closed loop: inferscale, on the real control plane, scaling a Deployment of llm-d's vLLM emulator
// (deploy/e2e/emulator) under a load the test's client sends and measures. One run of the arrival process feeds
// four scenarios: ClosedLoopRampAndBurst runs it (and, during its idle tail, the same arrivals on a static fleet in
// another namespace); ScaleDownLosesNoRequest, AgainstAStaticFleet and ServiceModelOnAForeignEngine assert on and
// report what it recorded.

// The objective the client measures: inferscale's shipped ttftSLO (TTFT p95 ≤ 2 s), per request.
const closedLoopSLO = 2 * time.Second

// closedLoopTarget is the share of requests sent after the first startup horizon whose client-side TTFT must meet
// closedLoopSLO. Set from what the runs measured (docs/performance.md, "The closed loop"), below the shipped
// sloAttainment (0.99): see there for where the misses come from.
const closedLoopTarget = 0.85

// emulatorModel is the model name the emulator serves (its --model).
const emulatorModel = "meta-llama/Llama-3.1-8B-Instruct"

// emulatorParams are the latency parameters deploy/e2e/emulator starts the emulator with (its profile
// 8b-h100-balanced-per-token), in the service model's terms. The emulator's inter-token latency at n running
// requests is ITL·(1 + (f−1)(n−1)/(N−1)) (f the load factor, N max-num-seqs): a step of α + γs·n with
// α = ITL·(1 − (f−1)/(N−1)) and γs = ITL·(f−1)/(N−1); its prefill is (overhead + tokens·per-token)·factor, so β is
// the per-token time; nothing depends on the KV cache (γkv 0).
var emulatorParams = func() model.Params {
	const itl, f, n, perToken = 0.012, 2.0, 16.0, 250e-6
	return model.Params{Alpha: itl * (1 - (f-1)/(n-1)), GammaSeq: itl * (f - 1) / (n - 1), Beta: perToken}
}()

// closedLoopProcess is the arrival process: a low start, a ramp, a plateau, a burst, a fall that leaves load on
// while inferscale scales down (so that pods are deleted with requests open), then an idle tail.
// INFERSCALE_E2E_LONG=1 stretches every phase fourfold (about 21 minutes of load), for a run by hand.
func closedLoopProcess(t *testing.T) arrivalProcess {
	scale := time.Duration(1)
	if os.Getenv("INFERSCALE_E2E_LONG") == "1" {
		scale = 4
	}
	p := arrivalProcess{
		{"warm", 40 * time.Second, 2, 2},
		{"ramp", 100 * time.Second, 2, 16},
		{"plateau", 40 * time.Second, 16, 16},
		{"burst", 40 * time.Second, 28, 28},
		{"fall", 90 * time.Second, 6, 6},
	}
	for i := range p {
		p[i].Duration *= scale
	}
	t.Logf("arrival process (%s of load): %+v", p.duration(), p)
	return p
}

// closedLoopRun is what the closed-loop run recorded, for the scenarios after it.
type closedLoopRun struct {
	process     arrivalProcess
	loop        *loadRun
	static      *loadRun
	staticSize  int
	horizon     time.Duration // the first startup horizon, excluded from the attainment
	traffic     map[string]podTraffic
	pods        []podRecord
	state       *state.State
	cpaLog      string
	loadEnd     time.Time // the last arrival
	podSeconds  float64   // inferscale's, over the load
	tailSeconds float64   // inferscale's, from the end of the load until back at one replica
	meanPods    float64
	maxReplicas int
}

// closedLoop is the run the four closed-loop scenarios share (nil until ClosedLoopRampAndBurst ran it).
type closedLoopHolder struct {
	mu  sync.Mutex
	run *closedLoopRun
}

func (h *closedLoopHolder) get(t *testing.T) *closedLoopRun {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.run == nil {
		t.Skip("ClosedLoopRampAndBurst did not complete its run (see its failure): nothing to assert on")
	}
	return h.run
}

// closedLoopTuning is tuning for the emulator: the same time-shortening knobs, inferscale's shipped metricsPort
// (each emulator pod has its own network namespace) and the emulator's batch limit told to maxNumSeqs, as a user
// describes their server (--max-num-seqs 16).
func closedLoopTuning() map[string]string {
	return tuning(map[string]string{
		"metricsPort": "8000",
		"maxNumSeqs":  "16",
		// defaultStartup: the startup until one is seen; the emulator pods take about emulatorStartup.
		"defaultStartup": "15s",
	})
}

// closedLoopRampAndBurst runs the arrival process against inferscale scaling the emulator's Deployment, then,
// while inferscale falls back after the idle tail, the same arrivals against a static fleet of the mean size
// inferscale used. It asserts that inferscale scaled the Deployment up and back down to one replica and that the
// client's TTFT attainment after the first startup horizon is at least closedLoopTarget.
func closedLoopRampAndBurst(h *closedLoopHolder) func(t *testing.T, e *environment) *deployment {
	return func(t *testing.T, e *environment) *deployment {
		trace := traceLengths(t)
		process := closedLoopProcess(t)
		d := e.deployEmulated(t, closedLoopTuning())
		pw := d.watchTargetPods(t)
		defer pw.close()
		disp := newDispatcher(d.c, namespace, target, false)
		defer disp.close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := disp.waitReady(ctx, 1); err != nil {
			t.Fatalf("the emulator pod never became a Ready endpoint of Service %s: %v", target, err)
		}
		if r := d.replicas(t); r != 1 {
			t.Fatalf("idle emulator fleet: replicas %d, want 1", r)
		}
		run := &closedLoopRun{process: process, horizon: emulatorStartup(t) + 4*tick + 2*time.Second}
		run.loop = replay(disp, process, trace, emulatorModel, 1)
		run.loadEnd = run.loop.began.Add(process.duration())
		end := run.loop.began.Add(process.duration())
		run.podSeconds = podSeconds(pw.snapshot(), run.loop.began, end)
		run.meanPods = run.podSeconds / process.duration().Seconds()
		for _, r := range d.history.between(run.loop.began, end) {
			run.maxReplicas = max(run.maxReplicas, r)
		}
		run.staticSize = max(1, int(math.Round(run.meanPods)))
		t.Logf("load done: %d requests, %d failed; inferscale used %.0f pod-seconds (mean %.2f pods, at most %d replicas)",
			len(run.loop.results), len(failures(run.loop.results)), run.podSeconds, run.meanPods, run.maxReplicas)

		// The idle tail: inferscale falls back while the static fleet replays the same arrivals.
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.static = staticFleetReplay(t, e, run.staticSize, process, trace)
		}()
		_, back := d.expectReplicas(t, 8*time.Minute, "idle tail: back to one replica", func(r int) bool { return r == 1 })
		run.tailSeconds = podSeconds(pw.snapshot(), end, back)
		t.Logf("back at 1 replica %s after the load ended (%.0f pod-seconds in the tail)", back.Sub(end).Round(time.Second), run.tailSeconds)
		// The last scale-down's pods drain (preStop 15 s) before the run is recorded.
		if err := waitFor(time.Minute, "the deleted pods gone", func() error {
			if n := len(d.targetPodObjects(t)); n != 1 {
				return fmt.Errorf("%d target pods: %w", n, errNotYet)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
		wg.Wait()
		run.traffic = disp.traffic()
		run.pods = pw.snapshot()
		run.state = d.state(t)
		run.cpaLog = d.cpaLog(t)
		if err := pw.failed(); err != nil {
			t.Errorf("the pod watch failed: %v", err)
		}

		if run.maxReplicas < 3 {
			t.Errorf("inferscale scaled the emulator fleet to at most %d replicas under a load of %.0f req/s at its peak", run.maxReplicas, 28.0)
		}
		from := run.loop.began.Add(run.horizon)
		att, n := attainment(run.loop.results, from, run.loadEnd, closedLoopSLO)
		t.Logf("client TTFT attainment after the first startup horizon (%s): %.4f of %d requests within %s (target %.2f)",
			run.horizon.Round(time.Second), att, n, closedLoopSLO, closedLoopTarget)
		logPhases(t, "inferscale", run.loop)
		if run.static != nil {
			logPhases(t, fmt.Sprintf("static fleet of %d", run.staticSize), run.static)
		}
		if att < closedLoopTarget {
			t.Errorf("client TTFT attainment %.4f < target %.2f", att, closedLoopTarget)
		}
		h.mu.Lock()
		h.run = run
		h.mu.Unlock()
		return d
	}
}

// logPhases logs, per phase of the arrival process, the requests, the attainment, TTFT p50/p95/p99 and the mean
// inter-token latency the client measured.
func logPhases(t *testing.T, who string, run *loadRun) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s, client-side, per phase:\n", who)
	start := run.began
	for _, p := range append(arrivalProcess{}, run.process...) {
		end := start.Add(p.Duration)
		var ttft, itl []time.Duration
		fails := 0
		for _, r := range run.results {
			if r.Sent.Before(start) || !r.Sent.Before(end) {
				continue
			}
			if !r.ok() {
				fails++
				continue
			}
			ttft = append(ttft, r.TTFT)
			if r.ITL > 0 {
				itl = append(itl, r.ITL)
			}
		}
		att, n := attainment(run.results, start, end, closedLoopSLO)
		fmt.Fprintf(&b, "  %-8s %5.1f→%4.1f req/s: %5d requests, %d failed, attainment %.4f, TTFT p50 %s p95 %s p99 %s, ITL p50 %s\n",
			p.Name, p.From, p.To, n, fails, att, quantile(ttft, 0.5).Round(time.Millisecond), quantile(ttft, 0.95).Round(time.Millisecond),
			quantile(ttft, 0.99).Round(time.Millisecond), quantile(itl, 0.5).Round(100*time.Microsecond))
		start = end
	}
	t.Log(b.String())
}

// podSeconds is the pod-seconds the pods existed within [from, to): from creation until their deletion began
// (a pod holds its GPU from creation, starting or not; a deleted pod's drain is not counted).
func podSeconds(pods []podRecord, from, to time.Time) float64 {
	total := 0.0
	for _, p := range pods {
		a, b := p.created, to
		if p.deleted {
			b = p.deletedAt
		}
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if b.After(a) {
			total += b.Sub(a).Seconds()
		}
	}
	return total
}

// staticNamespace holds the static fleet, beside the inferscale one.
const staticNamespace = "static"

// staticFleetReplay deploys the emulator's Deployment and Service (as deploy/e2e/emulator renders them) in
// staticNamespace with a fixed replica count and no autoscaler, replays the arrival process on it, and removes it.
// It returns nil (and fails the test) when the fleet cannot be brought up.
func staticFleetReplay(t *testing.T, e *environment, replicas int, process arrivalProcess, trace []lengths) *loadRun {
	manifests, err := staticFleetManifests(emulatorManifests(t, e), replicas)
	if err != nil {
		t.Error(err)
		return nil
	}
	if _, err := e.c.kubectl(manifests, "apply", "--server-side", "-f", "-"); err != nil {
		t.Error(err)
		return nil
	}
	defer func() {
		if err := deleteDeploymentAndWait(e.c, staticNamespace, target); err != nil {
			t.Error(err)
		}
		if _, err := e.c.kubectl("", "delete", "namespace", staticNamespace, "--wait=false"); err != nil {
			t.Error(err)
		}
		if err := waitFor(2*time.Minute, "namespace "+staticNamespace+" deleted", func() error {
			if err := e.c.getJSON("/api/v1/namespaces/"+staticNamespace, nil); !isNotFound(err) {
				return fmt.Errorf("still there (%v): %w", err, errNotYet)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	}()
	disp := newDispatcher(e.c, staticNamespace, target, false)
	defer disp.close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := disp.waitReady(ctx, replicas); err != nil {
		t.Errorf("static fleet of %d: %v", replicas, err)
		return nil
	}
	return replay(disp, process, trace, emulatorModel, 1)
}

// staticFleetManifests is the Namespace, the Deployment (replicas set) and the Service of the rendered emulator
// overlay, moved to staticNamespace.
func staticFleetManifests(rendered string, replicas int) (string, error) {
	docs := []string{"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + staticNamespace + "\n"}
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return "", fmt.Errorf("rendered emulator overlay: %w", err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		if meta == nil || meta["name"] != target || (obj["kind"] != "Deployment" && obj["kind"] != "Service") {
			continue
		}
		meta["namespace"] = staticNamespace
		if obj["kind"] == "Deployment" {
			obj["spec"].(map[string]any)["replicas"] = replicas
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return "", err
		}
		docs = append(docs, string(b))
	}
	if len(docs) != 3 {
		return "", fmt.Errorf("the rendered emulator overlay has %d of the Deployment and Service %s", len(docs)-1, target)
	}
	return strings.Join(docs, "---\n"), nil
}

// scaleDownLosesNoRequest: over the whole closed-loop run no client request failed, was refused or cut off; every
// pod the ReplicaSet deleted carried evaluate's deletion-cost mark when it was deleted; some were deleted with
// requests open on them (else the check proves nothing), and those requests finished; every pod that was a Ready
// endpoint while requests were being sent got some.
func scaleDownLosesNoRequest(h *closedLoopHolder) func(t *testing.T, e *environment) *deployment {
	return func(t *testing.T, e *environment) *deployment {
		run := h.get(t)
		for i, r := range failures(run.loop.results) {
			if i < 20 {
				t.Errorf("request sent %s (%s phase) to %s failed: %s", r.Sent.Format("15:04:05.000"), r.Phase, r.Pod, r.Err)
			}
		}
		if n := len(failures(run.loop.results)); n > 0 {
			t.Errorf("%d of %d client requests failed, were refused or cut off", n, len(run.loop.results))
		}
		deleted, openAtDeletion, openAtSIGTERM := 0, 0, 0
		for _, p := range run.pods {
			if !p.deleted {
				continue
			}
			deleted++
			if p.costAtDeletion != "-1000" {
				t.Errorf("pod %s was deleted without evaluate's mark (deletion cost %q; marks seen %v)", p.name, p.costAtDeletion, p.costs)
			}
			for _, r := range run.loop.results {
				if r.Pod != p.name || r.Sent.After(p.deletedAt) {
					continue
				}
				if r.Sent.Add(r.E2E).After(p.deletedAt) {
					openAtDeletion++
				}
				if r.Sent.Add(r.E2E).After(p.deletedAt.Add(15 * time.Second)) {
					openAtSIGTERM++
				}
			}
		}
		t.Logf("%d pods deleted by scale-downs, all marked; %d requests were open on them when they were deleted and %d still at SIGTERM (after the 15 s preStop); none failed",
			deleted, openAtDeletion, openAtSIGTERM)
		if deleted == 0 {
			t.Error("no pod was deleted during the run: the scale-down checks prove nothing")
		}
		if openAtDeletion == 0 {
			// evaluate removes the idlest pods: at the fall's rate a deleted pod holds a request about half the time.
			t.Log("note: no request was open on a pod when it was deleted in this run: the drain itself was not exercised")
		}
		for name, p := range run.traffic {
			if p.firstReady.Before(run.loadEnd.Add(-5*time.Second)) && p.requests == 0 {
				t.Errorf("pod %s was a Ready endpoint from %s but the dispatcher never sent it a request", name, p.firstReady.Format("15:04:05"))
			}
		}
		return nil
	}
}

// againstAStaticFleet reports the closed loop beside a static fleet of the mean size inferscale used, on the same
// arrivals: attainments, failed requests and pod-seconds (the static fleet's over the same span of load).
func againstAStaticFleet(h *closedLoopHolder) func(t *testing.T, e *environment) *deployment {
	return func(t *testing.T, e *environment) *deployment {
		run := h.get(t)
		if run.static == nil {
			t.Fatal("the static fleet did not run (see ClosedLoopRampAndBurst)")
		}
		load := run.process.duration().Seconds()
		from := func(l *loadRun) time.Time { return l.began.Add(run.horizon) }
		attL, nL := attainment(run.loop.results, from(run.loop), run.loop.began.Add(run.process.duration()), closedLoopSLO)
		attS, nS := attainment(run.static.results, from(run.static), run.static.began.Add(run.process.duration()), closedLoopSLO)
		static := float64(run.staticSize) * load
		t.Logf("closed loop vs static fleet, same %d arrivals (%.0f s of load), TTFT within %s after the first horizon:\n"+
			"  | fleet | attainment | failed requests | pod-seconds over the load |\n"+
			"  | inferscale (mean %.2f pods, max %d) | %.4f (%d) | %d | %.0f |\n"+
			"  | static, %d pods | %.4f (%d) | %d | %.0f |\n"+
			"  pod-seconds inferscale/static %.2f; inferscale's idle tail back to 1 replica: %.0f pod-seconds more",
			len(run.loop.results), load, closedLoopSLO, run.meanPods, run.maxReplicas, attL, nL, len(failures(run.loop.results)), run.podSeconds,
			run.staticSize, attS, nS, len(failures(run.static.results)), static, run.podSeconds/static, run.tailSeconds)
		if len(run.static.results) != len(run.loop.results) {
			t.Errorf("the static fleet got %d requests, the closed loop %d: not the same arrivals", len(run.static.results), len(run.loop.results))
		}
		return nil
	}
}

// ceilingNote is the per-pod ceiling in evaluate's sizing note ("one pod carries U (bound-bound, R req/s; source
// model, N samples)").
var ceilingNote = regexp.MustCompile(`one pod carries ([0-9.e+-]+) \((\w+)-bound, ([0-9.e+-]+) req/s; (\w+(?: \w+)?) model, (\d+) samples\)`)

// serviceModelOnAForeignEngine reports the service model evaluate fitted from the emulator's /metrics against the
// parameters the emulator was started with, and the plan's per-pod ceiling against the concurrency at which the
// client starts missing the objective.
func serviceModelOnAForeignEngine(h *closedLoopHolder) func(t *testing.T, e *environment) *deployment {
	return func(t *testing.T, e *environment) *deployment {
		run := h.get(t)
		if run.state.Service == nil {
			t.Fatal("no service model in evaluate's state")
		}
		fit := run.state.Service.Fit.Params(model.DefaultPrior())
		samples := run.state.Service.Fit.StepSamples()
		relErr := func(got, want float64) string {
			if want == 0 {
				return fmt.Sprintf("%.3g (emulator 0)", got)
			}
			return fmt.Sprintf("%+.0f %%", 100*(got-want)/want)
		}
		t.Logf("service model fitted from the emulator's /metrics (%d step samples) vs the emulator's parameters:\n"+
			"  | parameter | prior | fitted | emulator | fit error |\n"+
			"  | α (s/step) | %.4g | %.4g | %.4g | %s |\n"+
			"  | β (s/prompt token) | %.4g | %.4g | %.4g | %s |\n"+
			"  | γs (s/sequence/step) | %.4g | %.4g | %.4g | %s |\n"+
			"  | γkv (s/step/full KV) | %.4g | %.4g | 0 | %s |",
			samples,
			model.DefaultPrior().Alpha, fit.Alpha, emulatorParams.Alpha, relErr(fit.Alpha, emulatorParams.Alpha),
			model.DefaultPrior().Beta, fit.Beta, emulatorParams.Beta, relErr(fit.Beta, emulatorParams.Beta),
			model.DefaultPrior().GammaSeq, fit.GammaSeq, emulatorParams.GammaSeq, relErr(fit.GammaSeq, emulatorParams.GammaSeq),
			model.DefaultPrior().GammaKV, fit.GammaKV, relErr(fit.GammaKV, 0))
		// The step time at a full batch, which is what the client's inter-token latency shows.
		for _, n := range []float64{1, 8, 16} {
			t.Logf("  step time at %2.0f running: fitted %.1f ms, emulator %.1f ms", n,
				1000*(fit.Alpha+fit.GammaSeq*n), 1000*(emulatorParams.Alpha+emulatorParams.GammaSeq*n))
		}
		// The plan's per-pod ceiling, as evaluate's sizing notes said it during the busiest part of the load.
		var ceilings []string
		maxRPS := 0.0
		for _, m := range ceilingNote.FindAllStringSubmatch(run.cpaLog, -1) {
			rps, _ := strconv.ParseFloat(m[3], 64)
			if m[4] != "prior" {
				maxRPS = math.Max(maxRPS, rps)
			}
			ceilings = append(ceilings, m[0])
		}
		if len(ceilings) == 0 {
			t.Fatal("no sizing note with the per-pod ceiling in the CPA log")
		}
		t.Logf("the plan's last per-pod ceiling: %s (of %d notes; the largest fitted or partly fitted: %.3g req/s)", ceilings[len(ceilings)-1], len(ceilings), maxRPS)
		// The client's view: attainment and TTFT p95 by the requests already open on the pod a request was sent to.
		type level struct {
			n, met int
			ttft   []time.Duration
		}
		levels := map[int]*level{}
		for _, r := range run.loop.results {
			if r.Pod == "" {
				continue
			}
			l := levels[r.Open+1]
			if l == nil {
				l = &level{}
				levels[r.Open+1] = l
			}
			l.n++
			if r.ok() && r.TTFT <= closedLoopSLO {
				l.met++
			}
			if r.ok() {
				l.ttft = append(l.ttft, r.TTFT)
			}
		}
		var keys []int
		for k := range levels {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		var b strings.Builder
		missFrom := 0
		for _, k := range keys {
			l := levels[k]
			att := float64(l.met) / float64(l.n)
			fmt.Fprintf(&b, "  %3d open: %5d requests, attainment %.3f, TTFT p95 %s\n", k, l.n, att, quantile(l.ttft, 0.95).Round(time.Millisecond))
			if missFrom == 0 && l.n >= 20 && att < 0.95 {
				missFrom = k
			}
		}
		t.Logf("client TTFT by the pod's concurrency when the request was sent (itself included):\n%s"+
			"the client starts missing (attainment < 0.95 at a level with ≥ 20 requests) from %d open requests per pod; "+
			"the plan's batch bound is maxNumSeqs × batchTarget = %.1f", b.String(), missFrom, 16*0.7)
		if samples == 0 {
			t.Errorf("the service model took no sample from the emulator's /metrics: it stayed on its prior")
		}
		return nil
	}
}
