package baseline

import (
	"testing"

	"github.com/inferscale/inferscale/sim/scaler"
)

// BenchmarkRecommend measures one control-loop tick of each preset on a
// 32-pod fleet with histograms, the per-tick cost the simulator pays.
func BenchmarkRecommend(b *testing.B) {
	for _, name := range PresetNames() {
		b.Run(name, func(b *testing.B) {
			a, err := Presets()[name](nil)
			if err != nil {
				b.Fatal(err)
			}
			var pods []podSpec
			for range 32 {
				pods = append(pods, podSpec{phase: scaler.Ready, waiting: f(4), run: f(30), kv: f(0.6), util: f(0.7),
					ttft: hist(10, 20, 30, 40, 50, 50), e2e: hist(0, 0, 10, 20, 50, 50)})
			}
			o := obsOf(t0, 32, 1, 64, pods...)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				o.Now = at(float64(i) * a.Period().Seconds())
				if _, err := a.Recommend(o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
