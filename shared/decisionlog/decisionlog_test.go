package decisionlog

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample(t time.Time, current, target int) Line {
	return Line{
		Time: t, Mode: Active, Current: current, Target: target,
		Reasons: []string{"queue over threshold: 4.2 waiting per pod > 3 -> proposes 6"},
		Rules: []Rule{
			{Name: "queue", Value: F(4.2), Threshold: 3, Over: true, Proposal: 6},
			{Name: "kv", Value: nil, Threshold: 0.8},
		},
		Fleet:      Fleet{Ready: 4, Starting: 1, Waiting: 17, Running: 120, KVMean: F(0.41), TTFTP95: F(2.7), ArrivalRate: F(38.5)},
		SLOSeconds: 2,
	}
}

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func TestWriteIsOneLineWithTheVersionFirst(t *testing.T) {
	var b bytes.Buffer
	l := sample(t0, 4, 6)
	l.Forecast = &Forecast{Level: 30, Trend: 0.1, Upper: 41, Quantile: 0.9, HorizonSeconds: 120}
	l.Capacity = &Capacity{PerPod: 9.5, Source: CapacityFitted}
	l.Plan = &Plan{DemandPods: 3.09, Beta: 4.5, Need: 12, Hold: 18, Floor: 18, BudgetSpent: F(0.002)}
	l.Victims = []string{"vllm-7"}
	l.Reasons = append(l.Reasons, "a <tag> & more")
	if err := Write(&b, l); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.HasPrefix(s, `{"inferscale":"decision/v1","time":"2026-12-01T12:00:00Z","mode":"active","current":4,"target":6,`) {
		t.Errorf("line starts %q", s[:min(len(s), 120)])
	}
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "}\n") {
		t.Errorf("want exactly one newline-terminated line, got %q", s)
	}
	for _, want := range []string{`"value":null`, `"alerts":[]`, `"a <tag> & more"`, `"capacity":{"perPod":9.5,"source":"fitted"}`, `"victims":["vllm-7"]`} {
		if !strings.Contains(s, want) {
			t.Errorf("line lacks %s: %s", want, s)
		}
	}
	got, errs := Parse(&b)
	if len(errs) != 0 || len(got) != 1 {
		t.Fatalf("round trip: %v %v", got, errs)
	}
	l.Inferscale = Version
	l.Alerts = []string{}
	if !reflect.DeepEqual(got[0], l) {
		t.Errorf("round trip changed the line:\n got %+v\nwant %+v", got[0], l)
	}
}

func TestWriteRejectsWhatIsNotADecision(t *testing.T) {
	for name, mutate := range map[string]func(*Line){
		"NaN threshold": func(l *Line) { l.Rules[0].Threshold = math.NaN() },
		"Inf waiting":   func(l *Line) { l.Fleet.Waiting = math.Inf(1) },
		"no time":       func(l *Line) { l.Time = time.Time{} },
		"bad mode":      func(l *Line) { l.Mode = "shadow" },
		"negative":      func(l *Line) { l.Target = -1 },
		"bad source":    func(l *Line) { l.Capacity = &Capacity{PerPod: 1, Source: "guess"} },
		"negative γs": func(l *Line) {
			l.Capacity = &Capacity{PerPod: 1, Source: CapacityFitted, Model: &Model{Alpha: 0.006, GammaSeq: -1e-5}}
		},
		"NaN β": func(l *Line) {
			l.Capacity = &Capacity{PerPod: 1, Source: CapacityFitted, Model: &Model{Beta: math.NaN()}}
		},
		"negative work": func(l *Line) { l.Capacity = &Capacity{PerPod: 1, Source: CapacityFitted, WorkPerRequest: -0.1} },
		"negative need": func(l *Line) { l.Plan = &Plan{Need: -1} },
		"NaN demand":    func(l *Line) { l.Plan = &Plan{DemandPods: math.NaN()} },
	} {
		l := sample(t0, 1, 2)
		mutate(&l)
		var b bytes.Buffer
		if err := Write(&b, l); err == nil || b.Len() != 0 {
			t.Errorf("%s: want an error and nothing written, got %v and %q", name, err, b.String())
		}
	}
	var fail failWriter
	if err := Write(fail, sample(t0, 1, 2)); err == nil || !strings.Contains(err.Error(), "writing") {
		t.Errorf("a failing writer: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func line(t *testing.T, l Line) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, l); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// A pod log as `kubectl logs --timestamps` shows CPA forwarding evaluate's
// stderr (klog at V(0), one multi-line dump per tick) among its own lines.
func TestParseFindsDecisionsBehindPrefixesAndSkipsTheRest(t *testing.T) {
	a, b, c, d := line(t, sample(t0, 4, 6)), line(t, sample(t0.Add(15*time.Second), 6, 6)),
		line(t, sample(t0.Add(30*time.Second), 6, 5)), line(t, sample(t0.Add(45*time.Second), 5, 5))
	log := strings.Join([]string{
		"2026-12-01T12:00:00.5Z I1201 12:00:00.512345       1 main.go:101] Starting autoscaler",
		"2026-12-01T12:00:01.1Z I1201 12:00:01.123456       1 shell.go:84] Shell command stderr: " + a,
		`2026-12-01T12:00:01.1Z time=2026-12-01T12:00:01Z level=WARN msg="pod vllm-3 missing"`,
		"2026-12-01T12:00:16.1Z I1201 12:00:16.123456       1 shell.go:84] Shell command stderr: " + b + "\r",
		c + " " + d, // two on one line
		`I1201 12:01:01.1 1 shell.go:84] Shell command stderr: {"inferscale":"decision/v1","time":"2026-12-01T12:01:00Z","mode":"active","current":5`, // truncated
		`{"inferscale":"decision/v1","time":"2026-12-01T12:01:15Z","mode":"shadow","current":5,"target":5}`,                                           // invalid mode
		`{"inferscale":"decision/v2","time":"2026-12-01T12:01:30Z","mode":"active","current":5,"target":5}`,                                           // unknown version
		`{"inferscale":"other","x":1} {"not":"a decision"}`,
		"",
	}, "\n")
	got, errs := Parse(strings.NewReader(log))
	if len(got) != 4 {
		t.Fatalf("want 4 decisions, got %d: %v (errors %v)", len(got), got, errs)
	}
	for i, want := range []struct{ cur, tgt int }{{4, 6}, {6, 6}, {6, 5}, {5, 5}} {
		if got[i].Current != want.cur || got[i].Target != want.tgt || !got[i].Time.Equal(t0.Add(time.Duration(i)*15*time.Second)) {
			t.Errorf("decision %d = %v", i, got[i])
		}
	}
	if len(errs) != 3 {
		t.Fatalf("want 3 errors (truncated, invalid mode, v2), got %d: %v", len(errs), errs)
	}
	for i, want := range []string{"line 6, column 55: malformed", "line 7, column 1: invalid decision: mode", "line 8, column 1: invalid decision: inferscale \"decision/v2\""} {
		if !strings.Contains(errs[i].Error(), want) {
			t.Errorf("error %d = %v, want it to contain %q", i, errs[i], want)
		}
	}
}

func TestParseSkipsOverlongLinesAndReportsReadErrors(t *testing.T) {
	ok := line(t, sample(t0, 1, 1))
	long := strings.Repeat("x", MaxLineBytes+10) + ok
	got, errs := Parse(strings.NewReader(long + "\n" + ok + "\n" + ok))
	if len(got) != 2 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 1: longer than") {
		t.Errorf("overlong: %d lines, errors %v", len(got), errs)
	}
	got, errs = Parse(&brokenReader{data: ok + "\n" + ok + "\n"})
	if len(got) != 2 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "connection reset") {
		t.Errorf("read error: %d lines, errors %v", len(got), errs)
	}
}

// brokenReader returns data, then an error.
type brokenReader struct {
	data string
	done bool
}

func (r *brokenReader) Read(p []byte) (int, error) {
	if r.done {
		return 0, errors.New("connection reset")
	}
	r.done = true
	return copy(p, r.data), nil
}

func TestParseRejectsATimeThatCannotBeWrittenBack(t *testing.T) {
	_, errs := Parse(strings.NewReader(`{"inferscale":"decision/v1","time":"0001-01-01T00:30:00+01:00","mode":"active","current":1,"target":1}`))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "time") {
		t.Errorf("want a time error, got %v", errs)
	}
}

func TestWhyNamesTheRulesOverThresholdAndTheReason(t *testing.T) {
	l := sample(t0, 4, 6)
	l.Rules = append(l.Rules, Rule{Name: "latency", Value: F(3.14159), Threshold: 2, Over: true})
	l.Alerts = []string{"maxReplicas 6 blocks a needed scale-up to 8"}
	want := "queue 4.2 > 3 → 6; latency 3.14 > 2; queue over threshold: 4.2 waiting per pod > 3 -> proposes 6; alert: maxReplicas 6 blocks a needed scale-up to 8"
	if got := l.Why(); got != want {
		t.Errorf("Why() = %q\nwant      %q", got, want)
	}
	if got := l.EventMessage(); !strings.HasPrefix(got, "New size: 6 (from 4); reason: queue 4.2 > 3 → 6;") {
		t.Errorf("EventMessage() = %q", got)
	}
}

// N14 (issue 15): nested unterminated markers made the scan quadratic
// (each one decoded to the end of its line: 4 lines of 1 MiB took 103 s),
// and every malformed line kept its error (2 M lines: 1.35 GB). A line
// stops after MaxFailuresPerLine malformed objects; Scan keeps the first
// MaxErrors errors and counts the rest; a good decision after a cut one in
// the same line is still read.
func TestMalformedInputCostsBoundedWork(t *testing.T) {
	var one bytes.Buffer
	if err := Write(&one, sample(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), 3, 5)); err != nil {
		t.Fatal(err)
	}
	nested := strings.Repeat(`{"inferscale":"decision/v1","x":`, 30000)
	lines, errs := Parse(strings.NewReader(nested + "\n"))
	if len(lines) != 0 || len(errs) != MaxFailuresPerLine+1 {
		t.Errorf("nested markers: %d lines, %d errors, want none and %d (the line given up)", len(lines), len(errs), MaxFailuresPerLine+1)
	}
	cut := strings.TrimSuffix(one.String(), "}\n")
	if lines, _ := Parse(strings.NewReader(cut + " " + one.String())); len(lines) != 1 {
		t.Errorf("a decision after a cut one: %d lines", len(lines))
	}
	bad := strings.Repeat(`x {"inferscale":"decision/v1"}`+"\n", 5000)
	lines, first, malformed := Scan(strings.NewReader(bad + one.String()))
	if len(lines) != 1 || len(first) != MaxErrors || malformed != 5000 {
		t.Errorf("5000 malformed lines: %d lines, %d errors kept, %d counted", len(lines), len(first), malformed)
	}
	if _, errs := Parse(strings.NewReader(bad)); len(errs) != MaxErrors+1 || !strings.Contains(errs[MaxErrors].Error(), "4900 more") {
		t.Errorf("Parse: %d errors, last %v", len(errs), errs[len(errs)-1])
	}
}

// N14: a time far out (year 9999) or a count beyond CPA's made the summary's
// durations overflow ("over -2ns") and 1e25 GPU-hours: such lines are not
// decisions.
func TestFarOutTimesAndCountsAreInvalid(t *testing.T) {
	for name, mutate := range map[string]func(*Line){
		"year 9999":       func(l *Line) { l.Time = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) },
		"year 1":          func(l *Line) { l.Time = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC) },
		"1e12 replicas":   func(l *Line) { l.Current = 1e12 },
		"1e12 target":     func(l *Line) { l.Target = 1e12 },
		"1e12 ready pods": func(l *Line) { l.Fleet.Ready = 1e12 },
	} {
		l := sample(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), 3, 5)
		mutate(&l)
		if l.Validate() == nil {
			t.Errorf("%s: valid", name)
		}
	}
}
