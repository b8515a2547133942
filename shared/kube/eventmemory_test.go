package kube

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// N15 (issue 15): the recorder's memory comes back from the state as it
// was written, and nothing checked it: a spam bucket of -1e300 tokens
// silenced its reason for good, and a logged count at the int32 maximum
// sent "count": -2147483648. Records no recorder writes are dropped (a
// fresh bucket, the event created anew), and counts saturate.
func TestADamagedEventMemoryIsNotObeyed(t *testing.T) {
	ev := Event{Type: EventWarning, Reason: "MaxReplicasReached", Message: "at maxReplicas 8"}
	for name, doc := range map[string]string{
		"spam -1e300":      `{"spam":{"K":{"tokens":-1e300,"at":"2026-12-01T11:00:00Z"}}}`,
		"spam 1e300":       `{"spam":{"K":{"tokens":1e300,"at":"2026-12-01T11:00:00Z"}}}`,
		"spam in future":   `{"spam":{"K":{"tokens":0,"at":"2126-12-01T11:00:00Z"}}}`,
		"spam null":        `{"spam":{"K":null},"similar":{"x":null},"logged":{"y":null}}`,
		"similar too many": `{"similar":{"A":{"messages":["1","2","3","4","5","6","7","8","9","10","11","12"],"last":"2026-12-01T11:59:50Z"}}}`,
	} {
		api, rec := fakeRecorder(t)
		key := hashKey(rec.Component, rec.Instance, deploy.APIVersion, deploy.Kind, deploy.Namespace, deploy.Name, deploy.UID, ev.Type, ev.Reason)
		var mem EventMemory
		if err := json.Unmarshal([]byte(replaceKeys(doc, key)), &mem); err != nil {
			t.Fatal(err)
		}
		res, err := rec.Record(context.Background(), deploy, ev, t0, &mem)
		if err != nil || res.Action == ActionFiltered || len(api.Requests()) != 1 {
			t.Errorf("%s: %+v, %v, %d requests: the damaged memory silenced the event", name, res, err, len(api.Requests()))
		}
		if res.Aggregated {
			t.Errorf("%s: aggregated on a damaged message list", name)
		}
	}

	api, rec := fakeRecorder(t)
	mem := &EventMemory{}
	res, err := rec.Record(context.Background(), deploy, ev, t0, mem)
	if err != nil {
		t.Fatal(err)
	}
	mem.Logged[res.Name].Count = math.MaxInt32
	if _, err := rec.Record(context.Background(), deploy, ev, t0.Add(15e9), mem); err != nil {
		t.Fatal(err)
	}
	for _, r := range api.Requests() {
		if c := gjson.GetBytes(r.Body, "count"); c.Exists() && (c.Int() < 1 || c.Int() > MaxEventCount) {
			t.Errorf("%s sent count %d", r.Method, c.Int())
		}
	}
	mem.Logged[res.Name].Count = MaxEventCount
	if n := nextCount(mem.Logged[res.Name].Count); n != MaxEventCount {
		t.Errorf("count after the maximum: %d", n)
	}
}

// replaceKeys puts the aggregation key where the documents say K or A.
func replaceKeys(doc, key string) string {
	b, _ := json.Marshal(key)
	k := string(b)
	out := []byte(doc)
	for _, ph := range []string{`"K"`, `"A"`} {
		out = []byte(strings.ReplaceAll(string(out), ph, k))
	}
	return string(out)
}
