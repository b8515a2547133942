package policy_test

import (
	"strings"
	"testing"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// The ratio guard raises a pool to RatioMin per replica its peer asks
// for, and only raises: an unread peer sets no floor and says why.
func TestTheRatioGuardRaisesAPoolToItsPeer(t *testing.T) {
	asks := func(n int) *signal.Peer { return &signal.Peer{Name: "llm-prefill", Replicas: &n} }
	for _, c := range []struct {
		name     string
		ratioMin float64
		peer     *signal.Peer
		current  int
		want     int
		reason   string
	}{
		{"off", 0, asks(5), 2, 2, ""},
		{"two per peer replica", 2, asks(3), 2, 6, "ratio guard: 2 per replica of llm-prefill (3 asked for) is 6"},
		{"rounded up", 0.5, asks(3), 1, 2, "is 2, which raises the target from 1"},
		{"under the target: no change", 0.5, asks(3), 4, 4, ""},
		{"capped by maxReplicas", 4, asks(5), 2, 10, "is 20"},
		{"a peer at zero", 2, asks(0), 2, 2, ""},
		// docs/roles.md's worked example: 0.16 per prefill pod.
		{"roles.md: 6 prefill pods", 0.16, asks(6), 1, 1, ""},
		{"roles.md: 7 prefill pods", 0.16, asks(7), 1, 2, "is 2"},
		{"roles.md: 12 prefill pods", 0.16, asks(12), 1, 2, "is 2"},
		{"roles.md: 13 prefill pods", 0.16, asks(13), 1, 3, "is 3"},
		{"unread", 2, &signal.Peer{Name: "llm-prefill", Error: "HTTP 403: forbidden"}, 2, 2, "the other pool llm-prefill is unread (HTTP 403: forbidden)"},
		{"not read at all", 2, nil, 2, 2, "metric read no other pool (set ratioPeer"},
	} {
		cfg := knobs.Defaults()
		cfg.RatioMin = c.ratioMin
		v := fleet.View{Ready: c.current, ArrivalRate: p(1), StartupSeconds: 60, Peer: c.peer}
		d := policy.Decide(v, state.New(), cfg, c.current, t0)
		if d.Target != c.want {
			t.Errorf("%s: target %d, want %d; reasons %q", c.name, d.Target, c.want, d.Reasons)
		}
		if c.reason != "" && !hasReason(d, c.reason) {
			t.Errorf("%s: no reason %q in %q", c.name, c.reason, d.Reasons)
		}
		if c.reason == "" && hasReason(d, "ratio guard") {
			t.Errorf("%s: the guard spoke without cause: %q", c.name, d.Reasons)
		}
		if c.want > c.current && c.want < cfg.MaxReplicas && d.DecidedBy != policy.StepRatioFloor {
			t.Errorf("%s: decided by %q, want the ratio floor", c.name, d.DecidedBy)
		}
	}
}

// The guard never lowers: a pool its own plan holds above the ratio keeps
// that, and an unread peer does not let it down.
func TestTheRatioGuardNeverLowersTheTarget(t *testing.T) {
	cfg := knobs.Defaults()
	cfg.RatioMin = 0.25
	one := 1
	v := fleet.View{Ready: 8, ArrivalRate: p(1), StartupSeconds: 60, Peer: &signal.Peer{Name: "llm-decode", Replicas: &one}}
	if d := policy.Decide(v, state.New(), cfg, 8, t0); d.Target != 8 || d.RatioFloor != 1 {
		t.Errorf("target %d (ratio floor %d), want 8 held over a floor of 1; reasons %q", d.Target, d.RatioFloor, d.Reasons)
	}
	for _, r := range policy.Decide(v, state.New(), cfg, 8, t0).Reasons {
		if strings.Contains(r, "ratio guard:") {
			t.Errorf("a floor under the target is no reason: %q", r)
		}
	}
}
