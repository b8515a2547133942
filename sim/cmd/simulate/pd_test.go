package main

import (
	"context"
	"strings"
	"testing"
)

func TestPDRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-transfer-per-token", "-1"}, "-transfer-per-token"},
		{[]string{"-transfer-per-token", "NaN"}, "-transfer-per-token"},
		{[]string{"-prefill-slo", "3"}, "-prefill-slo"},
		{[]string{"-tpot", "0"}, "-tpot"},
		{[]string{"-output-scale", "0"}, "-output-scale"},
		{[]string{"-decode-gpu-speed", "-1"}, "-decode-gpu-speed"},
		{[]string{"-prefill-policies", "nosuch"}, "-prefill-policies"},
		{[]string{"-decode-policies", "inferscale:role=decode,itlSLO=nosuch"}, "itlSLO"},
		{[]string{"-prefill-policies", "inferscale:role=prefill,itlSLO=50ms"}, "itlSLO"},
		{[]string{"-decode-policies", "static"}, "cheapest static pair"},
		{[]string{"-prefill-policies", "oracle"}, "-prefill-policies"},
		{[]string{"stray"}, "unexpected"},
		{[]string{"-decode-policies", "ratio"}, "want k="},
		{[]string{"-decode-policies", "ratio:k=-1"}, "want k="},
		{[]string{"-decode-policies", "ratio:k=1,x=2"}, "unknown parameter"},
		{[]string{"-prefill-policies", "ratio:k=1"}, "a decode policy"},
		{[]string{"-prefill-policies", "dynamo:interval=soon"}, "want interval=<seconds"},
		{[]string{"-decode-policies", "dynamo:interval=NaN"}, "want interval=<seconds"},
		{[]string{"-decode-policies", "dynamo:interval=5"}, "at least 15s"},
		{[]string{"-prefill-policies", "dynamo:interval=-3m"}, "at least 15s"},
		{[]string{"-decode-policies", "dynamo:correction=maybe"}, "correction=<true|false>"},
		{[]string{"-decode-policies", "dynamo:budget=8"}, `unknown parameter "budget"`},
	} {
		_, err := parsePD(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("pd %v: error %v, want one naming %q", tc.args, err, tc.want)
		}
	}
	s, err := parsePD([]string{"-tpot", "0.04", "-decode-policies", "inferscale:role=decode;inferscale:role=decode,itlSLO=30ms"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.decod[0].Params["itlSLO"] + " " + s.decod[1].Params["itlSLO"]; got != "0.04s 30ms" {
		t.Errorf("decode itlSLOs %q, want -tpot's where none is set: \"0.04s 30ms\"", got)
	}
	if err := dispatch(context.Background(), []string{"pd", "-nosuchflag"}, quietLog()); err == nil {
		t.Error("pd -nosuchflag accepted")
	}
}

func TestPDPrintsOneRowPerPair(t *testing.T) {
	var b strings.Builder
	err := cmdPD(context.Background(), []string{"-quiet", "-duration", "3m", "-oracle=false",
		"-prefill-policies", "static:replicas=2;keda-queue;dynamo:interval=1m", "-decode-policies", "static:replicas=3;ratio:k=1.5;dynamo"}, &b, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"| static:replicas=2 + static:replicas=3 |", "| keda-queue + static:replicas=3 |", "| static:replicas=2 + ratio:k=1.5 |",
		"| dynamo:interval=1m + dynamo |", "| static:replicas=2 + dynamo |", "KV transfer 5 µs/token"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
