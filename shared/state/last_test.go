package state_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

func sampleLast() *state.Last {
	return &state.Last{Mode: "active", Current: 3, Target: 5, MinReplicas: 1, MaxReplicas: 8, DecidedBy: "sizing",
		SLOSeconds: 0.5, Alerts: []string{"StuckPods"},
		Plan: &state.LastPlan{ForecastLevel: 2.5, ForecastUpper: 3.25, CeilingRPS: 4, CeilingSource: "fitted", Beta: 0.8,
			Need: new(4), Hold: new(6), Floor: 6}}
}

// Record keeps the decision's summary, counts the ticks saved into the
// state, and the summary round-trips through the encoding.
func TestRecordKeepsTheLastDecisionAndCountsTicks(t *testing.T) {
	st := state.New()
	for i := range 3 {
		st.Record(state.Tick{At: t0.Add(time.Duration(i) * 15 * time.Second), Decided: state.Decided{Replicas: 3, Last: sampleLast()}})
	}
	want := sampleLast()
	want.Ticks = 3
	if !reflect.DeepEqual(st.Last, want) {
		t.Fatalf("last = %+v, want %+v", st.Last, want)
	}
	b, err := state.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := state.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Last, want) {
		t.Fatalf("round trip: %+v, want %+v", got.Last, want)
	}
}

// A summary out of bounds is not kept by Record, and one in a stored
// state costs only itself on decode.
func TestLastOutOfBoundsIsNotKept(t *testing.T) {
	bad := sampleLast()
	bad.DecidedBy = strings.Repeat("x", state.MaxLastName+1)
	st := state.New()
	st.Record(state.Tick{At: t0, Decided: state.Decided{Replicas: 3, Last: sampleLast()}})
	st.Record(state.Tick{At: t0.Add(time.Minute), Decided: state.Decided{Replicas: 3, Last: bad}})
	if st.Last != nil {
		t.Fatalf("a summary with a %d-byte name was kept", len(bad.DecidedBy))
	}
	for name, mutate := range map[string]func(*state.LastPlan){
		"negative need":  func(p *state.LastPlan) { p.Need = new(-1) },
		"hold too large": func(p *state.LastPlan) { p.Hold = new(state.MaxReplicas + 1) },
		"negative floor": func(p *state.LastPlan) { p.Floor = -2 },
	} {
		l := sampleLast()
		mutate(l.Plan)
		st.Record(state.Tick{At: t0.Add(2 * time.Minute), Decided: state.Decided{Replicas: 3, Last: l}})
		if st.Last != nil {
			t.Errorf("%s: the summary was kept: %+v", name, st.Last.Plan)
		}
	}
	doc := `{"v":1,"lastTick":"2026-01-01T00:00:00Z","last":{"mode":"active","current":-4,"target":1,"minReplicas":1,"maxReplicas":8,"decidedBy":"hold","ticks":2}}`
	got, err := state.Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got.Last != nil || got.LastTick == nil || len(got.Repairs) != 1 {
		t.Fatalf("decoded last %+v, repairs %v: want the summary reset and the rest kept", got.Last, got.Repairs)
	}
}

// A state without the summary (an older build's) decodes as before, and
// the summary is an optional field: a state written now names it "last",
// which a build without it refuses as an unknown field (and starts fresh).
func TestLastIsOptional(t *testing.T) {
	st, err := state.Decode([]byte(`{"v":1}`))
	if err != nil || st.Last != nil {
		t.Fatalf("a state without last: %v, %+v", err, st)
	}
	st.Record(state.Tick{At: t0, Decided: state.Decided{Replicas: 1, Last: sampleLast()}})
	b, err := state.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if _, ok := keys["last"]; !ok {
		t.Fatalf("no \"last\" key in %s", b)
	}
}
