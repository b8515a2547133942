package main

import (
	"strconv"
	"strings"
	"testing"
)

// `simulate trace` prints the trace's summary and a row per window: the
// demo's first ten minutes, near Poisson at a second (its generator draws
// Poisson arrivals) and far above it at a minute (its rate ramps).
func TestTracePrintsTheDispersionAtEachWindow(t *testing.T) {
	var b strings.Builder
	if err := cmdTrace([]string{"-duration", "10m", "-windows", "1s,1m"}, &b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "trace synthetic:demo: ") || !strings.Contains(lines[1], "dispersion") {
		t.Fatalf("output %q: want the summary, a header and two rows", b.String())
	}
	z := func(line string) float64 {
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		return v
	}
	if one, minute := z(lines[2]), z(lines[3]); one < 0.8 || one > 1.3 || minute < 2 {
		t.Errorf("demo: dispersion %g at 1 s (want about 1), %g at 1 min (want well above 1)", one, minute)
	}
}

func TestTraceRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-windows", "1s,0"},
		{"-windows", "fast"},
		{"-trace", "/nonexistent.jsonl"},
		{"extra"},
	} {
		var b strings.Builder
		if err := cmdTrace(args, &b); err == nil {
			t.Errorf("trace %q: no error (printed %q)", args, b.String())
		}
	}
}
