package engine

import (
	"context"
	"testing"
)

// BenchmarkReplayOneHour20k replays one hour of 20,000 Poisson requests
// (2k-token prompts, 200-token outputs) on a fixed fleet of 6 replicas.
func BenchmarkReplayOneHour20k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		src := poisson(1, 20000, 20000.0/3600, 2000, 200)
		res, err := Run(context.Background(), DefaultConfig(), src, fixed{6})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(res.TTFTAttainment(), "attain")
		}
	}
}
