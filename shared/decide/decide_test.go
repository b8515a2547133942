package decide

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fleetSim is a crude load model for property tests: pods with queue,
// KV and counters driven by a random load.
type fleetSim struct {
	rng      *rand.Rand
	reqs     map[string]float64
	fast     map[string]float64
	created  map[string]time.Time
	nextName int
}

func newFleetSim(seed uint64) *fleetSim {
	return &fleetSim{rng: rand.New(rand.NewPCG(seed, 7)), reqs: map[string]float64{}, fast: map[string]float64{}, created: map[string]time.Time{}}
}

// entries builds the metric results for replicas pods at now with the
// given load (requests in flight over the whole fleet, spread over the
// ready pods); missingProb makes pods missing.
func (f *fleetSim) entries(replicas int, load float64, now time.Time, missingProb float64) []Entry {
	var out []Entry
	ready := 0
	for i := 0; i < replicas; i++ {
		if c, ok := f.created[fmt.Sprintf("pod-%03d", i)]; ok && now.Sub(c) >= 60*time.Second {
			ready++
		}
	}
	perPod := load / float64(max(ready, 1))
	for i := 0; i < replicas; i++ {
		name := fmt.Sprintf("pod-%03d", i)
		if _, ok := f.created[name]; !ok {
			f.created[name] = now
		}
		created := f.created[name]
		if f.rng.Float64() < missingProb {
			out = append(out, Entry{Resource: name})
			continue
		}
		pod := signal.Pod{Name: name, Phase: "Running", ScrapeTime: now, CreatedAt: &created}
		if now.Sub(created) >= 60*time.Second {
			readyAt := created.Add(60 * time.Second)
			pod.Ready, pod.ReadyAt, pod.StartupSeconds = true, &readyAt, signal.F(60)
			inflight := perPod * (0.8 + 0.4*f.rng.Float64())
			running := min(inflight, 100)
			f.reqs[name] += running * 0.5 * 15
			pod.Running, pod.Waiting = signal.F(running), signal.F(inflight-running)
			pod.KVCacheUsage = signal.F(min(1, running/100))
			pod.GPU = &signal.GPU{Utilization: signal.F(min(1, running/50))}
			pod.RequestsTotal = signal.F(f.reqs[name])
			// Requests are fast unless they queue; cumulative counts only grow.
			f.fast[name] += running * 7.5 * max(0, 1-(inflight-running)/50)
			c := f.reqs[name]
			pod.TTFT = &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.5, Count: f.fast[name]}, {UpperBound: 2, Count: f.fast[name]}}, Count: c, Sum: c}
		}
		out = append(out, Entry{Resource: name, Report: &signal.Report{Version: signal.Version, ScrapeTime: now, Pods: []signal.Pod{pod}}})
	}
	return out
}

// Properties over random load sequences, for policy v2 (the defaults)
// and v1: the target stays in [min, max]; no scale-down while a pod's data
// is missing; a state that goes through JSON every tick gives exactly the
// in-memory decisions; v1's scale-ups are at least the up-cooldown apart,
// its scale-downs the down-cooldown, and its steps within the cap; v2
// never scales down while a pod is starting, nor within the hold of a
// scale-up.
func TestPropertiesOverRandomSequences(t *testing.T) {
	for _, v2 := range []bool{true, false} {
		t.Run(map[bool]string{true: "v2", false: "v1"}[v2], func(t *testing.T) { checkProperties(t, v2) })
	}
}

func checkProperties(t *testing.T, v2 bool) {
	for seed := uint64(1); seed <= 20; seed++ {
		cfg := knobs.Defaults()
		cfg.ServiceModel = v2
		cfg.MinReplicas, cfg.MaxReplicas = 1+int(seed%3), 12+int(seed%5)
		mem, disk := state.New(), state.New()
		simA, simB := newFleetSim(seed), newFleetSim(seed)
		rng := rand.New(rand.NewPCG(seed, 99))
		current := cfg.MinReplicas
		var lastUp, lastDown *time.Time
		lastUpSignals := 0
		load, base := 100.0, 100.0
		for tick := 0; tick < 300; tick++ {
			now := t0.Add(time.Duration(tick) * 15 * time.Second)
			if tick%40 == 0 {
				base = []float64{30, 200, 600, 1200}[rng.IntN(4)]
			}
			load = max(0, load+0.2*(base-load)+rng.NormFloat64()*20)
			missing := 0.0
			if rng.Float64() < 0.1 {
				missing = 0.3
			}
			ea := simA.entries(current, load, now, missing)
			eb := simB.entries(current, load, now, missing)
			d := Step(cfg, mem, current, ea, now)

			b, err := state.Encode(disk)
			if err != nil {
				t.Fatal(err)
			}
			disk, err = state.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			d2 := Step(cfg, disk, current, eb, now)
			if !reflect.DeepEqual(d, d2) {
				t.Fatalf("seed %d tick %d: JSON round-trip changed the decision:\n%+v\n%+v", seed, tick, d, d2)
			}
			if d.Target < cfg.MinReplicas || d.Target > cfg.MaxReplicas {
				t.Fatalf("seed %d tick %d: target %d outside [%d, %d]", seed, tick, d.Target, cfg.MinReplicas, cfg.MaxReplicas)
			}
			if d.Target < current && current <= cfg.MaxReplicas {
				if d.Fleet.Missing > 0 {
					t.Fatalf("seed %d tick %d: scale-down %d -> %d with %d missing", seed, tick, current, d.Target, d.Fleet.Missing)
				}
				if v2 && d.Fleet.Starting > 0 {
					t.Fatalf("seed %d tick %d: scale-down %d -> %d with %d pods starting", seed, tick, current, d.Target, d.Fleet.Starting)
				}
				if v2 && lastUp != nil && now.Sub(*lastUp) < cfg.ScaleDownHold {
					t.Fatalf("seed %d tick %d: scale-down %s after a scale-up, within the hold %s", seed, tick, now.Sub(*lastUp), cfg.ScaleDownHold)
				}
				if !v2 && lastDown != nil && now.Sub(*lastDown) < cfg.ScaleDownCooldown {
					t.Fatalf("seed %d tick %d: scale-down %s after the previous one", seed, tick, now.Sub(*lastDown))
				}
				n := now
				lastDown = &n
			}
			if d.Target > current && d.ScheduleFloor == 0 && d.PredictiveFloor < d.Target && v2 {
				n := now
				lastUp = &n
			} else if d.Target > current && d.ScheduleFloor == 0 && d.PredictiveFloor < d.Target {
				if lastUp != nil && now.Sub(*lastUp) < cfg.ScaleUpCooldown && !d.Urgent && d.Signals <= lastUpSignals {
					t.Fatalf("seed %d tick %d: scale-up %s after the previous one", seed, tick, now.Sub(*lastUp))
				}
				step := max(cfg.DecisiveMaxPods, (current*int(cfg.DecisiveMaxFraction*100)+99)/100)
				if d.Target-current > step && current >= cfg.MinReplicas {
					t.Fatalf("seed %d tick %d: step %d -> %d above the cap +%d", seed, tick, current, d.Target, step)
				}
				n := now
				lastUp, lastUpSignals = &n, d.Signals
			}
			current = d.Target
		}
	}
}

func input(t *testing.T, replicas string, values ...string) []byte {
	t.Helper()
	var ms []string
	for i, v := range values {
		b, _ := json.Marshal(v)
		ms = append(ms, fmt.Sprintf(`{"resource":"pod-%d","value":%s}`, i, b))
	}
	return []byte(`{"metrics":[` + strings.Join(ms, ",") + `],"resource":{"kind":"Deployment","spec":{"replicas":` + replicas + `}},"runType":"scaler"}`)
}

const goodValue = `{"v":1,"scrapeTime":"2026-11-29T12:00:00Z","pods":[{"name":"p","ready":true,"scrapeTime":"2026-11-29T12:00:00Z","waiting":1,"running":2}]}` + "\n"

func TestParseInputBadInputs(t *testing.T) {
	cases := map[string][]byte{
		"malformed":           []byte(`{"metrics":[`),
		"two documents":       []byte(`{"resource":{"spec":{"replicas":1}},"runType":"scaler"} {}`),
		"missing resource":    []byte(`{"metrics":null,"runType":"scaler"}`),
		"missing replicas":    []byte(`{"metrics":null,"resource":{"spec":{}},"runType":"scaler"}`),
		"replicas string":     input(t, `"3"`),
		"replicas float":      input(t, `3.5`),
		"replicas negative":   input(t, `-1`),
		"unknown runType":     []byte(`{"metrics":null,"resource":{"spec":{"replicas":1}},"runType":"sometimes"}`),
		"null metric":         []byte(`{"metrics":[null],"resource":{"spec":{"replicas":1}},"runType":"scaler"}`),
		"unknown sig version": input(t, `2`, `{"v":99,"pods":[]}`),
		"value wrong type":    []byte(`{"metrics":[{"resource":"a","value":5}],"resource":{"spec":{"replicas":1}},"runType":"scaler"}`),
	}
	for name, b := range cases {
		if _, _, err := ParseInput(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A value that is present but not a valid signal report fails the
	// whole input, naming the entry and the pod.
	const pod = `"name":"x","ready":true,"scrapeTime":"2026-11-29T12:00:00Z"`
	badValues := map[string]string{
		"not JSON":          "NaN",
		"truncated":         goodValue[:40],
		"two documents":     goodValue + goodValue,
		"wrong type":        `{"v":1,"pods":[{` + pod + `,"waiting":"3"}]}`,
		"negative":          `{"v":1,"pods":[{` + pod + `,"waiting":-1}]}`,
		"fraction above 1":  `{"v":1,"pods":[{` + pod + `,"kvCacheUsage":1.5}]}`,
		"overflow to Inf":   `{"v":1,"pods":[{` + pod + `,"running":1e999}]}`,
		"version 2":         `{"v":2,"pods":[{` + pod + `}]}`,
		"version missing":   `{"pods":[{` + pod + `}]}`,
		"version string":    `{"v":"1","pods":[{` + pod + `}]}`,
		"no pods":           `{"v":1}`,
		"array":             `[1]`,
		"histogram not cum": `{"v":1,"pods":[{` + pod + `,"ttft":{"b":[{"le":1,"c":5},{"le":2,"c":3}],"count":5,"sum":1}}]}`,
	}
	for name, v := range badValues {
		_, _, err := ParseInput(input(t, "3", goodValue, "", v))
		if err == nil {
			t.Errorf("bad value %s: accepted", name)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "metrics[2]") || !strings.Contains(msg, `"pod-2"`) || strings.Contains(msg, "\n") {
			t.Errorf("bad value %s: error does not name the entry on one line: %q", name, msg)
		}
	}
	// An empty value (metric printed nothing) is a missing pod, not an error.
	in, warns, err := ParseInput(input(t, "2", goodValue, "", " \n"))
	if err != nil {
		t.Fatal(err)
	}
	if in.CurrentReplicas != 2 || len(in.Entries) != 3 || in.Entries[0].Report == nil || in.Entries[1].Report != nil ||
		in.Entries[2].Report != nil || len(warns) != 2 || in.Entries[1].Resource != "pod-1" {
		t.Fatalf("entries %+v warnings %q", in.Entries, warns)
	}
	// CPA leaves "value" out when the metric run printed nothing.
	in, _, err = ParseInput([]byte(`{"metrics":[{"resource":"a"}],"resource":{"spec":{"replicas":1}},"runType":"scaler"}`))
	if err != nil || len(in.Entries) != 1 || in.Entries[0].Report != nil || in.Entries[0].Resource != "a" {
		t.Fatalf("value left out: %v %+v", err, in)
	}
	if in, _, err := ParseInput([]byte(`{"metrics":null,"resource":{"spec":{"replicas":0}},"runType":"api_dry_run"}`)); err != nil || len(in.Entries) != 0 {
		t.Fatalf("null metrics: %v", err)
	}
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRunWritesOneObjectAndHonoursDryRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	e := env(map[string]string{"stateFile": path, "INFERSCALE_NOW": "2026-11-29T12:00:05Z", "configPath": filepath.Join(dir, "none.yaml")})
	dry := bytes.Replace(input(t, "1", goodValue), []byte(`"scaler"`), []byte(`"api_dry_run"`), 1)
	var out bytes.Buffer
	if err := Run(context.Background(), Process{Stdin: bytes.NewReader(dry), Stdout: &out, Lookup: e, Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	var o cpa.EvaluateOutput
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out.String())
	}
	if o.CurrentReplicas != 1 || o.TargetReplicas < 1 {
		t.Fatalf("output %+v", o)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("dry run wrote the state file (%v)", err)
	}
	out.Reset()
	if err := Run(context.Background(), Process{Stdin: bytes.NewReader(input(t, "1", goodValue)), Stdout: &out, Lookup: e, Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("scaler run did not write state: %v", err)
	}
	// Bad input: error, nothing on stdout, state untouched.
	for _, bad := range [][]byte{[]byte(`{`), input(t, `"x"`, goodValue), bytes.Repeat([]byte(" "), cpa.MaxInputBytes+1)} {
		out.Reset()
		if err := Run(context.Background(), Process{Stdin: bytes.NewReader(bad), Stdout: &out, Lookup: e, Log: quietLog()}); err == nil {
			t.Fatal("bad input accepted")
		}
		if out.Len() != 0 {
			t.Fatalf("stdout written on error: %q", out.String())
		}
	}
	// Bad config: names the key, state untouched.
	out.Reset()
	e2 := env(map[string]string{"stateFile": path, "queueTarget": "-3", "configPath": filepath.Join(dir, "none.yaml")})
	err = Run(context.Background(), Process{Stdin: bytes.NewReader(input(t, "1", goodValue)), Stdout: &out, Lookup: e2, Log: quietLog()})
	if err == nil || !strings.Contains(err.Error(), "queueTarget") || out.Len() != 0 {
		t.Fatalf("bad config: err %v stdout %q", err, out.String())
	}
	// A typo in the policy file is an error naming the key.
	pf := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pf, []byte("queueTarget: 4\nqueueTraget: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e3 := env(map[string]string{"stateFile": path, "policyFile": pf, "configPath": filepath.Join(dir, "none.yaml")})
	err = Run(context.Background(), Process{Stdin: bytes.NewReader(input(t, "1", goodValue)), Stdout: &out, Lookup: e3, Log: quietLog()})
	if err == nil || !strings.Contains(err.Error(), "queueTraget") || out.Len() != 0 {
		t.Fatalf("policy-file typo: err %v stdout %q", err, out.String())
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, saved) {
		t.Fatal("state changed by a failed run")
	}
}

func FuzzParseInput(f *testing.F) {
	f.Add([]byte(`{"metrics":null,"resource":{"spec":{"replicas":1}},"runType":"scaler"}`))
	f.Add([]byte(`{"metrics":[{"resource":"a","value":` + fmt.Sprintf("%q", goodValue) + `},{"resource":"b"}],"resource":{"spec":{"replicas":2}},"runType":"api"}`))
	f.Add([]byte(`{"metrics":[{"resource":"a","value":"{\"v\":2}"}],"resource":{"spec":{"replicas":2}},"runType":"api"}`))
	f.Add([]byte(`{"resource":{"spec":{"replicas":1e400}},"runType":"scaler"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, _, err := ParseInput(b)
		if err != nil {
			return
		}
		if in.CurrentReplicas < 0 || !cpa.ValidRunType(in.RunType) {
			t.Fatalf("accepted bad input: %+v", in)
		}
		// Whatever parses must decide without panicking and within bounds.
		cfg := knobs.Defaults()
		d := Step(cfg, state.New(), in.CurrentReplicas, in.Entries, t0)
		if Disabled(cfg, in.CurrentReplicas) {
			if d.Target != 0 {
				t.Fatalf("autoscaling disabled, target %d", d.Target)
			}
			return
		}
		if d.Target < cfg.MinReplicas || d.Target > cfg.MaxReplicas {
			t.Fatalf("target %d out of bounds", d.Target)
		}
	})
}
