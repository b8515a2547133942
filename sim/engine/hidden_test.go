package engine

import (
	"testing"

	"github.com/inferscale/inferscale/shared/signal"
)

// TestHiddenSignalsAreNotExported: a pod of a server preset that exports
// no inter-token or length histograms shows none, and a name the engine
// does not export is a configuration error.
func TestHiddenSignalsAreNotExported(t *testing.T) {
	p := &signal.Pod{InterToken: &signal.Histogram{}, PromptLength: &signal.Histogram{}, TTFT: &signal.Histogram{}}
	hide(p, []string{"interToken", "promptLength"})
	if p.InterToken != nil || p.PromptLength != nil || p.TTFT == nil {
		t.Errorf("after hiding interToken and promptLength: %+v", p)
	}
	cfg := DefaultConfig()
	cfg.Hidden = []string{"interToken", "bogus"}
	if err := cfg.Validate(); err == nil {
		t.Error("an unknown hidden signal passed validation")
	}
}
