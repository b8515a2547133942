package inferscale

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/scaler"
)

func TestParseEvaluationFollowsCPA(t *testing.T) {
	for in, want := range map[string]int{
		`{"targetReplicas":7}`:                      7,
		`{"TargetReplicas":7,"reasons":["x"]}`:      7,
		"  {\"targetReplicas\":3}\n":                3,
		`{}`:                                        0,
		`{"targetReplicas":-2,"currentReplicas":1}`: -2,
	} {
		got, err := ParseEvaluation([]byte(in))
		if err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{`{"targetReplicas":3.5}`, `{"targetReplicas":"3"}`, `log line` + "\n" + `{"targetReplicas":1}`, `{"targetReplicas":1}{}`, ``} {
		if _, err := ParseEvaluation([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPostEvaluateClampsAndStabilisesLikeCPA(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := postEvaluate{}
	if got := p.apply(50, 3, 1, 10, t0); got != 10 {
		t.Errorf("clamp high: %d", got)
	}
	if got := p.apply(-1, 3, 2, 10, t0); got != 2 {
		t.Errorf("clamp low: %d", got)
	}
	if got := p.apply(5, 0, 1, 10, t0); got != 0 {
		t.Errorf("spec 0 with min 1 is 'disabled': got %d", got)
	}
	s := postEvaluate{window: 60 * time.Second}
	seq := []struct {
		at     int
		target int
		want   int
	}{{0, 8, 8}, {15, 3, 8}, {45, 4, 8}, {61, 2, 4}, {110, 2, 2}}
	for _, c := range seq {
		if got := s.apply(c.target, 5, 1, 10, t0.Add(time.Duration(c.at)*time.Second)); got != c.want {
			t.Errorf("t=%d target %d: got %d, want %d (max over 60 s)", c.at, c.target, got, c.want)
		}
	}
}

func TestPodJSONAndReportMatchTheLifecycle(t *testing.T) {
	created := time.Date(2026, 1, 5, 0, 0, 10, 400e6, time.UTC)
	ready := created.Add(61 * time.Second)
	now := ready.Add(30 * time.Second)
	m := &signal.Pod{Name: "llm-00003", Waiting: signal.F(2), Running: signal.F(9), KVCacheUsage: signal.F(0.25),
		GPU: &signal.GPU{Utilization: signal.F(0.6)}, RequestsTotal: signal.F(40)}
	for _, c := range []struct {
		pv               scaler.PodView
		ready, term, ip  bool
		waiting, erronly bool
	}{
		{pv: scaler.PodView{Name: "llm-00001", Phase: scaler.Pending, CreatedAt: created, Serial: 1}},
		{pv: scaler.PodView{Name: "llm-00002", Phase: scaler.Starting, CreatedAt: created, Serial: 2}, ip: true},
		{pv: scaler.PodView{Name: "llm-00003", Phase: scaler.Ready, CreatedAt: created, ReadyAt: ready, Serial: 3, Metrics: m}, ready: true, ip: true, waiting: true},
		{pv: scaler.PodView{Name: "llm-00004", Phase: scaler.Ready, CreatedAt: created, ReadyAt: ready, Serial: 4}, ready: true, ip: true, erronly: true},
		{pv: scaler.PodView{Name: "llm-00005", Phase: scaler.Draining, CreatedAt: created, ReadyAt: ready, DeletedAt: now, Serial: 5, Metrics: m}, term: true, ip: true, waiting: true},
	} {
		raw, err := PodJSON(c.pv)
		if err != nil {
			t.Fatal(err)
		}
		info, err := podinfo.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.pv.Name, err)
		}
		if info.Ready != c.ready || info.Terminating != c.term || info.PodIP.IsValid() != c.ip {
			t.Errorf("%s: ready %v terminating %v ip %v", c.pv.Name, info.Ready, info.Terminating, info.PodIP)
		}
		if c.ip && info.PodIP != PodIP(c.pv.Serial) {
			t.Errorf("%s: IP %s, want %s", c.pv.Name, info.PodIP, PodIP(c.pv.Serial))
		}
		rep, err := PodReport(c.pv, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := rep.Validate(); err != nil {
			t.Errorf("%s: invalid report: %v", c.pv.Name, err)
		}
		p := rep.Pods[0]
		if (p.Waiting != nil) != c.waiting || (p.Error != "") != c.erronly {
			t.Errorf("%s: waiting %v error %q", c.pv.Name, p.Waiting, p.Error)
		}
		if c.ready && (p.StartupSeconds == nil || *p.StartupSeconds != 61) {
			// Kubernetes timestamps have whole seconds: 00:00:10 → 00:01:11.
			t.Errorf("%s: startup %v, want 61 s", c.pv.Name, p.StartupSeconds)
		}
	}
	if PodIP(0).String() != "127.1.0.1" || PodIPIn(9, 300).String() != "127.9.1.45" {
		t.Errorf("pod IPs %s %s", PodIP(0), PodIPIn(9, 300))
	}
}

// TestPodJSONCarriesDeletionCostAndGrace checks the faithful-mode pod: a
// pod-deletion-cost shows in metadata.annotations (absent when 0), a
// deleted pod's deletionGracePeriodSeconds is its grace period, and UIDs
// are distinct.
func TestPodJSONCarriesDeletionCostAndGrace(t *testing.T) {
	created := time.Date(2026, 1, 5, 0, 0, 10, 0, time.UTC)
	decode := func(pv scaler.PodView) map[string]any {
		raw, err := PodJSON(pv)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Metadata map[string]any `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Metadata
	}
	marked := decode(scaler.PodView{Name: "llm-00001", Phase: scaler.Ready, CreatedAt: created, ReadyAt: created.Add(time.Minute), Serial: 1, DeletionCost: -7})
	ann, _ := marked["annotations"].(map[string]any)
	if ann[scaler.DeletionCostAnnotation] != "-7" {
		t.Errorf("annotations %v, want %s=-7", marked["annotations"], scaler.DeletionCostAnnotation)
	}
	plain := decode(scaler.PodView{Name: "llm-00002", Phase: scaler.Ready, CreatedAt: created, ReadyAt: created.Add(time.Minute), Serial: 2})
	if _, ok := plain["annotations"]; ok {
		t.Errorf("a pod without a cost has annotations %v", plain["annotations"])
	}
	gone := decode(scaler.PodView{Name: "llm-00003", Phase: scaler.Draining, CreatedAt: created, ReadyAt: created.Add(time.Minute),
		DeletedAt: created.Add(time.Hour), DeletionGraceSeconds: 630, Serial: 3})
	if gone["deletionGracePeriodSeconds"] != 630.0 || gone["deletionTimestamp"] != "2026-01-05T01:00:10Z" {
		t.Errorf("deleted pod metadata %v", gone)
	}
	if marked["uid"] == plain["uid"] || marked["uid"] != scaler.PodUID(1) {
		t.Errorf("uids %v %v", marked["uid"], plain["uid"])
	}
}
