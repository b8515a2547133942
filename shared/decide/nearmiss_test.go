package decide

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/cpa"
)

// A misspelt setting in the environment (queueTargte for queueTarget) is
// reported on stderr and as a Warning Event UnknownSetting, and the
// decision is the one the same tick makes without it.
func TestMisspeltSettingIsReportedAndChangesNothing(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	run := func(extra map[string]string, environ []string) (cpa.EvaluateOutput, *fakeCluster, string) {
		dir := t.TempDir()
		m := map[string]string{"stateFile": filepath.Join(dir, "s.json"), "configPath": filepath.Join(dir, "none.yaml"),
			"INFERSCALE_NOW": now.Format(time.RFC3339)}
		for k, v := range extra {
			m[k] = v
		}
		f := &fakeCluster{patches: map[string]*string{}}
		var out, logs bytes.Buffer
		err := Run(context.Background(), Process{Stdin: bytes.NewReader(idleInput(t, 4, 4, now, 1)), Stdout: &out,
			Lookup: env(m), Environ: func() []string { return environ }, Log: slog.New(slog.NewTextHandler(&logs, nil)),
			api: &cluster{pods: f, events: f, log: quietLog()}})
		if err != nil {
			t.Fatal(err)
		}
		var o cpa.EvaluateOutput
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		return o, f, logs.String()
	}
	plain, _, _ := run(nil, []string{"PATH=/bin"})
	typo, f, logs := run(map[string]string{"queueTargte": "0.01"}, []string{"PATH=/bin", "queueTargte=0.01"})
	if typo.TargetReplicas != plain.TargetReplicas {
		t.Errorf("the misspelt setting changed the decision: %d, without it %d", typo.TargetReplicas, plain.TargetReplicas)
	}
	if !strings.Contains(logs, "unknown setting ignored") || !strings.Contains(logs, "didYouMean=queueTarget") {
		t.Errorf("no stderr line for the misspelt setting: %q", logs)
	}
	found := false
	for _, ev := range f.events {
		if ev.Reason == ReasonUnknownSetting && strings.Contains(ev.Message, "queueTargte") && strings.Contains(ev.Message, "queueTarget") {
			found = true
		}
	}
	if !found {
		t.Errorf("no %s Warning Event: %+v", ReasonUnknownSetting, f.events)
	}
}
