package state

import "fmt"

// Target is the scale target a state was written for: the Kubernetes
// object (kind, namespace, name and UID) whose pods and replicas the
// state's memory describes. A state is only ever used for its own target:
// the marks, counters and cooldowns of one Deployment are wrong for
// another (issue 15, N12).
type Target struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// String is kind namespace/name (uid).
func (t Target) String() string {
	s := fmt.Sprintf("%s %s/%s", t.Kind, t.Namespace, t.Name)
	if t.UID != "" {
		s += " (uid " + t.UID + ")"
	}
	return s
}

// maxTargetField bounds each field of a kept Target (Kubernetes names are
// at most 253 bytes, UIDs 36).
const maxTargetField = 253

func (t Target) valid() bool {
	return len(t.Kind) <= maxTargetField && len(t.Namespace) <= maxTargetField &&
		len(t.Name) <= maxTargetField && len(t.UID) <= maxTargetField
}

// Ownership is how a loaded state relates to the target of this tick.
type Ownership int

const (
	// Own: the state was written for this target, or for none (a state
	// from before targets were kept, or a fresh one): use it.
	Own Ownership = iota
	// Replaced: written for an object of the same kind, namespace and name
	// but another UID, which was deleted and created again: the old one's
	// memory is discarded and this target takes the store over.
	Replaced
	// Foreign: written for another object: discarded, and never saved
	// over (it stays the other autoscaler's).
	Foreign
)

// OwnedBy says whether s may be used for target t (see Ownership).
func (s *State) OwnedBy(t Target) Ownership {
	o := s.Target
	switch {
	case o == nil || *o == t:
		return Own
	case o.Kind != t.Kind || o.Namespace != t.Namespace || o.Name != t.Name:
		return Foreign
	case o.UID == "" || t.UID == "":
		return Own // the same object as far as either side can tell
	default:
		return Replaced
	}
}
