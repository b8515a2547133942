package signal

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/inferscale/inferscale/internal/jsontest"
	"github.com/tidwall/gjson"
)

// reportCases are documents Parse must read exactly as encoding/json does
// (value when both accept, rejection when encoding/json rejects).
var reportCases = []string{
	`{"v":1,"scrapeTime":"2026-11-29T12:00:00Z","pods":[{"name":"a","namespace":"ns","node":"n1","phase":"Running","ready":true,"terminating":false,` +
		`"createdAt":"2026-11-29T11:00:00Z","startedAt":"2026-11-29T11:00:02Z","readyAt":"2026-11-29T11:01:10.5+01:00","startupSeconds":70.5,"ageSeconds":3600,` +
		`"scrapeTime":"2026-11-29T12:00:00Z","server":"vllm","waiting":2,"running":40,"kvCacheUsage":0.61,` +
		`"gpu":{"utilization":0.7,"smActive":0.5,"field":"DCGM_FI_PROF_SM_ACTIVE","source":"dcgm-exporter","count":2},` +
		`"ttft":{"b":[{"le":0.1,"c":1},{"le":1,"c":5}],"sum":2.5,"count":6},"e2e":{"b":[],"sum":0,"count":0},"queueTime":null,"interToken":{"b":[{"le":0.01,"c":3}],"sum":0.02,"count":3},` +
		`"requestsTotal":1e4,"promptTokensTotal":5000000,"generationTokensTotal":2E6,"preemptionsTotal":0,"notes":["no kv",""],"unknown":{"x":[1,2]}}]}`,
	`{"v":1,"pods":[{"name":"b","error":"connection refused","ready":false,"waiting":null,"gpu":null,"notes":null,"createdAt":null,"scrapeTime":null}]}` + "\n",
	`{"v":1,"pods":[null,{"name":"c"}],"fleet":null}`,
	`{"v":1,"fleet":{"source":"prometheus","readyPods":3,"waiting":4,"ttftQuantiles":{"0.95":1.5},"errors":["q1"]}}`,
	`  {"v":1,"pods":[{"name":"\u00e9\"quoted\"\\","notes":["a\nb"]}]}  `,
	`{"v":1,"pods":[{"name":"a","waiting":-0.0,"running":1.5e-3,"gpu":{"count":0}}]}`,
	`null`,
	`{}`,
	// Rejected by both.
	`{"v":1,"pods":[{"name":"a","waiting":"3"}]}`,
	`{"v":1,"pods":[{"name":"a","ready":"yes"}]}`,
	`{"v":1,"pods":[{"name":5}]}`,
	`{"v":1,"pods":[{"name":"a","running":1e999}]}`,
	`{"v":1,"pods":[{"name":"a","createdAt":"yesterday"}]}`,
	`{"v":1,"pods":[{"name":"a","createdAt":12}]}`,
	`{"v":1,"pods":[{"name":"a","gpu":{"count":1.5}}]}`,
	`{"v":1,"pods":[{"name":"a","gpu":{"count":1e2}}]}`,
	`{"v":1,"pods":[{"name":"a","gpu":[]}]}`,
	`{"v":1,"pods":[{"name":"a","notes":"x"}]}`,
	`{"v":1,"pods":[{"name":"a","notes":[1]}]}`,
	`{"v":1,"pods":[{"name":"a","ttft":{"b":{}}}]}`,
	`{"v":1,"pods":[{"name":"a","ttft":[]}]}`,
	`{"v":1,"pods":{}}`,
	`{"v":1,"pods":[5]}`,
	`{"v":"1"}`,
	`{"v":1.5}`,
	`{"v":1,"fleet":{"source":7}}`,
	`[1]`,
	`"report"`,
	`{"v":1,`,
	`{"v":1} {"v":1}`,
	`{"v":1,"pods":[{"name":"a"}],}`,
	``,
}

func TestParseMatchesEncodingJSON(t *testing.T) {
	for _, in := range reportCases {
		compareWithEncodingJSON(t, in)
	}
}

func TestParseNamesTheBadField(t *testing.T) {
	_, err := Parse([]byte(`{"v":1,"pods":[{"name":"a"},{"name":"b","gpu":{"utilization":"high"}}]}`))
	if err == nil || !strings.Contains(err.Error(), "pods: [1]: gpu: utilization: want a number") {
		t.Fatalf("err = %v", err)
	}
	_, err = Parse([]byte(`{"v":1,"pods":[{"name":"a"}] trailing`))
	if err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParseMatchesEncodingJSON(f *testing.F) {
	for _, in := range reportCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// Outside what Parse promises: keys that differ from a field only
		// by case or repeat within an object (encoding/json matches the
		// former and merges the latter), and invalid UTF-8 (which
		// encoding/json replaces).
		if !utf8.ValidString(in) || !gjson.Valid(in) || !jsontest.ExactKeys(gjson.Parse(in), jsontest.FieldNames(Report{}, Pod{}, GPU{}, Histogram{}, Bucket{}, Fleet{})) {
			if _, err := Parse([]byte(in)); err == nil && !gjson.Valid(in) {
				t.Fatalf("Parse accepted invalid JSON %q", in)
			}
			return
		}
		compareWithEncodingJSON(t, in)
	})
}

func compareWithEncodingJSON(t *testing.T, in string) {
	t.Helper()
	var want Report
	werr := json.Unmarshal([]byte(in), &want)
	got, gerr := Parse([]byte(in))
	switch {
	case (werr == nil) != (gerr == nil):
		t.Errorf("%q: encoding/json error %v, Parse error %v", in, werr, gerr)
	case werr == nil && !reflect.DeepEqual(*got, want):
		t.Errorf("%q:\nParse         %+v\nencoding/json %+v", in, *got, want)
	}
}
