package policy

import (
	"sort"

	"github.com/inferscale/inferscale/shared/fleet"
)

// VictimDeletionCost is the controller.kubernetes.io/pod-deletion-cost a
// victim is given, just before the scale-down that removes it (the other
// pods keep theirs, unset meaning 0): the ReplicaSet deletes lower costs
// first, after pods that are not ready.
const VictimDeletionCost = -1000

// Unmarked are the pods of marked (the last tick's victims) that this
// tick's victims do not include: their mark is to be cleared.
func Unmarked(marked, victims []string) []string {
	keep := map[string]bool{}
	for _, v := range victims {
		keep[v] = true
	}
	var out []string
	for _, m := range marked {
		if !keep[m] {
			out = append(out, m)
		}
	}
	return out
}

// victims are the k pods a scale-down should remove, in the order the
// ReplicaSet is to delete them: pods not ready first (Kubernetes deletes
// those first whatever their cost, and they serve nothing), then the
// idlest ready pods (fewest requests in flight, then the least KV cache
// in use, so the fewest generations have to drain), then by name for a
// stable order. A ready pod that did not report its load goes after those
// that did: its load is unknown, not low.
func victims(pods []fleet.PodLoad, k int) []string {
	if k <= 0 {
		return nil
	}
	ps := append([]fleet.PodLoad(nil), pods...)
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Ready != b.Ready {
			return !a.Ready
		}
		if ka, kb := a.Outstanding < 0, b.Outstanding < 0; ka != kb {
			return !ka
		}
		if a.Outstanding != b.Outstanding {
			return a.Outstanding < b.Outstanding
		}
		if a.KV != b.KV {
			return a.KV < b.KV
		}
		return a.Name < b.Name
	})
	out := make([]string, 0, min(k, len(ps)))
	for _, p := range ps[:min(k, len(ps))] {
		out = append(out, p.Name)
	}
	return out
}
