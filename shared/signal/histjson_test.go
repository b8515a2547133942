package signal

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// plainHistogram has Histogram's fields without its UnmarshalJSON: the
// reference the fast decoder must agree with.
type plainHistogram struct {
	Buckets []Bucket `json:"b"`
	Sum     float64  `json:"sum"`
	Count   float64  `json:"count"`
}

func TestHistogramUnmarshalMatchesEncodingJSON(t *testing.T) {
	docs := []string{
		`{"b":[{"le":0.1,"c":3},{"le":1e-3,"c":4.5}],"sum":0.123456789,"count":7}`,
		`{"b":[],"sum":0,"count":0}`,
		`{"count":2,"sum":1,"extra":{"x":[1,2]},"b":[{"c":1,"le":2,"other":"y"}]}`,
		`{"b":null,"sum":null,"count":3}`,
		`{"b":[{"le":1,"c":1}],"b":[{"le":2,"c":2}]}`,
	}
	for _, doc := range docs {
		var fast Histogram
		var ref plainHistogram
		if err := json.Unmarshal([]byte(doc), &fast); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if err := json.Unmarshal([]byte(doc), &ref); err != nil {
			t.Fatalf("%s: reference: %v", doc, err)
		}
		if !reflect.DeepEqual(fast, Histogram(ref)) && !(len(fast.Buckets) == 0 && len(ref.Buckets) == 0 && fast.Sum == ref.Sum && fast.Count == ref.Count) {
			t.Errorf("%s:\nfast %+v\nref  %+v", doc, fast, ref)
		}
	}
	for _, bad := range []string{`[1]`, `{"b":{"le":1}}`, `{"b":[1]}`, `{"b":[{"le":"0.1","c":1}]}`, `{"sum":"x"}`, `{"count":true}`} {
		var h Histogram
		if err := json.Unmarshal([]byte(bad), &h); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	// Inside a report, through the normal decode path.
	r, err := Decode(`{"v":1,"pods":[{"name":"p","ready":true,"scrapeTime":"2026-01-01T00:00:00Z","ttft":{"b":[{"le":0.5,"c":2}],"sum":0.4,"count":2}}]}`)
	if err != nil || r.Pods[0].TTFT.Buckets[0].UpperBound != 0.5 || r.Pods[0].TTFT.Count != 2 {
		t.Fatalf("report: %+v %v", r, err)
	}
}

func FuzzHistogramUnmarshal(f *testing.F) {
	f.Add(`{"b":[{"le":0.1,"c":3}],"sum":1,"count":3}`)
	f.Add(`{"b":[],"count":0}`)
	f.Add(`{"b":[{"le":1e308,"c":-0}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var ref plainHistogram
		refErr := json.Unmarshal([]byte(doc), &ref)
		var fast Histogram
		fastErr := json.Unmarshal([]byte(doc), &fast)
		if refErr != nil || strings.ContainsAny(doc, "ABCDEFGHIJKLMNOPQRSTUVWXYZ\\\\") {
			return // only compare where the reference succeeds and keys are plain
		}
		if fastErr != nil {
			t.Fatalf("%q: reference accepted, fast failed: %v", doc, fastErr)
		}
		if len(ref.Buckets) != len(fast.Buckets) || ref.Sum != fast.Sum || ref.Count != fast.Count {
			t.Fatalf("%q: fast %+v ref %+v", doc, fast, ref)
		}
		for i := range ref.Buckets {
			if ref.Buckets[i] != fast.Buckets[i] {
				t.Fatalf("%q: bucket %d fast %+v ref %+v", doc, i, fast.Buckets[i], ref.Buckets[i])
			}
		}
	})
}
