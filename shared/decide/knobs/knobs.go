// Package knobs declares the knobs of the evaluate stage, which the
// exporter reads too: the policy (policy.Config carries its tags itself),
// the state store and what evaluate does in the cluster; it parses the
// policy's own types (the service model's prior, schedule floors) and
// checks what spans several keys. Package settings decodes them.
package knobs

import (
	"errors"
	"fmt"
	"slices"

	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/settings"
)

// Evaluate is everything the evaluate stage reads.
type Evaluate struct {
	Policy  policy.Config
	Store   Store
	Cluster Cluster
}

// Cluster says what evaluate does in the cluster besides answering CPA.
type Cluster struct {
	Mode   string `setting:"mode" default:"active" enum:"active,advisory" doc:"active: CPA gets the target; advisory: evaluate decides, logs and remembers as usual but returns the current replica count (run it beside an HPA or KEDA to see what it would do)"`
	Events bool   `setting:"events" default:"true" doc:"record Kubernetes Events on the scale target when the target changes and on alerts (needs create, patch and get on events); an API failure never fails the tick"`
}

// Store says where evaluate keeps its state between ticks.
type Store struct {
	Backend   string `setting:"stateBackend" default:"file" enum:"file,configmap,none" doc:"where the state lives between ticks: a file in the CPA pod, a ConfigMap (survives the pod), or none (every tick starts fresh: no scale-down, no cooldown)"`
	File      string `setting:"stateFile" default:"/tmp/inferscale-state.json" doc:"the state file (file backend); also the lock that queues evaluate processes of one pod (configmap backend)"`
	ConfigMap string `setting:"stateConfigMap" default:"inferscale-state" doc:"the state ConfigMap's name (configmap backend); it holds the state of one scale target: a tick for another target does not use it nor write over it (StateReset warning), so give each CPA of a namespace a name of its own"`
	Namespace string `setting:"namespace" doc:"the state ConfigMap's namespace (default: the CPA pod's own)"`
}

// Validate checks the policy across its keys and derives what follows
// from it.
func (e *Evaluate) Validate() error {
	p := &e.Policy
	var errs []error
	if p.MinReplicas > p.MaxReplicas {
		errs = append(errs, fmt.Errorf("config key minReplicas: minReplicas %d is above maxReplicas %d", p.MinReplicas, p.MaxReplicas))
	}
	if p.KVTarget > p.KVHigh {
		errs = append(errs, fmt.Errorf("config key kvTarget: kvTarget %g is above kvHigh %g", p.KVTarget, p.KVHigh))
	}
	if p.KVLowWater > p.KVTarget {
		errs = append(errs, fmt.Errorf("config key kvLowWater: kvLowWater %g is above kvTarget %g", p.KVLowWater, p.KVTarget))
	}
	switch {
	case p.Role == "decode" && p.ITLSLO <= 0:
		errs = append(errs, errors.New("config key itlSLO: role decode is judged by its streaming speed: set an inter-token objective (itlSLO, e.g. 50ms)"))
	case p.Role == "prefill" && p.ITLSLO > 0:
		errs = append(errs, fmt.Errorf("config key itlSLO: itlSLO %s on role prefill, which streams no tokens: set it on the decode pool's CR", p.ITLSLO))
	}
	// End-to-end histograms double the state; they are kept only for an e2e SLO.
	p.TrackE2E = p.E2ESLO > 0
	p.TrackITL = p.ITLSLO > 0
	return errors.Join(errs...)
}

// ParseKnob reads the knobs of policy.Config's own types: the service
// model's prior and the schedule floors (settings.TypeParser).
func (e *Evaluate) ParseKnob(dst any, raw string) (bool, error) {
	switch p := dst.(type) {
	case **model.Params:
		prof, err := ParseProfile(raw)
		if err != nil {
			return true, err
		}
		*p = &prof
	case *[]policy.ScheduleFloor:
		floors, err := ParseScheduleFloors(raw)
		if err != nil {
			return true, err
		}
		*p = floors
	default:
		return false, nil
	}
	return true, nil
}

// Read reads the evaluate stage's knobs.
func Read(s *settings.Source) (Evaluate, error) {
	var e Evaluate
	err := settings.Decode(s, &e)
	return e, err
}

// Policy reads the policy from fixed values (the simulator, tests): the
// same keys and checks as evaluate, no files, and every key must be a
// knob.
func Policy(m map[string]string) (policy.Config, error) {
	var errs []error
	for k := range m {
		if !slices.Contains(settings.Keys(), k) {
			errs = append(errs, fmt.Errorf("config key %s: no such knob", k))
		}
	}
	e, err := Read(settings.FromMap(m))
	return e.Policy, errors.Join(append(errs, err)...)
}

// Defaults is the policy with every knob at its default.
func Defaults() policy.Config {
	c, err := Policy(nil)
	if err != nil {
		panic("knobs: the defaults do not decode: " + err.Error())
	}
	return c
}
