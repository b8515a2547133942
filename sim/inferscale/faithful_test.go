package inferscale

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/scaler"
)

// fakeBins writes shell-script stand-ins for metric and evaluate.
func fakeBins(t *testing.T, metric, evaluate string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"metric": metric, "evaluate": evaluate} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func obs() scaler.Observation {
	base := engine.DefaultConfig().Base
	return scaler.Observation{Now: base.Add(time.Minute), SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 10,
		Pods: []scaler.PodView{{Name: "llm-00000", Phase: scaler.Pending, CreatedAt: base, Serial: 0}}}
}

func TestFaithfulReportsStageFailuresClearly(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh for the stand-in binaries")
	}
	cases := []struct {
		name, metric, evaluate, want string
	}{
		{"metric exits non-zero", `echo boom >&2; exit 3`, `echo '{"targetReplicas":1}'`, "boom"},
		{"metric hangs", `sleep 5`, `echo '{"targetReplicas":1}'`, "timed out"},
		{"evaluate prints garbage", `cat >/dev/null; echo '{"v":1}'`, `echo 'log line'`, "failed to parse JSON evaluation"},
		{"evaluate prints a fraction", `cat >/dev/null; echo '{"v":1}'`, `echo '{"targetReplicas":2.5}'`, "targetReplicas"},
	}
	for _, c := range cases {
		f, err := NewFaithful(FaithfulOptions{BinDir: fakeBins(t, c.metric, c.evaluate), Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Recommend(obs())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
		if errors.Is(err, engine.ErrFatal) {
			t.Errorf("%s: a failed tick must not stop the replay", c.name)
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestFaithfulPassesCPAInputsAndAppliesItsClamp(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh for the stand-in binaries")
	}
	dir := t.TempDir()
	// metric records its stdin and env; evaluate asks for 50 replicas.
	metric := `cat > ` + dir + `/metric.in; env > ` + dir + `/metric.env; echo '{"v":1}'`
	evaluate := `cat > ` + dir + `/evaluate.in; echo '{"targetReplicas":50}'`
	f, err := NewFaithful(FaithfulOptions{BinDir: fakeBins(t, metric, evaluate), Env: map[string]string{"queueTarget": "4"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := f.Recommend(obs())
	if err != nil {
		t.Fatal(err)
	}
	if got != 10 {
		t.Errorf("target %d, want 10 (CPA clamps 50 to maxReplicas)", got)
	}
	in, _ := os.ReadFile(filepath.Join(dir, "metric.in"))
	env, _ := os.ReadFile(filepath.Join(dir, "metric.env"))
	ev, _ := os.ReadFile(filepath.Join(dir, "evaluate.in"))
	for what, checks := range map[string][]string{
		string(in):  {`"runType":"scaler"`, `"name":"llm-00000"`, `"phase":"Pending"`},
		string(env): {"INFERSCALE_NOW=2026-01-05T00:01:00Z", "queueTarget=4", "stateFile=", "gpuSource=dcgm-exporter"},
		string(ev):  {`"metrics":[{"resource":"llm-00000","value":"{\"v\":1}\n"}]`, `"replicas":2`, `"runType":"scaler"`},
	} {
		for _, c := range checks {
			if !strings.Contains(what, c) {
				t.Errorf("missing %q in:\n%s", c, what)
			}
		}
	}
	if strings.Contains(string(in), `"kind"`) {
		t.Error("the pod handed to metric carries kind/apiVersion; CPA's list items have none")
	}
	if _, err := NewFaithful(FaithfulOptions{BinDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("missing binaries: %v", err)
	}
}
