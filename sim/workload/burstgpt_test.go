package workload

import (
	"strings"
	"testing"
	"time"
)

const burstGPTSample = "testdata/burstgpt_sample.csv"

func TestBurstGPTSample(t *testing.T) {
	cases := []struct {
		name       string
		opts       BurstGPTOptions
		n          int
		first      Request
		lastArrive time.Duration
	}{
		// 15 rows, 3 of them failed (0 response tokens).
		{"default skips failed", BurstGPTOptions{}, 12, Request{5 * time.Second, 472, 18, false}, 497 * time.Second},
		{"include failed", BurstGPTOptions{IncludeFailed: true}, 15, Request{5 * time.Second, 472, 18, false}, 497 * time.Second},
		{"gpt-4 only", BurstGPTOptions{Models: []string{"gpt-4"}}, 4, Request{118 * time.Second, 417, 217, false}, 497 * time.Second},
		{"chatgpt api log", BurstGPTOptions{Models: []string{"ChatGPT"}, LogTypes: []string{"API log"}}, 3, Request{125 * time.Second, 1360, 147, false}, 355 * time.Second},
		{"no match", BurstGPTOptions{Models: []string{"Llama"}}, 0, Request{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := OpenBurstGPT(burstGPTSample, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			reqs := drain(t, src)
			if len(reqs) != c.n {
				t.Fatalf("got %d requests, want %d", len(reqs), c.n)
			}
			checkOrdered(t, reqs)
			if c.n > 0 && (reqs[0] != c.first || reqs[len(reqs)-1].Arrival != c.lastArrive) {
				t.Errorf("first %+v last at %v, want %+v and %v", reqs[0], reqs[len(reqs)-1].Arrival, c.first, c.lastArrive)
			}
		})
	}
}

func TestBurstGPTBadInput(t *testing.T) {
	const h = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	cases := map[string]struct{ content, frag string }{
		"time":     {h + "5,ChatGPT,1,1,2,API log\nsoon,ChatGPT,1,1,2,API log\n", "bad.csv:3: Timestamp"},
		"negative": {h + "-5,ChatGPT,1,1,2,API log\n", "bad.csv:2: Timestamp"},
		"request":  {h + "5,ChatGPT,x,1,2,API log\n", "bad.csv:2: Request tokens"},
		"response": {h + "5,ChatGPT,1,-1,0,API log\n", "bad.csv:2: Response tokens"},
		"fields":   {h + "5,ChatGPT,1,1\n", "bad.csv:2:"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			src, err := OpenBurstGPT(writeTemp(t, "bad.csv", c.content), BurstGPTOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = All(src)
			wantErr(t, err, c.frag)
		})
	}
	_, err := OpenBurstGPT(writeTemp(t, "bad.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"), BurstGPTOptions{})
	wantErr(t, err, "bad.csv:1: header")
}

func FuzzBurstGPT(f *testing.F) {
	f.Add([]byte("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,0,1087,Conversation log\n"))
	f.Add([]byte("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n9.5,GPT-4,1,1,2,API log\n3,GPT-4,1,1,2,API log\n"))
	f.Add([]byte("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1e308,x,1,1,1,y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := burstGPTRows("fuzz.csv", strings.NewReader(string(data)), BurstGPTOptions{IncludeFailed: true})
		if err != nil {
			return
		}
		fuzzCheck(t, newOrderedSource("fuzz.csv", rows, false))
	})
}
