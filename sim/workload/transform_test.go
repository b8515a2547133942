package workload

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func seconds(ss ...float64) []Request {
	out := make([]Request, len(ss))
	for i, s := range ss {
		out[i] = Request{Arrival: time.Duration(s * float64(time.Second)), InputTokens: i + 1, OutputTokens: 1}
	}
	return out
}

func arrivals(reqs []Request) []float64 {
	out := make([]float64, len(reqs))
	for i, r := range reqs {
		out[i] = r.Arrival.Seconds()
	}
	return out
}

func TestScale(t *testing.T) {
	in := seconds(0, 2, 4, 6, 8)
	cases := []struct {
		name   string
		tf, rf float64
		want   string // arrivals
		inputs string // InputTokens, to see which requests were kept
	}{
		{"identity", 1, 1, "[0 2 4 6 8]", "[1 2 3 4 5]"},
		{"compress", 0.5, 1, "[0 1 2 3 4]", "[1 2 3 4 5]"},
		{"stretch", 3, 1, "[0 6 12 18 24]", "[1 2 3 4 5]"},
		{"thin half", 1, 0.5, "[2 6]", "[2 4]"},
		{"drop all", 1, 0, "[]", "[]"},
		{"double", 1, 2, "[0 1 2 3 4 5 6 7 8 8]", "[1 1 2 2 3 3 4 4 5 5]"},
		{"one and a half", 1, 1.5, "[0 2 3 4 6 7 8]", "[1 2 2 3 4 4 5]"},
		{"double and compress", 0.5, 2, "[0 0.5 1 1.5 2 2.5 3 3.5 4 4]", "[1 1 2 2 3 3 4 4 5 5]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := drain(t, Scale(FromRequests(in), c.tf, c.rf))
			ins := make([]int, len(out))
			for i, r := range out {
				ins[i] = r.InputTokens
			}
			if got := fmt.Sprint(arrivals(out)); got != c.want {
				t.Errorf("arrivals %s, want %s", got, c.want)
			}
			if got := fmt.Sprint(ins); got != c.inputs {
				t.Errorf("kept requests %s, want %s", got, c.inputs)
			}
		})
	}
	// rf=1.5 over 1000 requests keeps 1500 exactly.
	many := make([]Request, 1000)
	for i := range many {
		many[i].Arrival = time.Duration(i) * time.Second
	}
	if n := len(drain(t, Scale(FromRequests(many), 1, 1.5))); n != 1500 {
		t.Errorf("rate factor 1.5 on 1000 requests gave %d", n)
	}
	// A huge factor streams its copies instead of materialising them.
	huge := Scale(FromRequests(in), 1, 1e7)
	for i := range 5 {
		r, ok, err := huge.Next()
		if err != nil || !ok || r.InputTokens != 1 || r.Arrival != time.Duration(i)*200*time.Nanosecond {
			t.Fatalf("copy %d of 1e7: %+v ok=%v err=%v", i, r, ok, err)
		}
	}
	for _, bad := range [][2]float64{{0, 1}, {-1, 1}, {1, -0.5}, {1, math.Inf(1)}, {math.NaN(), 1}} {
		if _, _, err := Scale(FromRequests(in), bad[0], bad[1]).Next(); err == nil {
			t.Errorf("Scale(%v, %v): no error", bad[0], bad[1])
		}
	}
	// Errors of the underlying source pass through.
	if _, err := All(Scale(FromRequests(seconds(2, 1)), 1, 1)); err == nil {
		t.Error("out-of-order source: no error through Scale")
	}
}

func TestWindow(t *testing.T) {
	in := seconds(0, 1, 2, 3, 4, 5)
	cases := []struct {
		start, dur time.Duration
		want       string
	}{
		{0, 0, "[0 1 2 3 4 5]"},
		{2 * time.Second, 2 * time.Second, "[0 1]"},
		{2500 * time.Millisecond, 0, "[0.5 1.5 2.5]"},
		{10 * time.Second, time.Second, "[]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(arrivals(drain(t, Window(FromRequests(in), c.start, c.dur)))); got != c.want {
			t.Errorf("Window(%v, %v) = %s, want %s", c.start, c.dur, got, c.want)
		}
	}
	// Reading stops at the window's end: a failing request after it is never read.
	tail := append(seconds(0, 1, 2), Request{Arrival: 0})
	if got := len(drain(t, Window(FromRequests(tail), 0, 2*time.Second))); got != 2 {
		t.Errorf("got %d requests", got)
	}
	if _, _, err := Window(FromRequests(in), -time.Second, 0).Next(); err == nil {
		t.Error("negative start: no error")
	}
}

func TestStats(t *testing.T) {
	reqs := []Request{{0, 10, 1, false}, {30 * time.Second, 20, 3, false}, {61 * time.Second, 30, 5, false}, {62 * time.Second, 40, 7, false}, {63 * time.Second, 0, 0, false}, {121 * time.Second, 50, 9, false}}
	st, err := Stats(FromRequests(reqs))
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Requests: 6, First: 0, Last: 121 * time.Second, MeanRate: 6.0 / 121, PeakPerMinute: 3, PeakMinute: time.Minute, MeanInput: 25, MeanOutput: 25.0 / 6}
	if st != want {
		t.Errorf("got %+v\nwant %+v", st, want)
	}
	if _, err := Stats(FromRequests(seconds(1, 0))); err == nil {
		t.Error("decreasing arrivals: no error")
	}
	empty, err := Stats(FromRequests(nil))
	if err != nil || empty != (Summary{}) {
		t.Errorf("empty: %+v, %v", empty, err)
	}
}
