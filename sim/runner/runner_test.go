package runner

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/workload"
)

func TestParseSpecs(t *testing.T) {
	specs, err := ParseSpecs("inferscale;hpa-queue:target=2,down_window_s=60 kpa,static")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(specs))
	for i, s := range specs {
		got[i] = s.String()
	}
	want := "inferscale|hpa-queue:down_window_s=60,target=2|kpa|static"
	if strings.Join(got, "|") != want {
		t.Fatalf("specs %v, want %s", got, want)
	}
	for _, bad := range []string{"", ":x=1", "hpa-queue:target", "hpa-queue:=3"} {
		if _, err := ParseSpecs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBuildRejectsUnknownPoliciesAndBadParameters(t *testing.T) {
	cfg := engine.DefaultConfig()
	opt := Options{Mode: Fast}
	for _, sp := range []Spec{
		{Name: "nosuch", Params: map[string]string{}},
		{Name: "hpa-queue", Params: map[string]string{"target": "abc"}},
		{Name: "hpa-queue", Params: map[string]string{"nosuch": "1"}},
		{Name: "inferscale", Params: map[string]string{"queueTarget": "-1"}},
	} {
		if _, err := Build(sp, cfg, opt); err == nil {
			t.Errorf("%s accepted", sp)
		}
	}
	if _, err := Build(Spec{Name: "inferscale", Params: map[string]string{}}, cfg, Options{Mode: Faithful, BinDir: t.TempDir()}); err == nil ||
		!strings.Contains(err.Error(), "make build") {
		t.Errorf("faithful mode without binaries: %v", err)
	}
}

func TestStaticStartsWarmAndInferscaleReadsSettings(t *testing.T) {
	cfg := engine.DefaultConfig()
	b, err := Build(Spec{Name: "static", Params: map[string]string{"replicas": "7"}}, cfg, Options{Mode: Fast})
	if err != nil {
		t.Fatal(err)
	}
	if b.InitialReplicas != 7 || b.Policy.Name() != "static:replicas=7" {
		t.Errorf("static: initial %d name %q", b.InitialReplicas, b.Policy.Name())
	}
	pc, env, err := InferscaleConfig(map[string]string{"queueTarget": "5", "downStabilization": "120"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if pc.QueueTarget != 5 || pc.DownStabilization != 120*time.Second || pc.MaxReplicas != cfg.MaxReplicas || pc.TTFTSLO != 2*time.Second {
		t.Errorf("policy %+v", pc)
	}
	if env["queueTarget"] != "5" || env["maxReplicas"] != "64" {
		t.Errorf("env %v", env)
	}
}

// TestInferscaleTunablesAreTheShippedSettings holds the tuner to evaluate's
// own settings: each tunable is a key evaluate accepts over its whole range,
// and the tuner's default is the shipped default.
func TestInferscaleTunablesAreTheShippedSettings(t *testing.T) {
	ps, err := Tunables("inferscale", nil)
	if err != nil || len(ps) == 0 {
		t.Fatalf("%v %v", ps, err)
	}
	defaults := knobs.Defaults()
	for _, p := range ps {
		for _, v := range []float64{p.Min, p.Max} {
			if _, err := knobs.Policy(map[string]string{p.Name: strconv.FormatFloat(v, 'g', -1, 64)}); err != nil {
				t.Errorf("%s=%g refused by evaluate: %v", p.Name, v, err)
			}
		}
		cfg, err := knobs.Policy(map[string]string{p.Name: strconv.FormatFloat(p.Default, 'g', -1, 64)})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if !reflect.DeepEqual(cfg, defaults) {
			t.Errorf("%s: the tuner's default %g is not evaluate's default", p.Name, p.Default)
		}
	}
}

func TestTunables(t *testing.T) {
	ps, err := Tunables("inferscale", []string{"queueTarget"})
	if err != nil || len(ps) != 1 || ps[0].Name != "queueTarget" {
		t.Fatalf("%v %v", ps, err)
	}
	if _, err := Tunables("inferscale", []string{"nosuch"}); err == nil {
		t.Error("unknown tunable accepted")
	}
	if _, err := Tunables("nosuch", nil); err == nil {
		t.Error("unknown policy accepted")
	}
	all, err := Tunables("hpa-queue", nil)
	if err != nil || len(all) == 0 {
		t.Fatalf("hpa-queue tunables: %v %v", all, err)
	}
}

func TestLoadSyntheticAndErrors(t *testing.T) {
	reqs, err := Load(Trace{Spec: "synthetic:demo", Seed: 1, Duration: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) < 1000 || reqs[len(reqs)-1].Arrival > 10*time.Minute {
		t.Fatalf("%d requests, last at %s", len(reqs), reqs[len(reqs)-1].Arrival)
	}
	half, err := Load(Trace{Spec: "synthetic:demo", Seed: 1, Duration: 10 * time.Minute, RateFactor: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if r := float64(len(half)) / float64(len(reqs)); r < 0.4 || r > 0.6 {
		t.Errorf("rate factor 0.5 kept %.2f of the requests", r)
	}
	if _, err := Load(Trace{Spec: filepath.Join(t.TempDir(), "missing.csv")}); err == nil {
		t.Error("missing file accepted")
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(Trace{Spec: bad}); err == nil {
		t.Error("unknown CSV accepted")
	}
}

func TestRunReplaysEveryPolicy(t *testing.T) {
	cfg := engine.DefaultConfig()
	reqs, err := Load(Trace{Spec: "synthetic:demo", Seed: 2, Duration: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		b, err := Build(Spec{Name: name, Params: map[string]string{}}, cfg, Options{Mode: Fast})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := Run(context.Background(), cfg, workloadCopy(reqs), b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Completed+res.Rejected+res.Killed+res.Unfinished != len(reqs) {
			t.Errorf("%s: %d+%d+%d+%d of %d requests accounted", name, res.Completed, res.Rejected, res.Killed, res.Unfinished, len(reqs))
		}
	}
}

func workloadCopy(r []workload.Request) []workload.Request {
	return append([]workload.Request(nil), r...)
}
