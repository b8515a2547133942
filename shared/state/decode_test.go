package state

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/inferscale/inferscale/internal/jsontest"
	"github.com/tidwall/gjson"
)

// stateCases are documents decodeDoc must read exactly as a json.Decoder
// with DisallowUnknownFields reads them (or reject when it rejects).
var stateCases = []string{
	`{"v":1,"lastTick":"2026-11-29T12:00:00Z","lastScaleUp":"2026-11-29T11:00:00+01:00","lastScaleDown":null,"lastScaleUpSignals":2,"replicas":4,` +
		`"recommendations":[{"at":"2026-11-29T12:00:00Z","replicas":3},null],"gpuUtilEwma":0.30000000000000004,"podCapacityRps":1e1,"lastQueue":0,` +
		`"pods":[{"name":"a","scrapeTime":"2026-11-29T12:00:00Z","seenAt":"2026-11-29T12:00:00Z","requestsTotal":333333.3333333333,"inFlight":null,` +
		`"ttft":{"le":[0.1,1],"c":[3,null],"sum":0.123456789,"count":4},"e2e":null},{"name":"b\u00e9","ttft":{"le":[],"c":null}}],` +
		`"startups":[{"pod":"a","seconds":61.5,"at":"2026-11-29T12:00:00Z"}],"rates":[{"at":"2026-11-29T12:00:00Z","rps":7.25}],` +
		`"hourlyPeaks":[{"hour":"2026-11-29T12:00:00Z","replicas":5}]}`,
	`{"v":1,"pods":[],"recommendations":[],"startups":null,"rates":[],"hourlyPeaks":[]}`,
	`{"v":1}`,
	`null`,
	`{}`,
	// Rejected by both.
	`{"v":1,"extra":1}`,
	`{"v":1,"pods":[{"name":"a","inflight":1,"x":2}]}`,
	`{"v":1,"pods":[{"name":"a","ttft":{"le":[1],"c":[1],"p50":1}}]}`,
	`{"v":1,"pods":[{"name":1}]}`,
	`{"v":1,"pods":{}}`,
	`{"v":1,"pods":[1]}`,
	`{"v":1,"recommendations":[{"at":"noon","replicas":1}]}`,
	`{"v":1,"recommendations":[{"at":"2026-11-29T12:00:00Z","replicas":1.5}]}`,
	`{"v":1,"hourlyPeaks":[{"hour":"2026-11-29T12:00:00Z","replicas":"5"}]}`,
	`{"v":1,"gpuUtilEwma":"0.5"}`,
	`{"v":1,"lastQueue":1e400}`,
	`{"v":1,"lastTick":5}`,
	`{"v":1,"replicas":2.5}`,
	`{"v":1,"replicas":"2"}`,
	`{"v":1,"replicas":null}`,
	`{"v":"1"}`,
	`{"v":1,"pods":[{"name":"a","ttft":{"le":"x"}}]}`,
	`{"v":1,"pods":[{"name":"a","ttft":{"le":[true]}}]}`,
	`{"v":1,"rates":[{"at":"2026-11-29T12:00:00Z","rps":1,"n":1}]}`,
	`{"v":1,"startups":[{"pod":"a","secs":1}]}`,
	`[]`,
}

func TestDecodeDocMatchesEncodingJSON(t *testing.T) {
	for _, in := range stateCases {
		compareStateDecode(t, in)
	}
	b, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	compareStateDecode(t, string(b))
}

func TestDecodeNamesTheBadField(t *testing.T) {
	_, err := Decode([]byte(`{"v":1,"pods":[{"name":"a"},{"name":"b","ttft":{"le":[1,"x"]}}]}`))
	if err == nil || !strings.Contains(err.Error(), "pods: [1]: ttft: le: [1]: want a number") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzDecodeDocMatchesEncodingJSON(f *testing.F) {
	for _, in := range stateCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// Outside the promise: invalid UTF-8, keys that repeat or match a
		// field only when case is ignored, and syntax errors (Decode
		// checks the syntax before decodeDoc runs).
		if !utf8.ValidString(in) || !gjson.Valid(in) || !jsontest.ExactKeys(gjson.Parse(in), jsontest.FieldNames(State{}, Recommendation{}, PodCounters{}, Hist{}, Startup{}, RateSample{}, HourlyPeak{})) {
			return
		}
		compareStateDecode(t, in)
	})
}

func compareStateDecode(t *testing.T, in string) {
	t.Helper()
	want := New()
	dec := json.NewDecoder(bytes.NewReader([]byte(in)))
	dec.DisallowUnknownFields()
	werr := dec.Decode(want)
	got, gerr := decodeDoc(in)
	switch {
	case (werr == nil) != (gerr == nil):
		t.Errorf("%q: encoding/json error %v, decodeDoc error %v", in, werr, gerr)
	case werr == nil && !reflect.DeepEqual(got, want):
		t.Errorf("%q:\ndecodeDoc     %+v\nencoding/json %+v", in, got, want)
	}
}
