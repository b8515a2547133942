package engine

import (
	"math"
	"slices"

	"github.com/inferscale/inferscale/sim/scaler"
)

// deleteFirst reports whether a ReplicaSet scaling down deletes pod a
// before pod b: Kubernetes' ActivePodsWithRanks.Less
// (pkg/controller/controller_utils.go, with PodDeletionCost and
// LogarithmicScaleDown on, their defaults since 1.22), rule by rule, the
// first rule that tells the two apart deciding:
//
//  1. unassigned (no node) before assigned;
//  2. phase Pending before Unknown before Running;
//  3. not Ready before Ready;
//  4. lower pod-deletion-cost first;
//  5. more co-located pods of related ReplicaSets first;
//  6. both Ready: more recently Ready first, times compared by
//     floor(log2(age in ns)), equal buckets by UID;
//  7. more container restarts first;
//  8. newer first, by the same bucketing of the creation time, equal
//     buckets by UID.
//
// In the simulator a pod is Pending exactly while it has no node, so rules
// 1 and 2 agree; every pod has a node of its own, so rule 5 never decides;
// containers never restart, so rule 7 never decides. The pods' UIDs are
// scaler.PodUID (unordered, like the API server's random ones). now is
// the simulated time.
func deleteFirst(a, b *replica, now float64) bool {
	if aa, ba := a.assigned(), b.assigned(); aa != ba {
		return !aa // rules 1 and 2
	}
	if ar, br := a.phase == scaler.Ready, b.phase == scaler.Ready; ar != br {
		return !ar // rule 3
	}
	if a.deletionCost != b.deletionCost {
		return a.deletionCost < b.deletionCost // rule 4
	}
	if a.phase == scaler.Ready && b.phase == scaler.Ready && a.readyAt != b.readyAt { // rule 6
		if d := logRankDiff(a.readyAt, b.readyAt, now); d != 0 {
			return d < 0
		}
		return a.uid < b.uid
	}
	if a.created != b.created { // rule 8
		if d := logRankDiff(a.created, b.created, now); d != 0 {
			return d < 0
		}
		return a.uid < b.uid
	}
	return false
}

// assigned reports whether the pod has a node (it is past Pending).
func (r *replica) assigned() bool { return r.phase != scaler.Pending }

// logRankDiff is Kubernetes' logarithmicRankDiff: the difference of
// floor(log2(now - t)) for two times, the age in nanoseconds (-1 for a
// time not in the past). Negative means t1 is the more recent.
func logRankDiff(t1, t2, now float64) int64 {
	rank := func(t float64) int64 {
		d := (now - t) * 1e9
		if d < 1 {
			return -1
		}
		return int64(math.Log2(d))
	}
	return rank(t1) - rank(t2)
}

// victims returns the n pods of cands a ReplicaSet deletes first.
func victims(cands []*replica, n int, now float64) []*replica {
	sorted := slices.Clone(cands)
	slices.SortStableFunc(sorted, func(a, b *replica) int {
		switch {
		case deleteFirst(a, b, now):
			return -1
		case deleteFirst(b, a, now):
			return 1
		}
		return a.idx - b.idx
	})
	return sorted[:min(n, len(sorted))]
}
