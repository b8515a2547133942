package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
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

func TestPDWritesEachPoolsDecisionLog(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	err := cmdPD(context.Background(), []string{"-quiet", "-duration", "5m", "-oracle=false", "-decision-logs", dir,
		"-prefill-policies", "inferscale:role=prefill;static:replicas=2", "-decode-policies", "inferscale:role=decode"}, &b, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// Two prefill replays (one of them static: no log), each followed by
	// the decode pool's replay behind it.
	want := []string{
		"decode-inferscale_itlSLO=0.05s_role=decode-after-inferscale_role=prefill.log",
		"decode-inferscale_itlSLO=0.05s_role=decode-after-static_replicas=2.log",
		"prefill-inferscale_role=prefill.log",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("decision logs %q, want %q", names, want)
	}
	for _, name := range names {
		lines, errs, malformed, err := readDecisions(filepath.Join(dir, name))
		if err != nil || malformed > 0 {
			t.Fatalf("%s: %v, %d malformed: %v", name, err, malformed, errs)
		}
		// A 5 min replay at the 15 s tick.
		if len(lines) < 18 || len(lines) > 20 {
			t.Errorf("%s: %d decisions, want one a tick of 5 min", name, len(lines))
		}
		role := "prefill"
		if strings.HasPrefix(name, "decode") {
			role = "decode"
		}
		if got := lines[0].Role; got != role {
			t.Errorf("%s: role %q, want %q", name, got, role)
		}
	}
	var out strings.Builder
	if err := cmdDecisions([]string{"-log", filepath.Join(dir, want[2])}, &out, quietLog()); err != nil || !strings.Contains(out.String(), "decisions:") {
		t.Errorf("simulate decisions on the prefill log: %v\n%s", err, out.String())
	}
}

func TestRunWritesADecisionLogPerInferscalePolicy(t *testing.T) {
	discardStdio(t)
	// run writes one file a policy, inferscale's only.
	dir := filepath.Join(t.TempDir(), "new")
	if err := dispatch(context.Background(), []string{"run", "-quiet", "-duration", "2m", "-oracle=false", "-policies", "inferscale;hpa-queue;inferscale:minHeadroom=1", "-decision-logs", dir}, quietLog()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"inferscale.log", "inferscale_minHeadroom=1.log"} {
		if lines, _, malformed, err := readDecisions(filepath.Join(dir, name)); err != nil || malformed > 0 || len(lines) < 7 {
			t.Errorf("run's %s: %d decisions, %d malformed, %v", name, len(lines), malformed, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("run wrote %d decision logs, want 2 (the baseline has none)", len(entries))
	}
	// A path that cannot be a directory.
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := dispatch(context.Background(), []string{"run", "-quiet", "-duration", "1m", "-oracle=false", "-decision-logs", filepath.Join(file, "sub")}, quietLog())
	if err == nil || !strings.Contains(err.Error(), "-decision-logs") {
		t.Errorf("-decision-logs under a file: %v, want an error naming the flag", err)
	}
}

// TestFaithfulModeLogsWhatEvaluateWrote: in faithful mode the decision log
// is the lines bin/evaluate wrote on stderr, one a tick.
func TestFaithfulModeLogsWhatEvaluateWrote(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the metric and evaluate binaries")
	}
	bin := testenv.BuildBinaries(t)
	discardStdio(t)
	dir := t.TempDir()
	if err := dispatch(context.Background(), []string{"run", "-quiet", "-duration", "2m", "-oracle=false", "-mode", "faithful", "-bin", bin,
		"-policies", "inferscale", "-decision-logs", dir}, quietLog()); err != nil {
		t.Fatal(err)
	}
	lines, _, malformed, err := readDecisions(filepath.Join(dir, "inferscale.log"))
	if err != nil || malformed > 0 || len(lines) < 7 || len(lines) > 9 {
		t.Fatalf("faithful decision log: %d decisions (want one a tick of 2 min), %d malformed, %v", len(lines), malformed, err)
	}
	if lines[0].Build == "" {
		t.Errorf("the first line carries no build: not the one evaluate wrote? %+v", lines[0])
	}
}
