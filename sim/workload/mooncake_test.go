package workload

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestMooncakeConversationTrace(t *testing.T) {
	src, err := OpenMooncake(tracePath(t, "mooncake_fast25/conversation_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := drain(t, src)
	if len(reqs) != 12031 {
		t.Fatalf("got %d requests, want 12031", len(reqs))
	}
	checkOrdered(t, reqs)
	if first := reqs[0]; first != (Request{Arrival: 0, InputTokens: 6758, OutputTokens: 500}) {
		t.Errorf("first request %+v", first)
	}
	wantLast := Request{Arrival: 3536999 * time.Millisecond, InputTokens: 20774, OutputTokens: 508}
	if last := reqs[len(reqs)-1]; last != wantLast {
		t.Errorf("last request %+v, want %+v", last, wantLast)
	}
	st, err := Stats(FromRequests(reqs))
	if err != nil {
		t.Fatal(err)
	}
	// Upstream README: average input 12,035, output 343.
	if st.MeanInput < 12034 || st.MeanInput > 12036 || st.MeanOutput < 342 || st.MeanOutput > 344 {
		t.Errorf("mean tokens in %.1f out %.1f, want ≈12035 and ≈343", st.MeanInput, st.MeanOutput)
	}
}

func TestMooncakeParsesFieldsAndSkipsBlankLines(t *testing.T) {
	p := writeTemp(t, "t.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1, 2]}`+"\n\n"+
		`{"hash_ids": [], "output_length": 7, "input_length": 20, "timestamp": 1500}`+"\n")
	src, err := OpenMooncake(p)
	if err != nil {
		t.Fatal(err)
	}
	reqs := drain(t, src)
	want := []Request{{0, 10, 2, false}, {1500 * time.Millisecond, 20, 7, false}}
	if fmt.Sprint(reqs) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", reqs, want)
	}
}

func TestMooncakeBadInput(t *testing.T) {
	const ok = `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}` + "\n"
	cases := map[string]struct {
		line string
		frag string
	}{
		"json":       {`{"timestamp": 5, "input_length": 1`, "not valid JSON"},
		"array":      {`[1, 2, 3]`, "not a JSON object"},
		"missing":    {`{"timestamp": 5, "output_length": 1}`, "input_length missing"},
		"string":     {`{"timestamp": "5", "input_length": 1, "output_length": 1}`, "timestamp missing or not a number"},
		"negative":   {`{"timestamp": 5, "input_length": -1, "output_length": 1}`, "input_length -1"},
		"fraction":   {`{"timestamp": 5, "input_length": 1, "output_length": 1.5}`, "output_length 1.5"},
		"negtime":    {`{"timestamp": -5, "input_length": 1, "output_length": 1}`, "out of range"},
		"hugeoffset": {`{"timestamp": 1e300, "input_length": 1, "output_length": 1}`, "out of range"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			src, err := OpenMooncake(writeTemp(t, "bad.jsonl", ok+c.line+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			reqs, err := All(src)
			wantErr(t, err, "bad.jsonl:2:", c.frag)
			if len(reqs) != 0 {
				// the first row is held in the reorder window, so nothing
				// is handed out before the error
				t.Errorf("got %d requests before the error", len(reqs))
			}
		})
	}
}

func FuzzMooncake(f *testing.F) {
	f.Add([]byte(`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2]}` + "\n" +
		`{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]}` + "\n"))
	f.Add([]byte(`{"timestamp": 5}` + "\n" + `not json` + "\n"))
	f.Add([]byte("\n\n" + `{"timestamp": 2, "input_length": 1, "output_length": 1}` + "\n" + `{"timestamp": 1, "input_length": 1, "output_length": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, newOrderedSource("fuzz.jsonl", mooncakeRows("fuzz.jsonl", strings.NewReader(string(data))), false))
	})
}
