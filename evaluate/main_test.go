package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/evalinput"
	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/state"
)

// binary is the evaluate executable built once for these tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "evaluate-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "evaluate")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building evaluate: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t testing.TB, stdin []byte, env ...string) (stdout, stderr string, rusage *syscall.Rusage, err error) {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Env = append([]string{"configPath=/nonexistent/config.yaml"}, env...)
	err = cmd.Run()
	if cmd.ProcessState != nil {
		rusage, _ = cmd.ProcessState.SysUsage().(*syscall.Rusage)
	}
	return o.String(), e.String(), rusage, err
}

func TestExampleInputGivesOneJSONObject(t *testing.T) {
	in, err := os.ReadFile("../examples/evaluate/input.json")
	if err != nil {
		t.Fatal(err)
	}
	stateFile := filepath.Join(t.TempDir(), "s.json")
	out, stderr, _, err := run(t, in, "INFERSCALE_NOW=2026-11-29T21:00:05Z", "stateFile="+stateFile)
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr)
	}
	var o cpa.EvaluateOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("stdout: %v\n%s", err, out)
	}
	// Two saturated pods (queue 5 per pod, KV 0.92) and one starting: scale up.
	if o.CurrentReplicas != 3 || o.TargetReplicas != 4 || len(o.Reasons) == 0 {
		t.Fatalf("output %+v", o)
	}
}

func TestBadInputExitsNonZeroWithOneLine(t *testing.T) {
	stateFile := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(stateFile, []byte(`{"v":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"malformed":      []byte(`{"metrics":`),
		"wrong type":     []byte(`{"metrics":null,"resource":{"spec":{"replicas":"two"}},"runType":"scaler"}`),
		"signal version": []byte(`{"metrics":[{"resource":"a","value":"{\"v\":7}"}],"resource":{"spec":{"replicas":2}},"runType":"scaler"}`),
		"bad clock":      evalinput.Synthetic(1, time.Now()),
		"oversized":      bytes.Repeat([]byte(" "), cpa.MaxInputBytes+1),
	} {
		env := []string{"stateFile=" + stateFile}
		if name == "bad clock" {
			env = append(env, "INFERSCALE_NOW=yesterday")
		}
		out, stderr, _, err := run(t, in, env...)
		if err == nil {
			t.Errorf("%s: exit 0", name)
		}
		if out != "" {
			t.Errorf("%s: stdout %q", name, out)
		}
		if lines := strings.Count(strings.TrimSpace(stderr), "\n"); lines != 0 || stderr == "" {
			t.Errorf("%s: stderr is not one line: %q", name, stderr)
		}
	}
	if b, _ := os.ReadFile(stateFile); string(b) != `{"v":1}` {
		t.Errorf("state touched: %s", b)
	}
}

// One pod's value that is present but not a valid signal report fails the
// whole run, naming that entry; an empty value is only a missing pod.
func TestBadMetricValueExitsNonZeroNamingThePod(t *testing.T) {
	stateFile := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(stateFile, []byte(`{"v":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	good := evalinput.Synthetic(3, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	const pod = `\"name\":\"vllm-001\",\"ready\":true,\"scrapeTime\":\"2026-11-29T12:00:00Z\"`
	for name, value := range map[string]string{
		"not JSON":         `{\"v\":1,`,
		"NaN":              `NaN`,
		"negative":         `{\"v\":1,\"pods\":[{` + pod + `,\"waiting\":-2}]}`,
		"wrong type":       `{\"v\":1,\"pods\":[{` + pod + `,\"running\":true}]}`,
		"fraction above 1": `{\"v\":1,\"pods\":[{` + pod + `,\"kvCacheUsage\":3}]}`,
		"unknown version":  `{\"v\":7,\"pods\":[{` + pod + `}]}`,
	} {
		in := withValue(t, good, "vllm-001", value)
		out, stderr, _, err := run(t, in, "stateFile="+stateFile, "INFERSCALE_NOW=2026-11-29T12:00:05Z")
		if err == nil {
			t.Errorf("%s: exit 0", name)
		}
		if out != "" {
			t.Errorf("%s: stdout %q", name, out)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "metrics[1]") ||
			!strings.Contains(stderr, "vllm-001") {
			t.Errorf("%s: stderr is not one line naming metrics[1] (vllm-001): %q", name, stderr)
		}
	}
	if b, _ := os.ReadFile(stateFile); string(b) != `{"v":1}` {
		t.Errorf("state touched: %s", b)
	}
	// The same input with that value left out (metric printed nothing):
	// the pod is missing and the run decides.
	in := withValue(t, good, "vllm-001", "")
	out, stderr, _, err := run(t, in, "stateFile="+stateFile, "INFERSCALE_NOW=2026-11-29T12:00:05Z")
	if err != nil || !strings.Contains(out, `"targetReplicas"`) {
		t.Fatalf("empty value: err %v stdout %q stderr %q", err, out, stderr)
	}
}

// Many evaluate processes on one state file: the flock serialises them,
// so every run's recommendation is kept and the file stays valid.
func TestConcurrentProcessesShareOneStateFile(t *testing.T) {
	stateFile := filepath.Join(t.TempDir(), "s.json")
	in := evalinput.Synthetic(4, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			now := fmt.Sprintf("INFERSCALE_NOW=2026-11-29T12:00:%02dZ", i)
			if _, stderr, _, err := run(t, in, now, "stateFile="+stateFile); err != nil {
				errs <- fmt.Errorf("run %d: %v: %s", i, err, stderr)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	b, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Decode(b)
	if err != nil {
		t.Fatalf("state corrupted: %v", err)
	}
	if len(st.Recommendations) != n {
		t.Fatalf("%d recommendations kept, want %d (a write was lost)", len(st.Recommendations), n)
	}
}

// Defect 1: 8 million '[' on stdin (under the input size limit) is one
// line on stderr and exit 1, in bounded memory; it was a Go stack
// overflow (exit 2, 830 MB).
func TestDeepNestingOnStdinExitsOneLineInBoundedMemory(t *testing.T) {
	stateFile := filepath.Join(t.TempDir(), "s.json")
	out, stderr, ru, err := run(t, bytes.Repeat([]byte("["), 8_000_000), "stateFile="+stateFile)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1; stderr %.300q", err, stderr)
	}
	if out != "" || stderr == "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || strings.Contains(stderr, "goroutine") {
		t.Fatalf("stdout %q, stderr is not one line: %.300q", out, stderr)
	}
	// The input itself is 8 MB; reading and rejecting it must stay within
	// a small multiple of that.
	if ru == nil || ru.Maxrss > 100<<10 {
		t.Fatalf("peak RSS %v KiB, want under 100 MiB", ru.Maxrss)
	}
	if _, err := os.Stat(stateFile); !os.IsNotExist(err) {
		t.Fatalf("a rejected input touched the state (%v)", err)
	}
}

// Defect 1: a state file of nested '[' (under and over the size limit)
// gives a warning and a fresh start, every tick, instead of a crash.
func TestDeeplyNestedStateFileStartsFresh(t *testing.T) {
	in, err := os.ReadFile("../examples/evaluate/input.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{100_000, 8_000_000} {
		stateFile := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(stateFile, bytes.Repeat([]byte("["), n), 0o600); err != nil {
			t.Fatal(err)
		}
		out, stderr, ru, err := run(t, in, "INFERSCALE_NOW=2026-11-29T21:00:05Z", "stateFile="+stateFile)
		if err != nil {
			t.Fatalf("%d '[': exit %v; stderr %.300q", n, err, stderr)
		}
		var o cpa.EvaluateOutput
		if err := json.Unmarshal([]byte(out), &o); err != nil || len(o.Alerts) == 0 || !strings.Contains(strings.Join(o.Alerts, " "), "state was unusable") {
			t.Fatalf("%d '[': output %q (%v), want a decision with the reset alert", n, out, err)
		}
		if ru == nil || ru.Maxrss > 100<<10 {
			t.Fatalf("%d '[': peak RSS %v KiB, want under 100 MiB", n, ru.Maxrss)
		}
		if b, err := os.ReadFile(stateFile); err != nil || !bytes.HasPrefix(b, []byte(`{"v":1`)) {
			t.Fatalf("%d '[': the fresh state was not saved: %.40q %v", n, b, err)
		}
	}
}

// withValue replaces one pod's (already JSON-escaped) metric value in a
// synthetic evaluate input.
func withValue(t *testing.T, input []byte, pod, value string) []byte {
	t.Helper()
	key := []byte(`"resource":"` + pod + `","value":"`)
	start := bytes.Index(input, key)
	if start < 0 {
		t.Fatalf("no value for %s in the input", pod)
	}
	start += len(key)
	end := start + bytes.Index(input[start:], []byte(`"}`))
	return append(append(append([]byte{}, input[:start]...), value...), input[end:]...)
}

// BenchmarkProcess64Pods execs the built binary as CPA does every 15 s, on
// a 64-pod input with a warm state file, and reports the median wall time
// and the peak RSS.
func BenchmarkProcess64Pods(b *testing.B) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	in := evalinput.Synthetic(64, at)
	stateFile := filepath.Join(b.TempDir(), "s.json")
	var times []time.Duration
	var peakKB int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now := at.Add(time.Duration(i) * 15 * time.Second).Format(time.RFC3339)
		start := time.Now()
		_, stderr, ru, err := run(b, in, "INFERSCALE_NOW="+now, "stateFile="+stateFile, "staleAfter=0")
		times = append(times, time.Since(start))
		if err != nil {
			b.Fatalf("%v: %s", err, stderr)
		}
		if ru != nil {
			peakKB = max(peakKB, ru.Maxrss)
		}
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
}

// --help and --version answer without reading stdin (CPA gives none of
// them; a person at a terminal does), a stray argument exits 2, and the
// decision-log line names the build.
func TestFlagsAnswerWithoutReadingStdin(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"--help"}, 0, "usage: evaluate < input.json"},
		{[]string{"--version"}, 0, "evaluate "},
		{[]string{"input.json"}, 2, ""},
	} {
		cmd := exec.Command(binary, tc.args...)
		r, w, err := os.Pipe() // a stdin that never ends: reading it would hang
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin = r
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("evaluate %v read stdin instead of answering", tc.args)
		}
		w.Close()
		r.Close()
		if code := cmd.ProcessState.ExitCode(); code != tc.code {
			t.Errorf("evaluate %v: exit %d, want %d (%v, stderr %q)", tc.args, code, tc.code, err, e.String())
		}
		if !strings.Contains(o.String(), tc.stdout) {
			t.Errorf("evaluate %v: stdout %q, want %q", tc.args, o.String(), tc.stdout)
		}
	}
	in, err := os.ReadFile("../examples/evaluate/input.json")
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, _, err := run(t, in, "stateFile="+filepath.Join(t.TempDir(), "s.json"), "INFERSCALE_NOW=2026-11-29T21:00:05Z")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, `"build":"`) {
		t.Errorf("the decision-log line does not name the build: %q", stderr)
	}
}
