package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/settings"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// discardStdio sends the commands' stdout and stderr (tables, flag usage)
// to /dev/null until the test ends.
func discardStdio(t *testing.T) {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = null, null
	t.Cleanup(func() { os.Stdout, os.Stderr = stdout, stderr; null.Close() })
}

func TestCommandsRejectBadInput(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		nil,
		{"nosuch"},
		{"run", "-nosuchflag"},
		{"run", "-quiet", "-mode", "slow", "-duration", "1m"},
		{"run", "-quiet", "-policies", "nosuch", "-duration", "1m", "-oracle=false"},
		{"run", "-quiet", "-target", "2", "-duration", "1m"},
		{"run", "-quiet", "-gpu-speed", "0", "-duration", "1m"},
		{"run", "-quiet", "-engine", "nosuch", "-duration", "1m"},
		{"bar", "-engine", "nosuch", "-shared", "."},
		{"sweep", "-gpu-speed", "-2", "-values", "60"},
		{"tune", "-gpu-speed", "NaN", "-policy", "kpa"},
		{"sweep", "-mode", "slow", "-values", "60"},
		{"tune", "-mode", "slow", "-policy", "kpa"},
		{"run", "-quiet", "-trace", filepath.Join(t.TempDir(), "missing.csv")},
		{"sweep", "-sweep", "nosuch"},
		{"sweep", "-values", "a,b"},
		{"sweep", "-sweep", "burst", "-trace", "x.csv"},
		{"tune", "-policy", "nosuch"},
		{"tune", "-policy", "kpa", "-params", "nosuch"},
		{"bar", "-j", "0", "-shared", "."},
		{"bar", "-speeds", "1,x", "-shared", "."},
		{"bar", "-seeds", "one", "-shared", "."},
		{"bar", "-policy", ":", "-shared", "."},
		{"bar", "-mode", "slow", "-shared", "."},
		{"bar", "-shared", filepath.Join(t.TempDir(), "missing")},
		{"bar", "-only", "nosuch", "-shared", "."},
		{"trace", "-windows", "x"},
	} {
		if err := dispatch(ctx, args, quietLog()); err == nil {
			t.Errorf("simulate %v: accepted", args)
		}
	}
}

func TestPoliciesListsTunablesAndHelpIsNotAnError(t *testing.T) {
	var b strings.Builder
	if err := cmdPolicies(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"inferscale", "forecastMiss", "scaleDownHold", "hpa-queue", "kpa", "oracle"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("policies output lacks %q", want)
		}
	}
	discardStdio(t)
	// Every command's -h prints its flags and succeeds; none may panic on
	// the setup it never built.
	for _, cmd := range []string{"run", "sweep", "tune", "demo", "bar", "bar-diff", "decisions", "history", "profile", "pd", "trace"} {
		if err := dispatch(context.Background(), []string{cmd, "-h"}, quietLog()); err != nil {
			t.Errorf("%s -h: %v", cmd, err)
		}
	}
}

func TestRunWritesTableAndPicture(t *testing.T) {
	png := filepath.Join(t.TempDir(), "out.png")
	discardStdio(t)
	if err := dispatch(context.Background(), []string{"run", "-quiet", "-duration", "5m", "-policies", "inferscale;static:replicas=4", "-png", png}, quietLog()); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Fatalf("picture: %v", err)
	}
}

// A bad policy list fails before any work: the trace (missing here) is
// never opened and no oracle is searched.
func TestBadPoliciesFailBeforeTheTraceIsRead(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.csv")
	for _, args := range [][]string{
		{"run", "-quiet", "-trace", missing, "-policies", "inferscale;bogus"},
		{"sweep", "-trace", missing, "-policies", "inferscale;hpa-queue:target=abc", "-values", "60"},
	} {
		err := dispatch(context.Background(), args, quietLog())
		if err == nil || !strings.Contains(err.Error(), "-policies") || strings.Contains(err.Error(), "missing.csv") {
			t.Errorf("simulate %v: %v, want a -policies error before the trace is read", args, err)
		}
	}
}

// tune tunes inferscale by default and writes a policyFile that
// evaluate's own settings decoder accepts.
func TestTuneWritesAPolicyFileEvaluateReads(t *testing.T) {
	out := filepath.Join(t.TempDir(), "policy.yaml")
	if err := dispatch(context.Background(), []string{"tune", "-quiet", "-duration", "2m", "-grid", "2", "-passes", "1", "-out", out}, quietLog()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "tuned by `simulate tune`") || !strings.Contains(string(b), "scaleDownHold:") {
		t.Fatalf("policy file:\n%s", b)
	}
	src, err := settings.Load(func(k string) (string, bool) {
		if k == settings.KeyPolicyFile {
			return out, true
		}
		return "", false
	})
	if err == nil {
		_, err = knobs.Read(src)
	}
	if err != nil {
		t.Fatalf("evaluate refuses the tuned policy file: %v\n%s", err, b)
	}
}
