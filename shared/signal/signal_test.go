package signal

import (
	"math"
	"strings"
	"testing"
	"time"
)

func validReport() *Report {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	return &Report{
		Version:    Version,
		ScrapeTime: now,
		Pods: []Pod{{
			Name: "vllm-0", Phase: "Running", Ready: true, ScrapeTime: now, Server: "vllm",
			Waiting: F(3), Running: F(12), KVCacheUsage: F(0.42),
			GPU:  &GPU{Utilization: F(0.9), Field: "DCGM_FI_DEV_GPU_UTIL", Source: "dcgm-exporter", Count: 1},
			TTFT: &Histogram{Buckets: []Bucket{{0.1, 5}, {0.5, 9}, {1, 10}}, Sum: 3.2, Count: 11},
		}},
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	r := validReport()
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "\n") || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("want one compact line, got %q", b)
	}
	got, err := Decode(string(b))
	if err != nil {
		t.Fatal(err)
	}
	p := got.Pods[0]
	if *p.Waiting != 3 || *p.KVCacheUsage != 0.42 || p.TTFT.Count != 11 || p.TTFT.Buckets[1].UpperBound != 0.5 || p.GPU.Count != 1 {
		t.Fatalf("round trip changed values: %+v", p)
	}
	if p.Running == nil || p.RequestsTotal != nil {
		t.Fatal("nil must stay nil and set values stay set")
	}
}

func TestDecodeRejectsBadReports(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not json", `{"v":1,`, "not valid JSON"},
		{"no version", `{"pods":[{"name":"a"}]}`, "no version"},
		{"future version", `{"v":2,"pods":[{"name":"a"}]}`, "version 2 is not supported"},
		{"wrong type", `{"v":1,"pods":[{"name":"a","waiting":"3"}]}`, "pods.waiting of type float64"},
		{"empty", `{"v":1}`, "neither pods nor fleet"},
		{"unnamed pod", `{"v":1,"pods":[{"ready":true}]}`, "missing name"},
		{"negative queue", `{"v":1,"pods":[{"name":"a","waiting":-1}]}`, "negative"},
		{"kv above 1", `{"v":1,"pods":[{"name":"a","kvCacheUsage":1.5}]}`, "above 1"},
		{"gpu percent not fraction", `{"v":1,"pods":[{"name":"a","gpu":{"utilization":85}}]}`, "above 1"},
		{"non cumulative", `{"v":1,"pods":[{"name":"a","ttft":{"b":[{"le":1,"c":5},{"le":2,"c":4}],"sum":1,"count":5}}]}`, "not cumulative"},
		{"bounds not increasing", `{"v":1,"pods":[{"name":"a","ttft":{"b":[{"le":2,"c":1},{"le":1,"c":4}],"sum":1,"count":5}}]}`, "not increasing"},
		{"count below bucket", `{"v":1,"pods":[{"name":"a","e2e":{"b":[{"le":1,"c":5}],"sum":1,"count":4}}]}`, "below the last bucket"},
		{"trailing", `{"v":1,"pods":[{"name":"a"}]} {"v":1}`, "after top-level value"},
		{"fleet negative", `{"v":1,"fleet":{"source":"prometheus","waiting":-2}}`, "negative"},
		{"fleet bad quantile", `{"v":1,"fleet":{"source":"prometheus","ttftQuantiles":{"0.95":-1}}}`, "negative"},
		{"fleet bad inter-token quantile", `{"v":1,"fleet":{"source":"prometheus","itlQuantiles":{"0.95":-1}}}`, "negative"},
		{"peer unnamed", `{"v":1,"fleet":{"source":"direct"},"peer":{"replicas":2}}`, "peer has no name"},
		{"peer neither", `{"v":1,"fleet":{"source":"direct"},"peer":{"name":"llm-prefill"}}`, "neither replicas nor an error"},
		{"peer negative", `{"v":1,"fleet":{"source":"direct"},"peer":{"name":"llm-prefill","replicas":-1}}`, "outside [0, 1000000]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestAPeerRoundTrips(t *testing.T) {
	r := validReport()
	two := 2
	r.Peer = &Peer{Name: "llm-prefill", Replicas: &two}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(string(b))
	if err != nil || got.Peer == nil || got.Peer.Name != "llm-prefill" || got.Peer.Replicas == nil || *got.Peer.Replicas != 2 {
		t.Fatalf("peer %+v, %v; want llm-prefill at 2", got.Peer, err)
	}
	r.Peer = &Peer{Name: "llm-prefill", Error: "forbidden"}
	if _, err := r.Encode(); err != nil {
		t.Errorf("an unread peer is a valid report: %v", err)
	}
}

func TestEncodeRejectsNonFinite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		r := validReport()
		r.Pods[0].Waiting = F(v)
		if _, err := r.Encode(); err == nil {
			t.Errorf("Encode accepted waiting=%v", v)
		}
	}
}

func TestDecodeAcceptsTrailingNewlineAndErrorPods(t *testing.T) {
	r, err := Decode(`{"v":1,"scrapeTime":"2026-11-01T12:00:00Z","pods":[{"name":"a","ready":false,"phase":"Running","scrapeTime":"2026-11-01T12:00:00Z","error":"connection refused"}]}` + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if r.Pods[0].Error != "connection refused" || r.Pods[0].Waiting != nil {
		t.Fatalf("got %+v", r.Pods[0])
	}
}

func FuzzDecode(f *testing.F) {
	b, _ := validReport().Encode()
	f.Add(string(b))
	f.Add(`{"v":1,"fleet":{"source":"prometheus","waiting":3,"ttftQuantiles":{"0.95":1.5}}}`)
	f.Add(`{"v":1,"pods":[{"name":"a","ttft":{"b":[{"le":1,"c":1}],"sum":1,"count":1}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Decode(s)
		if err != nil {
			return
		}
		// Whatever is accepted must encode again and stay valid.
		out, err := r.Encode()
		if err != nil {
			t.Fatalf("accepted report does not re-encode: %v", err)
		}
		if _, err := Decode(string(out)); err != nil {
			t.Fatalf("re-encoded report rejected: %v", err)
		}
	})
}
