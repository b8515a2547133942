package engine

import (
	"strings"
	"testing"
)

func TestNamedEnginesAreTheModelsTheySay(t *testing.T) {
	vllm, err := Named(DefaultEngine)
	if err != nil || vllm != Llama31_8B_H100() {
		t.Fatalf("%s: %+v, %v; want Llama31_8B_H100", DefaultEngine, vllm, err)
	}
	lin, err := Named("linear")
	if err != nil || lin.PerAttnPair != 0 {
		t.Fatalf("linear: %+v, %v; want no attention term", lin, err)
	}
	lin.PerAttnPair, lin.Name = vllm.PerAttnPair, vllm.Name
	if lin != vllm {
		t.Errorf("linear differs from %s beyond its attention term: %+v", DefaultEngine, lin)
	}
	blis, err := Named("blis")
	if err != nil {
		t.Fatal(err)
	}
	// BLIS's beta coefficients for Llama-3.1-8B on one H100 (µs): 5752.7
	// per step, 17.251 per prefill token, 5.999 per decoding sequence.
	if blis.IterBase != 5752.7e-6 || blis.PerPrefillToken != 17.251e-6 || blis.PerDecodeSeq != 5.999e-6 ||
		blis.PerAttnPair != 0 || blis.PerKVToken != 0 || blis.KVCapacity != 29205*16 {
		t.Errorf("blis: %+v", blis)
	}
	for _, name := range EngineNames() {
		m, err := Named(name)
		if err != nil {
			t.Errorf("%s listed but not known: %v", name, err)
		} else if err := m.Validate(); err != nil {
			t.Errorf("%s does not run: %v", name, err)
		}
	}
	if _, err := Named("nosuch"); err == nil || !strings.Contains(err.Error(), "vllm, linear, blis") {
		t.Errorf("an unknown engine: %v, want an error listing the known ones", err)
	}
}

// The engines put the work where their coefficients say: on BLIS's a
// decoding batch of 256 steps ten times as fast as on the calibrated
// engine, and a 53k-token prompt prefills in less than half the time
// without the attention term.
func TestEnginesDifferWhereTheyShould(t *testing.T) {
	vllm, lin, blis := Llama31_8B_H100(), LinearPrefill(), BLISLlama31_8B_H100()
	step := func(m Model, batch float64) float64 { return m.IterBase + m.PerDecodeSeq*batch }
	if r := step(vllm, 256) / step(blis, 256); r < 9 {
		t.Errorf("a batch of 256: %.1f × as long on %s as on %s, want ≥ 9", r, vllm.Name, blis.Name)
	}
	prefill := func(m Model, n float64) float64 { return m.PerPrefillToken*n + m.PerAttnPair*n*n/2 }
	if r := prefill(vllm, 53000) / prefill(lin, 53000); r < 2 {
		t.Errorf("a 53k prompt: %.2f × as long with attention, want ≥ 2", r)
	}
}
