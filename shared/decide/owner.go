package decide

import (
	"fmt"

	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/state"
)

// targetOf is the state key of the scale target CPA passed (nil when the
// object lacks its kind, namespace or name: no check, no key).
func targetOf(resource []byte) *state.Target {
	ref, err := kube.ObjectRefFromTarget(resource)
	if err != nil {
		return nil
	}
	return &state.Target{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID}
}

// claim checks that the loaded state was written for this tick's target
// (issue 15, N12: two autoscalers sharing one stateConfigMap). A state of
// another object is replaced by a fresh one, which never scales down and
// marks nobody; save is false then, so the other autoscaler's state is not
// overwritten. A state of an object deleted and created again under the
// same name (another UID) is discarded and taken over. warn says why a
// state was discarded ("" when it was not).
func claim(s *state.State, target *state.Target) (use *state.State, warn string, save bool) {
	if target == nil {
		return s, "", true
	}
	switch s.OwnedBy(*target) {
	case state.Foreign:
		return state.New(), fmt.Sprintf("the stored state belongs to %s, not to %s: it was not used and is left as it is "+
			"(give each autoscaler a stateConfigMap of its own); deciding from a fresh state", s.Target, target), false
	case state.Replaced:
		return state.New(), fmt.Sprintf("the stored state belongs to %s, which was replaced by %s: starting fresh", s.Target, target), true
	}
	return s, "", true
}
