package deploy

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/inferscale/inferscale/sim/engine"
)

// longestGeneration is the longest generation the drain must let finish: vLLM's --shutdown-timeout of the example
// Deployment, 600 s (docs/simulator.md, "Drain"; sim/engine.DefaultGraceSeconds - DefaultPreStopSeconds leaves
// room for it).
const longestGeneration = 600

// drain is what a vLLM Deployment does when one of its pods is deleted.
type drain struct {
	preStop         int // seconds the preStop hook sleeps (-1: no preStop sleep)
	shutdownTimeout int // vLLM's --shutdown-timeout (0: vLLM aborts in-flight requests on SIGTERM)
	grace           int // terminationGracePeriodSeconds (Kubernetes' default 30 when unset)
}

// drainOf reads the drain settings of the Deployment's vLLM container.
func drainOf(d *appsv1.Deployment) (drain, error) {
	out := drain{preStop: -1, grace: 30}
	spec := d.Spec.Template.Spec
	if spec.TerminationGracePeriodSeconds != nil {
		out.grace = int(*spec.TerminationGracePeriodSeconds)
	}
	var c *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == "vllm" {
			c = &spec.Containers[i]
		}
	}
	if c == nil {
		return out, fmt.Errorf("no container named vllm")
	}
	if l := c.Lifecycle; l != nil && l.PreStop != nil {
		switch h := l.PreStop; {
		case h.Exec != nil && len(h.Exec.Command) == 2 && filepath.Base(h.Exec.Command[0]) == "sleep":
			n, err := strconv.Atoi(h.Exec.Command[1])
			if err != nil {
				return out, fmt.Errorf("preStop %v: %w", h.Exec.Command, err)
			}
			out.preStop = n
		case h.Sleep != nil:
			out.preStop = int(h.Sleep.Seconds)
		default:
			return out, fmt.Errorf("preStop %+v is not a sleep", h)
		}
	}
	args := append(append([]string{}, c.Command...), c.Args...)
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--shutdown-timeout=")
		if !ok && a == "--shutdown-timeout" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return out, fmt.Errorf("--shutdown-timeout %q: %w", v, err)
			}
			out.shutdownTimeout = n
		}
	}
	return out, nil
}

// problems says why a scale-down could kill a generation of up to longestGeneration seconds.
func (d drain) problems() []string {
	var out []string
	if d.preStop <= 0 {
		out = append(out, "no preStop sleep: the pod gets SIGTERM while load balancers still send it requests")
	}
	if d.shutdownTimeout < longestGeneration {
		out = append(out, fmt.Sprintf("vLLM --shutdown-timeout %d s is shorter than the longest generation (%d s): vLLM aborts what is still in flight", d.shutdownTimeout, longestGeneration))
	}
	if d.grace < max(d.preStop, 0)+d.shutdownTimeout {
		out = append(out, fmt.Sprintf("terminationGracePeriodSeconds %d < preStop %d + --shutdown-timeout %d: the kubelet kills the drain", d.grace, d.preStop, d.shutdownTimeout))
	}
	return out
}

func TestVLLMDeploymentDrainsBeforeItIsKilled(t *testing.T) {
	_, base := loadBase(t, filepath.Join(repoRoot(t), "deploy", "base"))
	d, ok := base.deploys["vllm"]
	if !ok {
		t.Fatal("no Deployment vllm in deploy/base")
	}
	got, err := drainOf(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got.problems() {
		t.Error(p)
	}
	// The simulator's drain model (what the bar matrix measures kills with) is this Deployment's.
	if got.preStop != engine.DefaultPreStopSeconds || got.grace != engine.DefaultGraceSeconds {
		t.Errorf("preStop %d s, grace %d s; the simulator's drain model assumes %d s and %d s (sim/engine)",
			got.preStop, got.grace, engine.DefaultPreStopSeconds, engine.DefaultGraceSeconds)
	}
	t.Logf("drain: preStop %d s, --shutdown-timeout %d s, terminationGracePeriodSeconds %d s", got.preStop, got.shutdownTimeout, got.grace)
}

func TestDrainCheckCatchesWhatKillsAGeneration(t *testing.T) {
	good := drain{preStop: 15, shutdownTimeout: 600, grace: 630}
	if p := good.problems(); len(p) != 0 {
		t.Fatalf("the example's settings flagged: %v", p)
	}
	for _, bad := range []drain{
		{preStop: -1, shutdownTimeout: 600, grace: 630}, // no preStop
		{preStop: 15, shutdownTimeout: 0, grace: 630},   // vLLM's default: abort on SIGTERM
		{preStop: 15, shutdownTimeout: 600, grace: 60},  // killed mid-drain
		{preStop: 15, shutdownTimeout: 60, grace: 630},  // drains less than the longest generation
	} {
		if len(bad.problems()) == 0 {
			t.Errorf("%+v passed the drain check", bad)
		}
	}
	// The reader finds both spellings of the flag and both kinds of preStop sleep.
	grace := int64(630)
	d := &appsv1.Deployment{}
	d.Spec.Template.Spec = corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{
		Name: "vllm", Args: []string{"--shutdown-timeout=600"},
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 15}}},
	}}}
	if got, err := drainOf(d); err != nil || got != good {
		t.Errorf("drainOf = %+v, %v; want %+v", got, err, good)
	}
}
