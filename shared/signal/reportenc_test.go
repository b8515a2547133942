package signal

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestAppendReportMatchesMarshal(t *testing.T) {
	zone := time.FixedZone("x", -(3*3600 + 30*60))
	at := time.Date(2026, 11, 29, 12, 0, 0, 123456789, zone)
	odd := "a\"b\\c<d>&e\u2028f\u2029g\x01\x1f\b\f\n\r\t\xff\xfe é 日本"
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 5e-324, 1e20, 1e21, 123456789.123,
		math.MaxFloat64, 2.5e-8, 1e100, 0.30000000000000004}
	reports := []*Report{
		validReport(),
		{Version: 1, ScrapeTime: at},
		{Version: 1, ScrapeTime: at, Pods: []Pod{{}}, Fleet: &Fleet{Source: "prometheus", Waiting: F(3), TTFTQuantiles: map[string]float64{"0.95": 1.5, "0.5": 0.2}}},
		{Version: 7, ScrapeTime: at, Pods: []Pod{{Name: odd, Namespace: odd, Node: "n", Phase: "Running", Ready: true, Terminating: true,
			CreatedAt: &at, StartedAt: &at, ReadyAt: &at, StartupSeconds: F(70), AgeSeconds: F(1e-9), ScrapeTime: at, Server: "vllm",
			Error: odd, Waiting: F(0), Running: F(1e21), KVCacheUsage: F(0.5), GPU: &GPU{},
			TTFT: &Histogram{}, E2E: &Histogram{Buckets: []Bucket{}}, QueueTime: &Histogram{Buckets: []Bucket{{0.1, 1}, {1e-7, 2}}, Sum: 1e-8, Count: 3},
			InterToken: nil, RequestsTotal: F(10), PromptTokensTotal: F(1e25), GenerationTokensTotal: F(-0.0), PreemptionsTotal: F(3),
			Notes: []string{"", odd}}, {Name: "b", GPU: &GPU{Count: 2}, Notes: []string{}}, {Name: "c", GPU: &GPU{Utilization: F(0.1), SMActive: F(0.2), Field: "f", Source: "dcgm", Count: -1, Error: "e"}}}},
	}
	for _, f := range floats {
		p := Pod{Name: "f", Waiting: F(f), TTFT: &Histogram{Buckets: []Bucket{{f, f}}, Sum: f, Count: f}}
		reports = append(reports, &Report{Version: 1, ScrapeTime: at, Pods: []Pod{p}})
	}
	for i, r := range reports {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendReport(nil, r)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if string(got) != string(want) {
			t.Errorf("report %d:\ngot  %s\nwant %s", i, got, want)
		}
	}
	// A time json.Marshal cannot encode is an error here too.
	if _, err := appendReport(nil, &Report{ScrapeTime: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Error("year 10000 encoded")
	}
}

func FuzzAppendReportMatchesMarshal(f *testing.F) {
	for _, in := range reportCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, err := Parse([]byte(in))
		if err != nil {
			return
		}
		want, err := json.Marshal(r)
		if err != nil {
			return // not finite: Encode's Validate rejects it before encoding
		}
		got, err := appendReport(nil, r)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%q:\ngot  %s (%v)\nwant %s", in, got, err, want)
		}
	})
}
