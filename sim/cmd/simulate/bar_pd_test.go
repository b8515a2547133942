package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/sim/bar"
	"github.com/inferscale/inferscale/sim/runner"
)

func TestBarPDRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-pd", "-policy", "kpa", "-pd-decode", "kpa"}, "-pd with -policy and -pd-prefill or -pd-decode"},
		{[]string{"-pd", "-policy", "inferscale:role=decode"}, "-policy: inferscale settings"},
		{[]string{"-pd", "-policy", "inferscale:nosuch=1"}, "nosuch"},
		{[]string{"-pd", "-stress"}, "-pd with -stress"},
		{[]string{"-pd", "-day"}, "-pd with -day"},
		{[]string{"-pd", "-heldout"}, "-pd with -heldout"},
		{[]string{"-pd-prefill", "keda-queue"}, "-pd-prefill needs -pd"},
		{[]string{"-pd-decode", "keda-queue"}, "-pd-decode needs -pd"},
		{[]string{"-pd-peers=false"}, "-pd-peers needs -pd"},
		{[]string{"-pd", "-pd-prefill", "nosuch"}, "-pd-prefill"},
		{[]string{"-pd", "-pd-prefill", "ratio:k=1"}, "a decode policy"},
		{[]string{"-pd", "-pd-decode", "ratio"}, "want k="},
		{[]string{"-pd", "-pd-decode", "keda-queue;kpa"}, "want one policy each"},
		{[]string{"-pd", "-pd-decode", "static"}, "cheapest static pair"},
		{[]string{"-pd", "-only", "nosuch"}, "keeps no P/D cell"},
		{[]string{"-pd", "-speeds", "0"}, "-speeds"},
		{[]string{"-pd", "stray"}, "unexpected arguments"},
		{[]string{"-pd", "-engine", "nosuch"}, "want one of vllm, linear, blis"},
		{[]string{"-engine", "nosuch"}, "want one of vllm, linear, blis"},
	} {
		err := cmdBar(context.Background(), append([]string{"-shared", ".", "-cache", ""}, tc.args...), quietLog())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bar %v: error %v, want one naming %q", tc.args, err, tc.want)
		}
	}
	// Through dispatch, as main sees it: an error, so a non-zero exit.
	if err := dispatch(context.Background(), []string{"bar", "-pd", "-stress", "-shared", "."}, quietLog()); err == nil {
		t.Error("simulate bar -pd -stress: accepted")
	}
}

func TestBarPDPoolsTakeThePolicyWithTheirRole(t *testing.T) {
	sp := runner.Spec{Name: "inferscale", Params: map[string]string{"forecastMiss": "0.1"}}
	if got := orRole("", sp, "prefill"); got != "inferscale:forecastMiss=0.1,role=prefill" {
		t.Errorf("prefill pool %q, want -policy with role=prefill", got)
	}
	if got := orRole("", runner.Spec{Name: "kpa"}, "decode"); got != "kpa" {
		t.Errorf("decode pool %q, want kpa as it is", got)
	}
	if got := orRole("keda-queue", sp, "decode"); got != "keda-queue" {
		t.Errorf("decode pool %q, want its own flag's", got)
	}
	if len(sp.Params) != 1 {
		t.Errorf("-policy's spec changed: %v", sp.Params)
	}
}

// TestBarPDRunsACellEndToEnd runs the quickest P/D cell (Mooncake's hour
// at GPU speed 2, a few seconds with no cache), writes its report and
// compares it with itself.
func TestBarPDRunsACellEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("replays Mooncake's hour some 40 times")
	}
	shared := testenv.SharedDir(t, filepath.Join("traces", "mooncake_fast25", "conversation_trace.jsonl"))
	path := filepath.Join(t.TempDir(), "pd.json")
	err := dispatch(context.Background(), []string{"bar", "-pd", "-quick", "-speeds", "2", "-only", "mooncake", "-shared", shared,
		"-cache", "", "-j", "1", "-json", path}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := bar.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 0 || len(rep.PDRows) != 1 || rep.PDPolicy != "inferscale:role=prefill + inferscale:itlSLO=0.05s,role=decode" {
		t.Fatalf("report: %d unified rows, %d P/D rows, pair %q; want the one P/D cell of inferscale's pair", len(rep.Rows), len(rep.PDRows), rep.PDPolicy)
	}
	r := rep.PDRows[0]
	if r.Case != "pd/mooncake-conv/s1/gpu×2" || !r.OracleOK || r.StaticPrefill == 0 || len(r.Peers) != 2 || r.GPUHours() <= 0 ||
		r.Verdict.UserBar > 0.99 || r.Verdict.UserBar <= 0 {
		t.Errorf("P/D row %+v", r)
	}
	if r.Static.UserAttainment < r.UserAttainment || r.Static.ITLAttainment < r.ITLAttainment {
		t.Errorf("the static pair %d + %d (%+v) falls short of the policy pair's attainments (%+v)", r.StaticPrefill, r.StaticDecode, r.Static, r.PDFigures)
	}
	var b strings.Builder
	if err := cmdBarDiff([]string{path, path}, &b); err != nil || !strings.Contains(b.String(), "1 cells in both, 0 moved, 1 unchanged") ||
		!strings.Contains(b.String(), "P/D cells passing") {
		t.Errorf("bar-diff of a P/D report with itself: %v\n%s", err, b.String())
	}
}
