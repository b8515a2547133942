package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/inferscale"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// cpaLog turns evaluate's stderr into what `kubectl logs --timestamps`
// shows of a CPA pod with logStderr: true: klog's V(0) line per tick
// holding the whole stderr dump (a decision line, now and then followed by
// a slog warning), CPA's own lines in between.
type cpaLog struct {
	w    io.Writer
	tick int
}

func (c *cpaLog) Write(p []byte) (int, error) {
	var head struct{ Time time.Time }
	if err := json.Unmarshal(p, &head); err != nil {
		return 0, err
	}
	ts := func(d time.Duration) string { return head.Time.Add(d).Format(time.RFC3339Nano) + " " }
	klog := head.Time.Add(900 * time.Millisecond).Format("I0102 15:04:05.000000")
	dump := strings.TrimSuffix(string(p), "\n")
	if c.tick%7 == 3 {
		dump += "\n" + `time=` + head.Time.Format(time.RFC3339) + ` level=WARN msg="pod scrape is stale" pod=vllm-3`
	}
	var b strings.Builder
	b.WriteString(ts(time.Second) + klog + "       1 shell.go:84] Shell command stderr: ")
	for i, l := range strings.Split(dump, "\n") {
		if i > 0 {
			b.WriteString(ts(time.Second))
		}
		b.WriteString(l + "\n")
	}
	if c.tick%5 == 0 {
		b.WriteString(ts(2*time.Second) + klog + "       1 autoscaler.go:215] Scaling target\n")
	}
	c.tick++
	_, err := io.WriteString(c.w, b.String())
	return len(p), err
}

// TestDecisionsCommandOnASimulatedPodLog replays 20 minutes of the demo
// through inferscale (fast mode) writing decision lines as the pod log shows
// them, then checks the summary against the engine's own record and that
// the picture is drawn.
func TestDecisionsCommandOnASimulatedPodLog(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.MaxReplicas = 24
	reqs, err := runner.Load(runner.Trace{Spec: "synthetic:demo", Seed: 1, Duration: 20 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cfg.InitialReplicas = 3 // small, so that it scales
	b, err := runner.Build(runner.Spec{Name: "inferscale", Params: map[string]string{}}, cfg, runner.Options{Mode: runner.Fast, CPA: inferscale.DefaultCPA()})
	if err != nil {
		t.Fatal(err)
	}
	var podLog bytes.Buffer
	logged := &inferscale.Logged{Fast: b.Policy.(*inferscale.Fast), W: &cpaLog{w: &podLog}}
	res, err := engine.Run(context.Background(), cfg, workload.FromRequests(reqs), logged)
	if err != nil || logged.Err != nil {
		t.Fatalf("replay: %v, log: %v", err, logged.Err)
	}
	podLog.WriteString("2026-01-05T00:20:01Z I0105 00:20:01.000000       1 shell.go:84] Shell command stderr: {\"inferscale\":\"decision/v1\",\"time\":\"2026-01-05T00:20:00Z\",\"mode\":\"act\n")
	dir := t.TempDir()
	logPath, pngPath := filepath.Join(dir, "vllm-autoscaler.log"), filepath.Join(dir, "decisions.png")
	if err := os.WriteFile(logPath, podLog.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := cmdDecisions([]string{"-log", logPath, "-png", pngPath, "-slo", "2"}, &out, quietLog()); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	t.Logf("summary:\n%s", s)
	if want := fmt.Sprintf("decisions: %d from ", len(res.Decisions)); !strings.Contains(s, want) {
		t.Errorf("summary lacks %q", want)
	}
	// Spec changes the next tick saw are the log's current-replica changes.
	lastTick := res.Decisions[len(res.Decisions)-1].T
	seen := 0
	for _, e := range res.ScaleEvents {
		if e.T < lastTick {
			seen++
		}
	}
	if seen < 2 {
		t.Fatalf("the replay scaled only %d times: not a test of anything", seen)
	}
	if want := fmt.Sprintf("scale events (current replicas): %d ", seen); !strings.Contains(s, want) {
		t.Errorf("summary lacks %q", want)
	}
	// The targets' GPU-hours are the engine's decisions integrated over the tick.
	want := 0.0
	for _, d := range res.Decisions {
		want += float64(d.Replicas) * 15 / 3600
	}
	m := regexp.MustCompile(`GPU-hours: targets ([0-9.]+)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatal("no GPU-hours in the summary")
	}
	if got, _ := strconv.ParseFloat(m[1], 64); math.Abs(got-want) > 0.006 {
		t.Errorf("target GPU-hours %g, engine's decisions give %.3f", got, want)
	}
	if !strings.Contains(s, "malformed decision lines skipped: 1") || !strings.Contains(s, "rules over threshold") {
		t.Errorf("summary lacks the skipped line or the rules")
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() < 1000 || img.Bounds().Dy() < 1000 {
		t.Fatalf("picture: %v %v", err, img)
	}

	// -strict refuses the malformed line.
	if err := cmdDecisions([]string{"-log", logPath, "-strict"}, io.Discard, quietLog()); err == nil || !strings.Contains(err.Error(), "1 malformed") {
		t.Errorf("-strict: %v", err)
	}
}

func TestDecisionsCommandRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.log", "")
	other := write("other.log", "I0105 00:00:01.0 1 main.go:1] Starting\n{\"targetReplicas\":3}\n")
	noSLO := write("noslo.log", `{"inferscale":"decision/v1","time":"2026-01-05T00:00:00Z","mode":"active","current":1,"target":1}`+"\n")
	for _, args := range [][]string{
		{},
		{"-log", filepath.Join(dir, "missing.log")},
		{"-log", empty},
		{"-log", other},
		{"-log", noSLO},
		{"-log", noSLO, "-slo", "-1"},
		{"-log", noSLO, "-slo", "2", "-gpus-per-pod", "0"},
		{"-log", noSLO, "extra"},
	} {
		err := cmdDecisions(args, io.Discard, quietLog())
		if err == nil {
			t.Errorf("decisions %v: accepted", args)
		}
	}
	if err := cmdDecisions([]string{"-log", other}, io.Discard, quietLog()); err == nil || !strings.Contains(err.Error(), "no decision lines") {
		t.Errorf("a log without decisions: %v", err)
	}
	if err := cmdDecisions([]string{"-log", noSLO, "-slo", "2"}, io.Discard, quietLog()); err != nil {
		t.Errorf("one decision with -slo: %v", err)
	}
}
