//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/decisionlog"
)

// The prefill/decode pair (docs/roles.md): deploy/overlays/pd applied as a user applies it, its two vLLM
// Deployments run by llm-d's vLLM emulator in its P/D mode (deploy/e2e/emulator-pd), each scaled by its own
// CustomPodAutoscaler, under a client that makes the routing sidecar's two requests per user request: the prefill
// request to a prefill pod (max_tokens 1, not streamed, kv_transfer_params.do_remote_decode), then the decode request
// with the kv_transfer_params the prefill pod returned to a decode pod's vLLM port (streamed).

// The two autoscalers of deploy/base-pd and what each scales.
var (
	prefillNames = names{autoscaler: "inferscale-llm-prefill", target: "llm-prefill", stateCM: "inferscale-llm-prefill-state"}
	decodeNames  = names{autoscaler: "inferscale-llm-decode", target: "llm-decode", stateCM: "inferscale-llm-decode-state"}
)

// pdPhase is one phase of the P/D load: Poisson arrivals at a constant rate, prompt and output lengths drawn
// uniformly within ±20 % of In and Out.
type pdPhase struct {
	phase
	In, Out int
}

// pdLoad is the scenario's load. The emulator (profile 8b-h100-balanced-per-token, --max-num-seqs 16) prefills a
// prompt in (30 ms + 250 µs a token) × its load factor (1 alone, 2 at 16 running) and streams a token every 12 ms ×
// the same factor; a decode pod's TTFT is the KV transfer, 3 µs a prompt token.
//   - prefill-heavy: 2,500-token prompts, 4-token answers, 16 req/s. A prefill takes 0.66–1.3 s, so one prefill pod
//     (at most 16 at a time, about 12 req/s at a full batch) cannot keep up: a queue builds and its TTFT passes the
//     pool's 1 s objective. The decode pool's streams last about 60 ms, about one open at a time, which one pod
//     carries.
//   - decode-heavy: 128-token prompts, 400-token answers, 5 req/s: streams of 5–10 s, 25–50 open, three or more
//     decode pods' batches; the prefill pool's work is a fifth of a pod's.
var pdLoad = []pdPhase{
	{phase{"prefill-heavy", 50 * time.Second, 16, 16}, 2500, 4},
	{phase{"decode-heavy", 50 * time.Second, 5, 5}, 128, 400},
}

// pdReaction is how long after the load changes a pool may still act on the load before: a few ticks of CPA, each
// reading what the pods counted over the last one.
const pdReaction = 5 * tick

// pdTuning is closedLoopTuning for each role: the same time-shortening knobs and the emulator's batch limit, and the
// overlay's own metricsPort for that role (8000 prefill, 8200 decode: each emulator pod has its own network). The
// two CPA pods share the test's network namespace (a cluster gives each its own), so the decode one serves CPA's
// REST API on 5001 (CPA's apiConfig, as config/config.yaml has it but the port), the prefill one on the shipped 5000.
func pdTuning() (prefill, decode map[string]string) {
	role := func(metricsPort string) map[string]string {
		return tuning(map[string]string{"metricsPort": metricsPort, "maxNumSeqs": "16", "defaultStartup": "15s"})
	}
	prefill, decode = role("8000"), role("8200")
	decode["apiConfig"] = `{"enabled":true,"host":"0.0.0.0","port":5001}`
	// The ratio guard (docs/roles.md) on the decode pool, at a ratio that never binds here (⌈0.01 × the prefill
	// pool's replicas⌉ is the one pod minReplicas keeps anyway): what the scenario checks of it is the read, metric
	// reading llm-prefill's scale subresource through the API server under the grant deployPD adds, and the
	// decision log carrying what it read (checkRatioGuard); the floor's arithmetic is shared/policy's tests'.
	decode["ratioPeer"], decode["ratioMin"] = prefillNames.target, "0.01"
	return prefill, decode
}

// ratioGrant is the Role rule the ratio guard needs: get on the other pool's scale subresource (docs/roles.md).
func ratioGrant(peer string) string {
	return `[{"op":"add","path":"/rules/-","value":{"apiGroups":["apps"],"resources":["deployments/scale"],` +
		`"resourceNames":["` + peer + `"],"verbs":["get"]}}]`
}

// checkRatioGuard: the decode pool's decision lines carry the ratio guard's reading of the prefill pool, never
// an unread one, and at some tick the prefill replicas it read was more than one (the prefill-heavy phase).
func checkRatioGuard(t *testing.T, decode *deployment, peer string) {
	t.Helper()
	lines, err := decisionlog.Parse(strings.NewReader(decode.cpaLog(t)))
	if err != nil {
		t.Fatalf("the decode pool's decision log: %v", err)
	}
	read, most := 0, 0
	for _, l := range lines {
		switch r := l.Ratio; {
		case r == nil:
			t.Errorf("decision at %s has no ratio guard reading (ratioMin is set)", l.Time.Format("15:04:05"))
			return
		case r.PeerReplicas == nil:
			t.Errorf("decision at %s: the other pool %q unread: %s", l.Time.Format("15:04:05"), r.Peer, r.Error)
		case r.Peer != peer || r.Floor != (*r.PeerReplicas+99)/100:
			t.Errorf("decision at %s: ratio guard %+v, want %s's replicas and a floor of ⌈0.01 × them⌉", l.Time.Format("15:04:05"), r, peer)
		default:
			read++
			most = max(most, *r.PeerReplicas)
		}
	}
	if read == 0 || most < 2 {
		t.Errorf("the ratio guard read the prefill pool in %d of %d decisions, at most %d replicas: want it to see the prefill pool scale up", read, len(lines), most)
	}
	t.Logf("ratio guard: %d decisions read %s, up to %d replicas", read, peer, most)
}

// deployPD applies deploy/e2e/emulator-pd (rendered with the emulators' startup set to emulatorStartup), then each
// role's config entries on its CustomPodAutoscaler, and returns the two pools; the kubelet runs the emulator pods.
// Cleanup deletes both Deployments, waits for their pods (preStop, drain), then removes the rest.
func (e *environment) deployPD(t *testing.T, prefill, decode map[string]string) (*deployment, *deployment) {
	t.Helper()
	manifests := renderEmulated(t, e, "emulator-pd")
	if _, err := e.c.kubectl(manifests, "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	var pools []*deployment
	for _, n := range []names{prefillNames, decodeNames} {
		pools = append(pools, &deployment{names: n, env: e, c: e.c, overlay: "e2e/emulator-pd", fleet: newVLLMFleet(vllmPort),
			began: began, emulated: true, history: &replicaHistory{}})
	}
	stop := make(chan struct{})
	var watchers sync.WaitGroup
	for _, d := range pools {
		watchers.Add(1)
		go func() { defer watchers.Done(); d.watchPods(t, stop) }()
	}
	t.Cleanup(func() {
		close(stop)
		watchers.Wait()
		// Both Deployments at once, so that their pods' preStop and drain overlap.
		if _, err := e.c.kubectl("", "delete", "deployment", prefillNames.target, decodeNames.target, "-n", namespace,
			"--wait=false", "--ignore-not-found"); err != nil {
			t.Error(err)
		}
		for _, d := range pools {
			if err := deleteDeploymentAndWait(e.c, namespace, d.target); err != nil {
				t.Error(err)
			}
		}
		if _, err := e.c.kubectl(manifests, "delete", "-f", "-", "--wait=false", "--ignore-not-found"); err != nil {
			t.Error(err)
		}
		pools[0].waitGone(t)
	})
	if peer := decode["ratioPeer"]; peer != "" {
		// Before the config that turns the guard on: a read the Role refused would fail the audit check.
		if _, err := e.c.kubectl("", "patch", "role", decodeNames.autoscaler, "-n", namespace, "--type=json", "-p", ratioGrant(peer)); err != nil {
			t.Fatal(err)
		}
	}
	pools[0].setConfig(t, prefill)
	pools[1].setConfig(t, decode)
	return pools[0], pools[1]
}

// pdResult is one user request as the client saw it across the pair.
type pdResult struct {
	Sent                  time.Time
	Phase                 int // index in pdLoad
	In, Out               int
	PrefillPod, DecodePod string
	Prefill               time.Duration // the prefill request, sent to answered
	TTFT                  time.Duration // the user's: the prefill request, then the decode pod's first token
	DecodeE2E             time.Duration // the decode request, sent to its last token
	ITL                   time.Duration
	Err                   string
}

// replayPD sends the load's requests through the two dispatchers and returns when every request has finished.
func replayPD(prefill, decode *dispatcher, load []pdPhase, seed uint64) (time.Time, []pdResult) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	type arrival struct {
		at    time.Duration
		phase int
	}
	var arrivals []arrival
	var start time.Duration
	for i, p := range load {
		for _, at := range (arrivalProcess{p.phase}).arrivals(rng) {
			arrivals = append(arrivals, arrival{start + at, i})
		}
		start += p.Duration
	}
	client := loadClient()
	defer client.CloseIdleConnections()
	began := time.Now()
	results := make([]pdResult, len(arrivals))
	var wg sync.WaitGroup
	for i, a := range arrivals {
		spread := func(n int) int { return max(1, n*(80+rng.IntN(41))/100) }
		in, out := spread(load[a.phase].In), spread(load[a.phase].Out)
		time.Sleep(time.Until(began.Add(a.at)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = pdResult{Sent: time.Now(), Phase: a.phase, In: in, Out: out}
			pdRequest(client, prefill, decode, fmt.Sprintf("r%d", i), &results[i])
		}()
	}
	wg.Wait()
	return began, results
}

// pdRequest makes the routing sidecar's two requests for one user request (docs/roles.md, "How a request crosses
// the pair") and records what the user sees.
func pdRequest(client *http.Client, prefill, decode *dispatcher, id string, r *pdResult) {
	pe, _, ok := prefill.acquire()
	if !ok {
		r.Err = "no Ready prefill endpoint"
		return
	}
	r.PrefillPod = pe.pod
	kv, err := prefillRequest(client, pe.addr, id, r.In)
	prefill.release(pe)
	r.Prefill = time.Since(r.Sent)
	if err != nil {
		r.Err = "prefill: " + err.Error()
		return
	}
	de, _, ok := decode.acquire()
	if !ok {
		r.Err = "no Ready decode endpoint"
		return
	}
	r.DecodePod = de.pod
	dr := result{In: r.In, Out: r.Out}
	stream(client, de.addr, emulatorModel, id, map[string]any{"kv_transfer_params": kv}, &dr)
	decode.release(de)
	if dr.Err != "" {
		r.Err = "decode: " + dr.Err
		return
	}
	r.TTFT, r.DecodeE2E, r.ITL = r.Prefill+dr.TTFT, dr.E2E, dr.ITL
}

// prefillRequest is the sidecar's first request: the user's request with max_tokens 1, not streamed, and
// kv_transfer_params {do_remote_decode: true}; it returns the kv_transfer_params of the answer, which must say
// do_remote_prefill (what the decode pod is to read the KV blocks with).
func prefillRequest(client *http.Client, addr, id string, in int) (map[string]any, error) {
	req := completion(emulatorModel, id, in, 1)
	req["stream"] = false
	req["kv_transfer_params"] = map[string]any{"do_remote_decode": true, "do_remote_prefill": false}
	body, _ := json.Marshal(req)
	resp, err := client.Post("http://"+addr+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answer %s: %.300s", resp.Status, b)
	}
	var ans struct {
		KV map[string]any `json:"kv_transfer_params"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		return nil, fmt.Errorf("answer %.300s: %w", b, err)
	}
	if ans.KV == nil || ans.KV["do_remote_prefill"] != true {
		return nil, fmt.Errorf("no kv_transfer_params with do_remote_prefill in the answer %.300s", b)
	}
	return ans.KV, nil
}

// pdPoolsScaleOnTheirOwnWork: the P/D pair, idle at one pod each, takes a prefill-heavy load, then a decode-heavy
// one. The prefill-heavy phase must scale the prefill pool up while the decode pool stays below it and is back at
// one pod, what its streams need, before the phase ends. (At the load's step the decode plan may staff more for a
// while: its first forecast's upper bound is wide, and until its prefill term is fitted it prices each request's
// full prompt, which decode pods count, at the prior's cost: docs/roles.md.) The decode-heavy phase must scale the
// decode pool to three or more, above its prefill-heavy peak, while the prefill pool grows no further (once
// pdReaction has passed). No request may fail, and each autoscaler must have made API calls, each granted by its
// own Role.
func pdPoolsScaleOnTheirOwnWork(t *testing.T, e *environment) *deployment {
	prefillConfig, decodeConfig := pdTuning()
	prefill, decode := e.deployPD(t, prefillConfig, decodeConfig)
	pdisp := newDispatcher(e.c, namespace, prefillNames.target, true)
	defer pdisp.close()
	ddisp := newDispatcher(e.c, namespace, decodeNames.target, true)
	defer ddisp.close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, x := range []*dispatcher{pdisp, ddisp} {
		if err := x.waitReady(ctx, 1); err != nil {
			t.Fatalf("the emulator pod never became a Ready endpoint of Service %s: %v", x.svc, err)
		}
	}
	for _, d := range []*deployment{prefill, decode} {
		if r := d.replicas(t); r != 1 {
			t.Fatalf("idle %s: replicas %d, want 1", d.target, r)
		}
	}
	began, results := replayPD(pdisp, ddisp, pdLoad, 1)
	done := time.Now()

	// The phases' windows: the last one runs until its last request finished.
	peak := func(d *deployment, from, to time.Time) int {
		m := 0
		for _, r := range d.history.between(from, to) {
			m = max(m, r)
		}
		return m
	}
	var pPeak, dPeak []int
	from := began
	// The prefill pool after its phase: from when it has seen the decode-heavy load.
	phaseEnd := began.Add(pdLoad[0].Duration)
	prefillAfter := peak(prefill, phaseEnd.Add(pdReaction), done)
	for i, p := range pdLoad {
		to := from.Add(p.Duration)
		if i == len(pdLoad)-1 {
			to = done
		}
		pPeak, dPeak = append(pPeak, peak(prefill, from, to)), append(dPeak, peak(decode, from, to))
		logPDPhase(t, p, results, i, from, to, pPeak[i], dPeak[i])
		from = to
	}
	t.Logf("replicas over the load (seconds after it began: replicas): %s %s; %s %s", prefill.target, prefill.history.since(began),
		decode.target, decode.history.since(began))

	fails := 0
	for _, r := range results {
		if r.Err != "" {
			if fails < 20 {
				t.Errorf("request sent %s (%s) failed: %s", r.Sent.Format("15:04:05.000"), pdLoad[r.Phase].Name, r.Err)
			}
			fails++
		}
	}
	if fails > 0 {
		t.Errorf("%d of %d requests failed", fails, len(results))
	}
	if pPeak[0] < 2 {
		t.Errorf("prefill-heavy phase: the prefill pool reached %d replicas, want it scaled up", pPeak[0])
	}
	if dPeak[0] >= pPeak[0] {
		t.Errorf("prefill-heavy phase: the decode pool reached %d replicas, the prefill pool %d: want it below the prefill pool", dPeak[0], pPeak[0])
	}
	if r := decode.history.between(phaseEnd, phaseEnd); len(r) != 1 || r[0] != 1 {
		t.Errorf("end of the prefill-heavy phase: the decode pool at %v replicas, want 1 (what its streams need)", r)
	}
	if dPeak[1] < 3 || dPeak[1] <= dPeak[0] {
		t.Errorf("decode-heavy phase: the decode pool reached %d replicas (%d before), want 3 or more, above the prefill-heavy phase's",
			dPeak[1], dPeak[0])
	}
	if prefillAfter > pPeak[0] {
		t.Errorf("decode-heavy phase: the prefill pool grew to %d replicas, past the %d its own prefill-heavy work needed", prefillAfter, pPeak[0])
	}
	for _, d := range []*deployment{prefill, decode} {
		used := d.checkLeastPrivilege(t)
		if len(used) == 0 {
			t.Errorf("no API call of %s in the audit log: its Role is not checked", d.autoscaler)
		}
		if peer := decodeConfig["ratioPeer"]; d == decode && !used[grant{Group: "apps", Resource: "deployments/scale", Verb: "get", Name: peer}] {
			t.Errorf("the decode pool's autoscaler never read %s's scale subresource (the ratio guard)", peer)
		}
	}
	checkRatioGuard(t, decode, decodeConfig["ratioPeer"])
	return nil
}

// logPDPhase logs one phase as the client saw it: requests, failures, the user's TTFT, the prefill request's time,
// the decode pool's streams and the replicas each pool reached.
func logPDPhase(t *testing.T, p pdPhase, results []pdResult, phase int, from, to time.Time, prefillPeak, decodePeak int) {
	t.Helper()
	var ttft, pre, itl []time.Duration
	n, fails := 0, 0
	var streams time.Duration
	pods := map[string]map[string]bool{"prefill": {}, "decode": {}}
	for _, r := range results {
		if r.Phase != phase {
			continue
		}
		n++
		if r.Err != "" {
			fails++
			continue
		}
		ttft, pre, itl = append(ttft, r.TTFT), append(pre, r.Prefill), append(itl, r.ITL)
		streams += r.DecodeE2E
		pods["prefill"][r.PrefillPod], pods["decode"][r.DecodePod] = true, true
	}
	q := func(ds []time.Duration, x float64) time.Duration { return quantile(ds, x).Round(time.Millisecond) }
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %.0f req/s, prompts ~%d, answers ~%d tokens): %d requests, %d failed; user TTFT p50 %s p95 %s; ",
		p.Name, p.Duration, p.From, p.In, p.Out, n, fails, q(ttft, 0.5), q(ttft, 0.95))
	fmt.Fprintf(&b, "prefill request p50 %s p95 %s; ITL p50 %s; decode streams open %.1f on average; ",
		q(pre, 0.5), q(pre, 0.95), quantile(itl, 0.5).Round(100*time.Microsecond), streams.Seconds()/to.Sub(from).Seconds())
	fmt.Fprintf(&b, "replicas reached: prefill %d (%d pods served), decode %d (%d pods served)",
		prefillPeak, len(pods["prefill"]), decodePeak, len(pods["decode"]))
	t.Log(b.String())
}

// since is every replica count from origin on, with its offset from origin ("0s:1 12.3s:3").
func (h *replicaHistory) since(origin time.Time) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for i, c := range h.changes {
		if c.at.Before(origin) && i+1 < len(h.changes) && !h.changes[i+1].at.After(origin) {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d", max(0, c.at.Sub(origin)).Round(100*time.Millisecond), c.replicas))
	}
	return strings.Join(out, " ")
}
