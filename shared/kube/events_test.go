package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/internal/kubefake"
)

var (
	deploy = ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "inference", Name: "vllm", UID: "7c1e-uid"}
	t0     = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
)

func fakeRecorder(t *testing.T) (*kubefake.API, *EventRecorder) {
	t.Helper()
	api := kubefake.New(t)
	return api, NewEventRecorder(New(api.URL(), "", api.CertPool(), 2*time.Second, "inference"), "inferscale", "inferscale-5d8f")
}

func verbs(reqs []kubefake.Request) string {
	var v []string
	for _, r := range reqs {
		v = append(v, r.Method)
	}
	return strings.Join(v, ",")
}

func TestRecordCreatesTheEventThenPatchesItsRepeats(t *testing.T) {
	api, rec := fakeRecorder(t)
	mem := &EventMemory{}
	ev := Event{Type: EventNormal, Reason: ReasonScaledUp, Message: "New size: 6; reason: queue 4.2 waiting per pod > 3"}
	res, err := rec.Record(context.Background(), deploy, ev, t0, mem)
	if err != nil {
		t.Fatal(err)
	}
	reqs := api.Requests()
	if res.Action != ActionCreated || res.Count != 1 || verbs(reqs) != "POST" {
		t.Fatalf("first: %+v, requests %s", res, verbs(reqs))
	}
	if reqs[0].Path != "/api/v1/namespaces/inference/events" || reqs[0].ContentType != "application/json" {
		t.Errorf("create request: %s (%s)", reqs[0].Path, reqs[0].ContentType)
	}
	body := reqs[0].Body
	for path, want := range map[string]string{
		"apiVersion": "v1", "kind": "Event", "metadata.name": res.Name, "metadata.namespace": "inference",
		"involvedObject.apiVersion": "apps/v1", "involvedObject.kind": "Deployment", "involvedObject.name": "vllm",
		"involvedObject.namespace": "inference", "involvedObject.uid": "7c1e-uid",
		"reason": "ScaledUp", "type": "Normal", "message": ev.Message, "source.component": "inferscale",
		"firstTimestamp": "2026-12-01T12:00:00Z", "lastTimestamp": "2026-12-01T12:00:00Z", "count": "1",
		"reportingComponent": "inferscale", "reportingInstance": "inferscale-5d8f",
	} {
		if got := gjson.GetBytes(body, path).String(); got != want {
			t.Errorf("event %s = %q, want %q", path, got, want)
		}
	}
	if !strings.HasPrefix(res.Name, "vllm.") || len(res.Name) != len("vllm.")+16 {
		t.Errorf("event name %q: want vllm.<16 hex>", res.Name)
	}

	// The same event 15 s and 30 s later: patches of count and lastTimestamp.
	for i, want := range []int32{2, 3} {
		at := t0.Add(time.Duration(15*(i+1)) * time.Second)
		res2, err := rec.Record(context.Background(), deploy, ev, at, mem)
		if err != nil {
			t.Fatal(err)
		}
		reqs := api.Requests()
		if res2.Action != ActionPatched || res2.Count != want || res2.Name != res.Name || verbs(reqs) != "PATCH" {
			t.Fatalf("repeat %d: %+v, requests %s", i+1, res2, verbs(reqs))
		}
		if reqs[0].ContentType != "application/strategic-merge-patch+json" || reqs[0].Path != "/api/v1/namespaces/inference/events/"+res.Name {
			t.Errorf("patch request: %s (%s)", reqs[0].Path, reqs[0].ContentType)
		}
		wantBody := fmt.Sprintf(`{"count":%d,"lastTimestamp":%q,"message":%q}`, want, at.Format(time.RFC3339), ev.Message)
		if string(reqs[0].Body) != wantBody {
			t.Errorf("patch body %s, want %s", reqs[0].Body, wantBody)
		}
	}
	o, _ := api.Object("events", "inference", res.Name)
	if api.Count("events") != 1 || o["count"] != 3.0 || o["firstTimestamp"] != "2026-12-01T12:00:00Z" || o["lastTimestamp"] != "2026-12-01T12:00:30Z" {
		t.Errorf("stored: %d events, %v", api.Count("events"), o)
	}
}

// evaluate is a fresh process per tick: with no memory the name still
// dedupes, through AlreadyExists, GET and PATCH.
func TestRecordWithoutMemoryDedupesThroughTheAPI(t *testing.T) {
	api, rec := fakeRecorder(t)
	ev := Event{Type: EventWarning, Reason: "MaxReplicasReached", Message: "maxReplicas 8 blocks a needed scale-up to 11"}
	for i := 1; i <= 3; i++ {
		res, err := rec.Record(context.Background(), deploy, ev, t0.Add(time.Duration(i)*time.Minute), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Count != int32(i) {
			t.Errorf("record %d: count %d", i, res.Count)
		}
	}
	if got := verbs(api.Requests()); got != "POST,POST,GET,PATCH,POST,GET,PATCH" {
		t.Errorf("requests %s", got)
	}
	if api.Count("events") != 1 {
		t.Errorf("%d events, want 1", api.Count("events"))
	}
}

func TestRecordAggregatesSimilarEventsLikeClientGo(t *testing.T) {
	api, rec := fakeRecorder(t)
	mem := &EventMemory{}
	at := t0
	var last RecordResult
	for i := 1; i <= 12; i++ {
		at = at.Add(30 * time.Second)
		res, err := rec.Record(context.Background(), deploy, Event{Type: EventNormal, Reason: ReasonScaledUp, Message: fmt.Sprintf("New size: %d", i+1)}, at, mem)
		if err != nil {
			t.Fatal(err)
		}
		if res.Aggregated != (i >= AggregateMaxEvents) {
			t.Errorf("event %d: aggregated=%v", i, res.Aggregated)
		}
		last = res
	}
	// 9 single events, then one combined event counting the 10th to 12th.
	if api.Count("events") != AggregateMaxEvents || last.Count != 3 {
		t.Errorf("%d events, combined count %d; want %d and 3", api.Count("events"), last.Count, AggregateMaxEvents)
	}
	o, _ := api.Object("events", "inference", last.Name)
	if o["message"] != "(combined from similar events): New size: 13" {
		t.Errorf("combined message %q", o["message"])
	}
	// Another reason is not combined with these.
	if res, _ := rec.Record(context.Background(), deploy, Event{Type: EventNormal, Reason: ReasonScaledDown, Message: "New size: 5"}, at, mem); res.Aggregated {
		t.Error("ScaledDown was combined with ScaledUp")
	}
	// Quiet for longer than the interval: messages stand alone again.
	res, err := rec.Record(context.Background(), deploy, Event{Type: EventNormal, Reason: ReasonScaledUp, Message: "New size: 20"}, at.Add(AggregateInterval+time.Second), mem)
	if err != nil || res.Aggregated || res.Action != ActionCreated {
		t.Errorf("after a quiet interval: %+v %v", res, err)
	}
}

func TestSpamFilterBoundsEventsPerObjectAndReason(t *testing.T) {
	api, rec := fakeRecorder(t)
	mem := &EventMemory{}
	ev := Event{Type: EventNormal, Reason: ReasonScaledDown, Message: "New size: 3"}
	filtered := 0
	for i := 0; i < SpamBurst+5; i++ {
		res, err := rec.Record(context.Background(), deploy, ev, t0.Add(time.Duration(i)*time.Second), mem)
		if err != nil {
			t.Fatal(err)
		}
		if res.Action == ActionFiltered {
			filtered++
		}
	}
	if filtered != 5 {
		t.Errorf("filtered %d of %d, want 5", filtered, SpamBurst+5)
	}
	if n := len(api.Requests()); n != SpamBurst {
		t.Errorf("%d requests, want %d (a filtered event sends nothing)", n, SpamBurst)
	}
	// An alert is not silenced by the scale events' flood.
	if res, err := rec.Record(context.Background(), deploy, Event{Type: EventWarning, Reason: "StuckPods", Message: "2 pods not ready after 15m"}, t0.Add(31*time.Second), mem); err != nil || res.Action != ActionCreated {
		t.Errorf("alert after the flood: %+v %v", res, err)
	}
	// The bucket refills at one event per 5 minutes.
	at := t0.Add(29*time.Second + 5*time.Minute)
	if res, _ := rec.Record(context.Background(), deploy, ev, at, mem); res.Action != ActionPatched {
		t.Errorf("after 5 min: %+v", res)
	}
	if res, _ := rec.Record(context.Background(), deploy, ev, at.Add(time.Second), mem); res.Action != ActionFiltered {
		t.Errorf("right after: %+v", res)
	}
}

func TestRecordRecreatesAnExpiredEventAndSurvivesAMemoryRoundTrip(t *testing.T) {
	api, rec := fakeRecorder(t)
	mem := &EventMemory{}
	ev := Event{Type: EventNormal, Reason: ReasonScaledUp, Message: "New size: 4"}
	first, err := rec.Record(context.Background(), deploy, ev, t0, mem)
	if err != nil {
		t.Fatal(err)
	}
	// The memory travels in the state between processes.
	b, err := json.Marshal(mem)
	if err != nil {
		t.Fatal(err)
	}
	var mem2 EventMemory
	if err := json.Unmarshal(b, &mem2); err != nil {
		t.Fatal(err)
	}
	api.Requests()
	if res, err := rec.Record(context.Background(), deploy, ev, t0.Add(time.Minute), &mem2); err != nil || res.Count != 2 || verbs(api.Requests()) != "PATCH" {
		t.Errorf("after the round trip: %+v %v", res, err)
	}
	api.Delete("events", "inference", first.Name) // its TTL ran out
	res, err := rec.Record(context.Background(), deploy, ev, t0.Add(2*time.Hour), &mem2)
	if err != nil || res.Action != ActionCreated || res.Count != 1 || verbs(api.Requests()) != "PATCH,POST" {
		t.Errorf("after expiry: %+v %v", res, err)
	}
	if mem2.Logged[first.Name].First != t0.Add(2*time.Hour) {
		t.Errorf("memory of the recreated event: %+v", mem2.Logged[first.Name])
	}
}

func TestRecordReturnsAPIErrorsAndRejectsBadInput(t *testing.T) {
	api, rec := fakeRecorder(t)
	mem := &EventMemory{}
	api.FailNext(http.MethodPost, http.StatusForbidden, 1)
	ev := Event{Type: EventNormal, Reason: ReasonScaledUp, Message: "x"}
	if _, err := rec.Record(context.Background(), deploy, ev, t0, mem); err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "ScaledUp") {
		t.Errorf("forbidden: %v", err)
	}
	if len(mem.Logged) != 0 {
		t.Errorf("a failed create is remembered: %+v", mem.Logged)
	}
	api.FailNext(http.MethodGet, http.StatusForbidden, 1)
	if _, err := rec.Record(context.Background(), deploy, ev, t0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Record(context.Background(), deploy, ev, t0, nil); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("exists but no get: %v", err)
	}
	for name, c := range map[string]struct {
		obj ObjectRef
		ev  Event
	}{
		"no namespace": {ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "x"}, ev},
		"type":         {deploy, Event{Type: "Info", Reason: "ScaledUp"}},
		"reason":       {deploy, Event{Type: EventNormal, Reason: "scaled up"}},
	} {
		if _, err := rec.Record(context.Background(), c.obj, c.ev, t0, mem); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestEventMessagesAreOneBoundedLineAndMemoryIsBounded(t *testing.T) {
	api, rec := fakeRecorder(t)
	mem := &EventMemory{}
	long := strings.Repeat("é", MaxMessageBytes)
	res, err := rec.Record(context.Background(), deploy, Event{Type: EventNormal, Reason: ReasonScaledUp, Message: "a\n  b\t" + long}, t0, mem)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := api.Object("events", "inference", res.Name)
	msg, _ := o["message"].(string)
	if !strings.HasPrefix(msg, "a b é") || len(msg) > MaxMessageBytes || !utf8.ValidString(msg) || !strings.HasSuffix(msg, "…") {
		t.Errorf("message: %d bytes, valid %v, starts %q", len(msg), utf8.ValidString(msg), msg[:10])
	}
	for i := 0; i < 3*MaxMemoryEntries; i++ {
		if _, err := rec.Record(context.Background(), deploy, Event{Type: EventNormal, Reason: fmt.Sprintf("Reason%d", i), Message: "m"}, t0.Add(time.Duration(i)*time.Second), mem); err != nil {
			t.Fatal(err)
		}
	}
	if len(mem.Similar) > MaxMemoryEntries || len(mem.Spam) > MaxMemoryEntries || len(mem.Logged) > MaxMemoryEntries {
		t.Errorf("memory grew to %d/%d/%d entries", len(mem.Similar), len(mem.Spam), len(mem.Logged))
	}
	last := fmt.Sprintf("Reason%d", 3*MaxMemoryEntries-1)
	if _, ok := mem.Spam[hashKey("inferscale", "inferscale-5d8f", "apps/v1", "Deployment", "inference", "vllm", "7c1e-uid", EventNormal, last)]; !ok {
		t.Error("the newest entry was evicted")
	}
}

func TestObjectRefFromTarget(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "metric", "deployment.json"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ObjectRefFromTarget([]byte(gjson.GetBytes(b, "resource").Raw))
	if err != nil || ref != (ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "inference", Name: "llm"}) {
		t.Errorf("ref %+v %v", ref, err)
	}
	if _, err := ObjectRefFromTarget([]byte(`{"kind":"Deployment","metadata":{"name":"x"}}`)); err == nil {
		t.Error("a target without namespace and apiVersion: accepted")
	}
}

func TestPatchPodAnnotations(t *testing.T) {
	api := kubefake.New(t)
	c := New(api.URL(), "", api.CertPool(), 2*time.Second, "inference")
	api.AddPod("inference", "vllm-1", map[string]string{"keep": "me", "old": "x"})
	cost := "-100"
	err := c.PatchPodAnnotations(context.Background(), "inference", "vllm-1", map[string]*string{DeletionCostAnnotation: &cost, "old": nil})
	if err != nil {
		t.Fatal(err)
	}
	reqs := api.Requests()
	if verbs(reqs) != "PATCH" || reqs[0].Path != "/api/v1/namespaces/inference/pods/vllm-1" || reqs[0].ContentType != "application/merge-patch+json" {
		t.Fatalf("requests %+v", reqs)
	}
	if want := `{"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"-100","old":null}}}`; string(reqs[0].Body) != want {
		t.Errorf("body %s, want %s", reqs[0].Body, want)
	}
	o, _ := api.Object("pods", "inference", "vllm-1")
	ann := o["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ann["keep"] != "me" || ann[DeletionCostAnnotation] != "-100" || ann["old"] != nil {
		t.Errorf("annotations after the patch: %v", ann)
	}
	if err := c.PatchPodAnnotations(context.Background(), "inference", "vllm-1", nil); err != nil || len(api.Requests()) != 0 {
		t.Errorf("an empty patch must send nothing: %v", err)
	}
	if err := c.PatchPodAnnotations(context.Background(), "inference", "gone", map[string]*string{"a": &cost}); !IsNotFound(err) {
		t.Errorf("missing pod: %v", err)
	}
	for _, bad := range []struct{ ns, pod, key string }{{"", "p", "a"}, {"ns", "", "a"}, {"ns", "p", "a b"}, {"ns", "p", ""}} {
		if err := c.PatchPodAnnotations(context.Background(), bad.ns, bad.pod, map[string]*string{bad.key: &cost}); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}
