package preset_test

import (
	"testing"

	"github.com/inferscale/inferscale/shared/preset"
)

// BenchmarkBuiltins is the per-process cost of loading the presets.
func BenchmarkBuiltins(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := preset.Builtins(); err != nil {
			b.Fatal(err)
		}
	}
}
